/**
 * The real stack for end-to-end tests, each part its own process on free loopback
 * ports so a test can kill one: nats-server (JetStream), the simulated IOC, the
 * EPICS adapter, the simulated PV Access server and its adapter, the simulated
 * Tango device and its adapter, the history-block writer (`synoptic rollup`), and a gateway serving ui/dist. Writes are granted by a JWT (HS256)
 * that `token()` signs; anonymous sessions stay read-only.
 */
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Proc, freePort } from './procs';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const VENV = join(ROOT, '.venv/bin');
const SECRET = 'e2e-secret-not-for-production';

/** EPICS_CA_* for a private CA port on loopback (both the IOC and its clients). */
function caEnv(port: number): Record<string, string> {
  return {
    EPICS_CA_SERVER_PORT: String(port),
    EPICS_CAS_SERVER_PORT: String(port),
    EPICS_CA_REPEATER_PORT: String(port + 1),
    EPICS_CAS_BEACON_PORT: String(port + 1),
    EPICS_CA_ADDR_LIST: '127.0.0.1',
    EPICS_CA_AUTO_ADDR_LIST: 'NO',
    EPICS_CAS_INTF_ADDR_LIST: '127.0.0.1',
    EPICS_CAS_BEACON_ADDR_LIST: '127.0.0.1',
    EPICS_CAS_AUTO_BEACON_ADDR_LIST: 'NO',
    EPICS_CA_MAX_ARRAY_BYTES: '10000000',
  };
}

/** EPICS_PVA(S)_* for a private PV Access port on loopback (the server and its clients). */
function pvaEnv(port: number): Record<string, string> {
  return {
    EPICS_PVA_SERVER_PORT: String(port),
    EPICS_PVA_BROADCAST_PORT: String(port),
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVAS_SERVER_PORT: String(port),
    EPICS_PVAS_BROADCAST_PORT: String(port),
    EPICS_PVAS_INTF_ADDR_LIST: '127.0.0.1',
    EPICS_PVAS_BEACON_ADDR_LIST: '127.0.0.1',
    EPICS_PVAS_AUTO_BEACON_ADDR_LIST: 'NO',
  };
}

