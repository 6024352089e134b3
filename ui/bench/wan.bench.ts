/**
 * `make bench-wan`: the demo screens as a remote viewer sees them. Real Chromium
 * with network emulation (CDP Network.emulateNetworkConditions: round trip and
 * download rate) against the real stack of the end-to-end tests (nats-server,
 * simulated IOC with its moving 100 000-point waveform, Tango device, adapters,
 * gateway serving ui/dist). Per screen and link: time to the first live value on a
 * first visit (empty cache) and a repeat visit (cached files, same browser), the
 * bytes each moved (static files, API, WebSocket), and the WebSocket bytes per
 * second while watching. Prints one JSON document (docs/benchmarks.md, "Remote
 * viewers") with the goals for the EPICS screen at 100 ms / 10 Mbit/s. Chromium's
 * emulation delays each HTTP request and the WebSocket handshake by the round trip
 * and throttles every byte (WebSocket frames too), but not frames on an open
 * socket: `*_plus_rtt_s` adds the subscription's round trip, and the goals are
 * judged on it.
 */
import { test, type Browser, type CDPSession, type Page } from '@playwright/test';
import { Stack } from '../tests/e2e/stack';

/** [name, round trip ms, download kbit/s, upload kbit/s] */
const LINKS: [string, number, number, number][] = [
  ['100ms-10Mbit', 100, 10_000, 5_000],
  ['300ms-2Mbit', 300, 2_000, 1_000],
];
const SCREENS = (process.env.BENCH_WAN_SCREENS ?? 'epics-demo,tango-demo').split(',');
const WATCH_S = Number(process.env.BENCH_WAN_WATCH_S ?? 10);
/** the goals on the EPICS demo screen at 100 ms / 10 Mbit/s */
const GOALS = { first_visit_s: 1.2, repeat_visit_s: 0.6, first_visit_static_kb: 250, watching_kb_per_s: 50 };

interface Bytes {
  static: number;
  api: number;
  ws: number;
}

/** Counts what crosses the emulated link, by kind (encoded bytes: as sent). */
class Meter {
  bytes: Bytes = { static: 0, api: 0, ws: 0 };
  private urls = new Map<string, string>();

