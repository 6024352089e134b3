/**
 * Child processes for the end-to-end tests: started with a readiness line to wait
 * for (no sleeps), stopped by PID. The Node twin of synoptic_bus.procs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Ports handed out lately (never twice). */
const given = new Set<number>();

/** Whether `port` can be bound on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A free TCP port on loopback, below the kernel's ephemeral range (32768 up, from
 * which outgoing connections take their local ports: one could take the port of a
 * server still starting, such as Keycloak). As synoptic_bus.procs.free_port.
 */
export async function freePort(): Promise<number> {
  for (let k = 0; k < 200; k++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (!given.has(port) && (await bindable(port))) {
      given.add(port);
      return port;
    }
  }
  throw new Error('no free port below the ephemeral range');
}

/** Children still running: killed by PID if this test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class Proc {
  readonly name: string;
  readonly child: ChildProcess;
  output = '';
  #waiters: { re: RegExp; from: number; resolve: () => void }[] = [];
  #exited: Promise<number | null>;

  constructor(name: string, argv: string[], env: Record<string, string> = {}, cwd?: string) {
    this.name = name;
    this.child = spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, PYTHONUNBUFFERED: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'], // stdin stays open: soft IOCs exit at end of input
    });
    const onData = (chunk: Buffer) => {
      this.output += chunk.toString();
      if (process.env.E2E_ECHO) process.stderr.write(`[${name}] ${chunk}`);
      this.#check();
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    running.add(this.child);
    this.#exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        running.delete(this.child);
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** An offset into the output: `waitFor(re, t, mark())` only looks at what comes after. */
  mark(): number {
    return this.output.length;
  }

  /** Resolve when `re` matches the output (after `from`); reject on timeout or exit. */
  waitFor(re: RegExp, timeoutMs: number, from = 0): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no ${re} within ${timeoutMs} ms\n${this.output.slice(-3000)}`)), timeoutMs);
      const waiter = { re, from, resolve: () => { clearTimeout(timer); resolve(); } };
      this.#waiters.push(waiter);
      void this.#exited.then((code) => {
        if (this.#waiters.includes(waiter)) {
          clearTimeout(timer);
          reject(new Error(`${this.name} exited (${code}) before ${re}\n${this.output.slice(-3000)}`));
        }
      });
      this.#check();
    });
  }

  #check(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.re.test(this.output.slice(w.from))) return true;
      w.resolve();
      return false;
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Send a signal (e.g. SIGSTOP/SIGCONT: a hung process, not a dead one). */
  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.child.kill(sig);
  }

  /** SIGKILL now (a crash); resolves when the process is gone. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGKILL');
    await this.#exited;
  }
}