/** Two consecutive free ports (CA uses port and port + 1). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p < 65000) return p;
  }
}

export class Stack {
  readonly dir = mkdtempSync(join(tmpdir(), 'synoptic-e2e-'));
  natsPort = 0;
  httpPort = 0;
  caPort = 0;
  nats!: Proc;
  ioc!: Proc;
  adapter!: Proc;
  tango!: Proc;
  tangoAdapter!: Proc;
  pvaPort = 0;
  pvaSim!: Proc;
  pvaAdapter!: Proc;
  gateway!: Proc;
  rollup!: Proc;
  /** the alarm service, once a test started it (`startAlarms`) */
  alarms?: Proc;
  tangoPort = 0;
  /** counter records of the simulated IOC (the counters screen shows 100) */
  readonly records = Number(process.env.E2E_IOC_RECORDS ?? 5);
  readonly prefix = 'DEMO:'; // the demo screens' PV names (the private CA port isolates the IOC)

  get natsUrl(): string {
    return `nats://127.0.0.1:${this.natsPort}`;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  /** An attribute of the simulated Tango device as a channel URI. */
  attr(name: string): string {
    return `tango://127.0.0.1:${this.tangoPort}/sim/test/1/${name}`;
  }

  /** A PV of the simulated PV Access server as a channel URI. */
  pva(name: string): string {
    return `pva://${this.prefix}${name}`;
  }

  /** A PV of the simulated IOC as a channel URI. */
  pv(name: string): string {
    return `ca://${this.prefix}${name}`;
  }

  /** Start every part; a part that does not start stops those already started. */
  async start(): Promise<this> {
    try {
      this.natsPort = await freePort();
      this.httpPort = await freePort();
      this.caPort = await freePortPair();
      await this.restartNats();
      await this.startIoc();
      await this.startAdapter();
      await this.startPva();
      await this.startTango();
      this.copyScreens();
      await this.busInit();
      await this.startRollup();
      await this.startGateway();
    } catch (err) {
      await this.stop();
      throw err;
    }
    return this;
  }

  /** The EPICS adapter (a new process: a new epoch on the bus). */
  async startAdapter(): Promise<void> {
    const config = join(this.dir, 'epics.yaml');
    writeFileSync(config, `id: e2e-epics\nchannels: []\nnats:\n  url: ${this.natsUrl}\n`);
    this.adapter = new Proc('adapter', [join(VENV, 'synoptic'), 'adapter', 'epics', '--config', config], { ...caEnv(this.caPort), SYNOPTIC_NATS_URL: this.natsUrl });
    await this.adapter.waitFor(/adapter \S+ ready/, 60_000);
  }

  /**
   * The simulated PV Access server (the IOC's channels as pva://DEMO:…, a table,
   * an enum and a 1024×1024 16-bit image at 10 Hz) and the PVA adapter, which
   * monitors only what screens ask for.
   */
  async startPva(): Promise<void> {
    this.pvaPort = await freePort();
    const env = pvaEnv(this.pvaPort);
    this.pvaSim = new Proc('sim-pva', [join(VENV, 'synoptic'), 'sim', 'pva', '--records', String(this.records), '--rate', '10', '--prefix', this.prefix, '--port', String(this.pvaPort), '--image-rate', '10'], env);
    await this.pvaSim.waitFor(/sim pva ready/, 60_000);
    const config = join(this.dir, 'pva.yaml');
    writeFileSync(config, `id: e2e-pva\nchannels: []\nnats:\n  url: ${this.natsUrl}\n`);
    this.pvaAdapter = new Proc('adapter-pva', [join(VENV, 'synoptic'), 'adapter', 'pva', '--config', config], { ...env, SYNOPTIC_NATS_URL: this.natsUrl });
    await this.pvaAdapter.waitFor(/adapter \S+ ready/, 60_000);
  }

  /** The simulated Tango device (database-less) and the Tango adapter. */
  async startTango(): Promise<void> {
    this.tangoPort = await freePort();
    this.tango = new Proc('tango', [join(VENV, 'synoptic'), 'sim', 'tango', '--port', String(this.tangoPort)]);
    await this.tango.waitFor(/Ready to accept request/, 60_000);
    const config = join(this.dir, 'tango.yaml');
    writeFileSync(config, `id: e2e-tango\nchannels: []\nnats:\n  url: ${this.natsUrl}\ntango:\n  no_database_hosts: ['127.0.0.1:${this.tangoPort}']\n`);
    this.tangoAdapter = new Proc('adapter-tango', [join(VENV, 'synoptic'), 'adapter', 'tango', '--config', config], { SYNOPTIC_NATS_URL: this.natsUrl });
    await this.tangoAdapter.waitFor(/adapter \S+ ready/, 60_000);
  }

  /** The demo screens, with the demo's Tango port replaced by this stack's. */
  copyScreens(): void {
    mkdirSync(join(this.dir, 'screens'));
    for (const f of readdirSync(join(ROOT, 'screens')).filter((n) => n.endsWith('.json'))) {
      const text = readFileSync(join(ROOT, 'screens', f), 'utf8').replaceAll('tango://127.0.0.1:10000/', `tango://127.0.0.1:${this.tangoPort}/`);
      writeFileSync(join(this.dir, 'screens', f), text);
    }
  }

  /** (Re)start nats-server on the stack's port, JetStream data kept in the stack's folder. */
  async restartNats(): Promise<void> {
    const conf = join(this.dir, 'nats.conf');
    writeFileSync(conf, 'max_payload: 8388608\n'); // images of several MB, as deployed
    this.nats = new Proc('nats', [join(VENV, 'nats-server'), '-js', '-a', '127.0.0.1', '-p', String(this.natsPort), '-sd', join(this.dir, 'js'), '-c', conf]);
    await this.nats.waitFor(/Server is ready/, 20_000);
  }

  async startIoc(): Promise<void> {
    this.ioc = new Proc('ioc', [join(VENV, 'synoptic'), 'sim', 'ioc', '--records', String(this.records), '--rate', '10', '--prefix', this.prefix, '--port', String(this.caPort), '--fill-rate', '1'], caEnv(this.caPort)); // the 100k-point waveform moves, as in `make demo`
    await this.ioc.waitFor(/sim ioc ready/, 60_000);
  }

  /** `synoptic bus init`: the history stream (trends open with history) and the screens bucket. */
  async busInit(): Promise<void> {
    const init = new Proc('bus-init', [join(VENV, 'synoptic'), 'bus', 'init', '--nats', this.natsUrl, '--screens', join(this.dir, 'screens')]);
    const code = await new Promise<number | null>((resolve) => init.child.once('close', resolve));
    if (code !== 0) throw new Error(`bus init failed (${code})\n${init.output}`);
  }

  /** `synoptic rollup`: trends read history as blocks of values (ADR 0027). */
  async startRollup(): Promise<void> {
    this.rollup = new Proc('rollup', [join(VENV, 'synoptic'), 'rollup', '--nats', this.natsUrl]);
    await this.rollup.waitFor(/rollup ready/, 60_000);
  }

  async startGateway(): Promise<void> {
    this.gateway = new Proc('gateway', [
      join(VENV, 'synoptic'), 'gateway', '--host', '127.0.0.1', '--port', String(this.httpPort), '--nats', this.natsUrl,
      '--jwt-secret', SECRET, '--allow-anonymous', '--screens', join(this.dir, 'screens'), '--ui', join(ROOT, 'ui/dist'),
    ]);
    await this.gateway.waitFor(/ready on/, 60_000);
  }

  /**
   * The alarm service (`synoptic alarms run`) with `tree` (YAML or JSON) seeding the
   * tree bucket; `noDataAfter`: seconds before a listed channel nothing is heard of
   * shows no data.
   */
  async startAlarms(tree: string, noDataAfter = 600): Promise<void> {
    const file = join(this.dir, 'alarm-tree.yaml');
    writeFileSync(file, tree);
    this.alarms = new Proc('alarms', [join(VENV, 'synoptic'), 'alarms', 'run', '--nats', this.natsUrl, '--tree', file, '--no-data-after', String(noDataAfter)]);
    await this.alarms.waitFor(/alarm service \S+ ready/, 60_000);
  }

  /** `synoptic put` from outside the browser (a caput through the bus). */
  async put(uri: string, value: string): Promise<string> {
    const p = new Proc('put', [join(VENV, 'synoptic'), 'put', '--nats', this.natsUrl, uri, value]);
    await new Promise<void>((res) => p.child.once('exit', () => res()));
    if (p.child.exitCode !== 0) throw new Error(`synoptic put ${uri} ${value} failed (${p.child.exitCode}): ${p.output}`);
    return p.output;
  }

  /**
   * Python run against the stack's bus (as another tool may): `body` runs with `nc` connected and
   * `sys.argv[2:]` = `args`; its output, or an error saying `what` failed.
   */
  private async onTheBus(what: string, imports: string[], body: string[], args: string[]): Promise<string> {
    const code = [
      'import asyncio, sys',
      'from synoptic_bus.connect import connect',
      ...imports,
      'async def main():',
      '    nc = await connect(sys.argv[1], name="e2e-tool")',
      ...body.map((line) => `    ${line}`),
      '    await nc.close()',
      'asyncio.run(main())',
    ].join('\n');
    const p = new Proc('bus-tool', [join(VENV, 'python'), '-c', code, this.natsUrl, ...args]);
    await new Promise<void>((res) => p.child.once('exit', () => res()));
    if (p.child.exitCode !== 0) throw new Error(`${what} failed (${p.child.exitCode}): ${p.output}`);
    return p.output;
  }

  /** A value written straight into the screens bucket, past the gateway's checks (as another tool may): its revision. */
  async putRawScreen(name: string, value: unknown): Promise<number> {
    const output = await this.onTheBus(
      `writing screen ${name}`,
      ['from synoptic_bus.screens import ScreenBucket, ScreensConfig'],
      ['bucket = await ScreenBucket.open(nc, ScreensConfig())', 'print("revision", await bucket.kv.put(sys.argv[2], sys.argv[3].encode()))'],
      [name, JSON.stringify(value)],
    );
    const m = /revision (\d+)/.exec(output);
    if (!m) throw new Error(`writing screen ${name}: no revision in ${output}`);
    return Number(m[1]);
  }

  /** A channel's value and metadata published straight to the bus, as an adapter publishes a channel it starts serving. */
  async announce(uri: string, desc: string): Promise<void> {
    await this.onTheBus(
      `announcing ${uri}`,
      ['from synoptic_gateway.testing import Publisher'],
      ['publisher = Publisher(nc)', 'await publisher.meta(sys.argv[2], unit="mbar", desc=sys.argv[3])', 'await publisher.value(sys.argv[2], 1.5)', 'await nc.flush()'],
      [uri, desc],
    );
  }

  /** `synoptic get` from outside the browser: the channel's last value as printed. */
  async get(uri: string): Promise<string> {
    const p = new Proc('get', [join(VENV, 'synoptic'), 'get', '--nats', this.natsUrl, uri]);
    await new Promise<void>((res) => p.child.once('exit', () => res()));
    return p.output;
  }

  /** A JWT granting read of every channel, write of `write`, editing of the screens `screens` and acknowledging the alarms `ack` (patterns). */
  token(sub = 'e2e-operator', write: string[] = ['*'], screens: string[] = [], ack: string[] = []): string {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { sub, read: ['*'], write, ...(screens.length ? { screens } : {}), ...(ack.length ? { ack } : {}), exp: Math.floor(Date.now() / 1000) + 3600 };
    const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
    return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
  }

  async stop(): Promise<void> {
    for (const p of [this.gateway, this.alarms, this.rollup, this.tangoAdapter, this.tango, this.pvaAdapter, this.pvaSim, this.adapter, this.ioc, this.nats]) await p?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