  constructor(cdp: CDPSession) {
    cdp.on('Network.responseReceived', (e) => this.urls.set(e.requestId, e.response.url));
    cdp.on('Network.loadingFinished', (e) => {
      const url = this.urls.get(e.requestId) ?? '';
      this.bytes[/\/api\//.test(url) ? 'api' : 'static'] += e.encodedDataLength;
    });
    cdp.on('Network.webSocketFrameReceived', (e) => {
      const p = e.response.payloadData;
      // binary frames come base64-encoded
      this.bytes.ws += e.response.opcode === 2 ? Math.floor((p.length * 3) / 4) - (p.endsWith('==') ? 2 : p.endsWith('=') ? 1 : 0) : p.length;
    });
  }

  take(): Bytes {
    const out = this.bytes;
    this.bytes = { static: 0, api: 0, ws: 0 };
    return out;
  }
}

/** ms after navigation start when the first live value was on screen (a label/LED/form cell with a value, not stale). */
function firstValueProbe(): void {
  const w = window as unknown as { __firstValue?: number };
  const seen = () => document.querySelector('[data-role=value][data-stale=false]');
  const check = () => {
    if (w.__firstValue === undefined && seen()) w.__firstValue = performance.now();
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

async function visit(page: Page, meter: Meter, url: string | null): Promise<{ first_value_s: number; bytes: Bytes }> {
  meter.take();
  if (url) await page.goto(url, { waitUntil: 'commit' });
  else await page.reload({ waitUntil: 'commit' }); // the repeat visit: a new document, the cache kept
  await page.waitForFunction(() => (window as unknown as { __firstValue?: number }).__firstValue !== undefined, null, { timeout: 60_000, polling: 20 });
  const ms = await page.evaluate(() => (window as unknown as { __firstValue: number }).__firstValue);
  // the rest of the page (charts' code, the arrays) before the bytes are counted
  await page.waitForLoadState('load');
  await page.locator('.grid[data-ready=true]').waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1500); // let the plots' own subscriptions and their first values come in
  return { first_value_s: Math.round(ms) / 1000, bytes: meter.take() };
}

/** Points the simulated IOC's circular buffer (`WF1K`, the 10 Hz sine's last values) holds when full. */
const WF1K_FULL = 1000;

/**
 * Wait until the IOC's circular buffer is full: it grows by 10 points a second from
 * the IOC's start, so for its first 100 s a screen costs less than it does for as
 * long as `make demo` then runs (8 kB per update at 10 Hz when full).
 */
async function steadyState(browser: Browser, stack: Stack): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/#/screen/epics-demo`);
  const full = `[data-widget="spectrum"][data-channel="${stack.pv('WF1K')}"] .w-spectrum[data-extent^="0,${WF1K_FULL - 1},"]`;
  await page.locator(full).waitFor({ timeout: 180_000 });
  await context.close();
}

const kb = (b: Bytes) => ({ static_kb: Math.round(b.static / 100) / 10, api_kb: Math.round(b.api / 100) / 10, ws_kb: Math.round(b.ws / 100) / 10 });

test('remote viewers', async ({ browser }) => {
  test.setTimeout(900_000);
  process.env.E2E_IOC_RECORDS ??= '100';
  const stack = await new Stack().start();
  const results: Record<string, unknown>[] = [];
  try {
    await steadyState(browser, stack);
    for (const [link, rtt, down, up] of LINKS) {
      for (const screen of SCREENS) {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        const page = await context.newPage();
        await page.addInitScript(firstValueProbe);
        const cdp = await context.newCDPSession(page);
        await cdp.send('Network.enable');
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: rtt,
          downloadThroughput: (down * 1000) / 8,
          uploadThroughput: (up * 1000) / 8,
        });
        const meter = new Meter(cdp);
        const url = `${stack.baseUrl}/#/screen/${screen}`;
        const first = await visit(page, meter, url);
        const repeat = await visit(page, meter, null);
        meter.take();
        await page.waitForTimeout(WATCH_S * 1000);
        const watching = meter.take();
        // Chromium delays HTTP requests and the WebSocket handshake by the round
        // trip, not the frames on an open socket: the subscription's round trip
        // (sub out, snapshot back) is one more on a real link
        const real = (s: number) => Math.round((s + rtt / 1000) * 1000) / 1000;
        results.push({
          link, rtt_ms: rtt, down_kbit_s: down, screen,
          first_visit_s: first.first_value_s, first_visit_plus_rtt_s: real(first.first_value_s),
          ...prefix('first_', kb(first.bytes)),
          repeat_visit_s: repeat.first_value_s, repeat_visit_plus_rtt_s: real(repeat.first_value_s),
          ...prefix('repeat_', kb(repeat.bytes)),
          watching_kb_per_s: Math.round(((watching.ws + watching.api + watching.static) / WATCH_S) / 100) / 10,
        });
        await context.close();
      }
    }
  } finally {
    await stack.stop();
  }
  const epics = results.find((r) => r.screen === 'epics-demo' && r.link === '100ms-10Mbit') as Record<string, number> | undefined;
  const met = epics && {
    first_visit_s: epics.first_visit_plus_rtt_s <= GOALS.first_visit_s,
    repeat_visit_s: epics.repeat_visit_plus_rtt_s <= GOALS.repeat_visit_s,
    first_visit_static_kb: epics.first_static_kb <= GOALS.first_visit_static_kb,
    watching_kb_per_s: epics.watching_kb_per_s <= GOALS.watching_kb_per_s,
  };
  const { cpus, loadavg } = await import('node:os');
  console.log(JSON.stringify({
    benchmark: 'remote viewers: the demo screens over emulated links',
    machine: { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), cpus: cpus().length, load_avg_1m: Math.round(loadavg()[0] * 100) / 100 },
    watch_s: WATCH_S,
    wf1k_points: WF1K_FULL,
    goals_epics_100ms_10mbit: GOALS,
    goals_met: met,
    results,
  }, null, 1));
});

function prefix(p: string, o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [p + k, v]));
}
