/**
 * Browser benchmarks against a real nats-server and gateway fed by synthetic
 * channels (bench/publish.py): screen open time, sustained updates, the breaking
 * rate, and chart-heavy screens. Prints one JSON document (docs/benchmarks.md, "Web UI").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type Page } from '@playwright/test';
import { Proc, freePort } from '../tests/e2e/procs';
import { ROOT } from '../tests/e2e/stack';

const VENV = join(ROOT, '.venv/bin');
const N = Number(process.env.BENCH_CHANNELS ?? 1000);
const OPEN_RUNS = Number(process.env.BENCH_OPEN_RUNS ?? 7);
const SUSTAIN_S = Number(process.env.BENCH_SUSTAIN_S ?? 20);
const STEP_S = Number(process.env.BENCH_STEP_S ?? 10);
const RATES = (process.env.BENCH_RATES ?? '20,40,80').split(',').map(Number);
/** which parts to run (default all but import): open, sustained, breaking, charts, import (`make bench-import`), link (import's link-follow alone) */
/** extra query parameters of the UI (e.g. `budget=3`, the commit budget in ms per frame) */
const QUERY = process.env.BENCH_QUERY ? `&${process.env.BENCH_QUERY}` : '';
/** the built UI the gateway serves (default ui/dist; another build for A/B runs) */
const UI_DIR = process.env.BENCH_UI_DIR ?? join(ROOT, 'ui/dist');
const PARTS = new Set((process.env.BENCH_PARTS ?? 'open,sustained,breaking,charts').split(','));
/** a file to save the traced open's Chromium trace in (chrome://tracing, Perfetto); BENCH_SCREENSHOT a PNG of the opened screen */
const TRACE_FILE = process.env.BENCH_TRACE;
/** a folder to save Chromium traces of the imported opens in (`<label>.json`: the run BENCH_TRACE_RUN, default 3; `all`: `<label><run>.json` each) */
const TRACE_DIR = process.env.BENCH_TRACE_DIR;
const TRACE_RUN = process.env.BENCH_TRACE_RUN ?? '3';
/** BENCH_TRACE_JS=0: no JavaScript samples in the traces (less overhead) */
const TRACE_JS = process.env.BENCH_TRACE_JS !== '0';

/** Run `during`, traced into TRACE_DIR/`label`.json when asked (timeline, user timing, GC and JS samples). */
async function traced<T>(page: Page, label: string, run: number, during: () => Promise<T>): Promise<T> {
  if (!TRACE_DIR || (TRACE_RUN !== 'all' && run !== Number(TRACE_RUN))) return during();
  const browser = page.context().browser()!;
  const categories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8', 'v8.gc', 'loading', 'navigation', 'blink', ...(TRACE_JS ? ['disabled-by-default-v8.cpu_profiler'] : [])];
  await browser.startTracing(page, { categories });
  try {
    return await during();
  } finally {
    writeFileSync(join(TRACE_DIR, `${label}${TRACE_RUN === 'all' ? run : ''}.json`), await browser.stopTracing());
  }
}

/** the text of the imported menu's button that opens the 500-widget screen (synoptic_benchmarks.importer.bench) */
const LINK_TEXT = 'Open the 500';

const uri = (kind: string, i: number) => `sim://BENCH:${kind.toUpperCase()}:${String(i).padStart(5, '0')}`;

function screens(dir: string): void {
  const widgets = Array.from({ length: N }, (_, i) => ({ type: i % 2 ? 'led' : 'label', channels: [uri('scalar', i)], w: 1, h: 1, options: { compact: true } }));
  writeFileSync(join(dir, 'bench-1000.json'), JSON.stringify({ title: `${N} labels and LEDs`, layout: { columns: 25, row_height: 22, gap: 2 }, widgets }));
  const charts = [
    ...Array.from({ length: 50 }, (_, i) => ({ type: 'trend', title: `trend ${i}`, channels: [uri('scalar', i)], w: 2, h: 4, options: { window_s: 30 } })),
    ...Array.from({ length: 10 }, (_, i) => ({ type: 'spectrum', title: `spectrum ${i}`, channels: [uri('array', i)], w: 4, h: 6 })),
  ];
  writeFileSync(join(dir, 'bench-charts.json'), JSON.stringify({ title: '50 trends, 10 spectra', layout: { columns: 20, row_height: 22, gap: 2 }, widgets: charts }));
}

/** CPU ms (user + system) of a process so far, from /proc (Linux); 0 when gone */
function procCpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return 0;
  }
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};

/**
 * CPU time (not wall time: the machine is shared) that the renderer's threads
 * spent while `during` ran, in ms per second, from a Chromium trace.
 */
async function rendererCpu(page: Page, during: () => Promise<void>, perSecond = true, traceFile?: string): Promise<Record<string, number>> {
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] });
  const t0 = Date.now();
  await during();
  const seconds = (Date.now() - t0) / 1000;
  const trace = await browser.stopTracing();
  if (traceFile) writeFileSync(traceFile, trace);
  const events = JSON.parse(trace.toString()).traceEvents as any[];
  const names = new Map<string, string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
  const cpu = new Map<string, number>();
  const main = new Map<string, number>();
  const mainTasks: number[] = [];
  for (const e of events) {
    if (e.ph !== 'X' || !e.tdur) continue;
    const thread = (names.get(`${e.pid}:${e.tid}`) ?? 'other').replace(/\d+$/, '');
    if (e.name === 'RunTask') {
      cpu.set(thread, (cpu.get(thread) ?? 0) + e.tdur / 1000);
      if (thread === 'CrRendererMain') mainTasks.push(e.tdur / 1000);
    }
    // where the main thread's time goes (nested events: shares, not a sum)
    else if (thread === 'CrRendererMain' && ['FunctionCall', 'FireAnimationFrame', 'Layout', 'UpdateLayoutTree', 'Paint', 'PrePaint', 'Layerize', 'MinorGC', 'MajorGC'].includes(e.name)) {
      main.set(e.name, (main.get(e.name) ?? 0) + e.tdur / 1000);
    }
  }
  const out: Record<string, number> = {};
  const scale = (v: number) => Math.round(perSecond ? v / seconds : v);
  for (const [k, v] of [...cpu.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4)) out[k] = scale(v);
  for (const [k, v] of main) out[`main.${k}`] = scale(v);
  // the longest main-thread tasks (CPU ms): what a long frame gap is made of
  out['main.task_p99_ms'] = pct(mainTasks, 99) ?? 0;
  out['main.task_max_ms'] = Math.round(Math.max(0, ...mainTasks) * 10) / 10;
  return out;
}

/** Frames, lags and update counts inside the page over `seconds`, and the renderer's CPU. */
async function sample(page: Page, seconds: number) {
  let result: Awaited<ReturnType<typeof sampleFrames>> | undefined;
  const cpu = await rendererCpu(page, async () => {
    result = await sampleFrames(page, seconds);
  });
  return { ...result!, renderer_cpu_ms_per_s: cpu };
}

async function sampleFrames(page: Page, seconds: number) {
  const raw = await page.evaluate(async (ms) => {
    const gw = (window as any).__synoptic;
    gw.stats.lags.length = 0;
    gw.stats.ages.length = 0;
    const u0 = gw.stats.updates;
    const m0 = gw.stats.missed;
    const frames: number[] = [];
    const t0 = performance.now();
    await new Promise<void>((done) => {
      const tick = (t: number) => {
        frames.push(t);
        if (t - t0 < ms) requestAnimationFrame(tick);
        else done();
      };
      requestAnimationFrame(tick);
    });
    const elapsed = (performance.now() - t0) / 1000;
    const gaps = frames.slice(1).map((t, i) => t - frames[i]);
    return { elapsed, frames: frames.length, gaps, lags: [...gw.stats.lags], ages: [...gw.stats.ages], updates: gw.stats.updates - u0, missed: gw.stats.missed - m0 };
  }, seconds * 1000);
  const third = Math.floor(raw.ages.length / 3);
  return {
    fps: Math.round((raw.frames / raw.elapsed) * 10) / 10,
    frame_gap_p99_ms: pct(raw.gaps, 99),
    updates_per_s: Math.round(raw.updates / raw.elapsed),
    commits: raw.lags.length,
    receipt_to_paint_ms: { p50: pct(raw.lags, 50), p99: pct(raw.lags, 99), max: pct(raw.lags, 100) },
    source_to_paint_ms: { p50: pct(raw.ages, 50), p99: pct(raw.ages, 99) },
    // a backlog shows as source-to-paint age growing from the first to the last third
    age_p50_first_third_ms: pct(raw.ages.slice(0, third), 50),
    age_p50_last_third_ms: pct(raw.ages.slice(-third), 50),
    gateway_missed: raw.missed,
  };
}

class Bench {
  dir = mkdtempSync(join(tmpdir(), 'synoptic-uibench-'));
  procs: Proc[] = [];
  natsUrl = '';
  /** the gateway with its default linger (5 s): a reload re-opens a warm group */
  base = '';
  /** a second gateway on the same NATS with `SYNOPTIC_GATEWAY_LINGER=0`: every open is cold */
  coldBase = '';

  /** `make bench-import`: the importer's benchmark (a 500-widget .bob) as JSON; it leaves the imported screen in the bench's screens */
  importResult: Record<string, any> | undefined;
  /** widgets of the imported screen that show a live value */
  importedLive = 0;

  async start() {
    screens(this.dir);
    if (PARTS.has('import') || PARTS.has('link')) {
      this.importResult = JSON.parse(execFileSync(join(VENV, 'python'), ['-m', 'synoptic_benchmarks.importer.bench', '--out', this.dir], { encoding: 'utf8' }));
      const screen = JSON.parse(readFileSync(join(this.dir, 'imported-500.json'), 'utf8'));
      this.importedLive = screen.widgets.filter((w: any) => ['label', 'led'].includes(w.type) && w.channels?.length).length;
      // the publisher serves BENCH_CHANNELS channels: the imported screen's must be among them, or its open never completes
      const indexes = screen.widgets.flatMap((w: any) => w.channels ?? []).map((c: string) => Number(/^sim:\/\/BENCH:SCALAR:(\d+)$/.exec(c)?.[1] ?? -1));
      const needed = Math.max(0, ...indexes) + 1;
      if (N < needed) throw new Error(`BENCH_CHANNELS=${N}: the imported screen shows sim://BENCH:SCALAR channels up to ${needed - 1}; publish at least ${needed}`);
    }
    const natsPort = await freePort();
    this.natsUrl = `nats://127.0.0.1:${natsPort}`;
    const nats = new Proc('nats', [join(VENV, 'nats-server'), '-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', join(this.dir, 'js')]);
    this.procs.push(nats);
    await nats.waitFor(/Server is ready/, 20_000);
    this.base = await this.gateway('gateway', {});
    this.coldBase = await this.gateway('gateway-cold', { SYNOPTIC_GATEWAY_LINGER: '0' });
  }

  /** Start a gateway serving the bench's screens and UI_DIR; its base URL. */
  async gateway(name: string, env: Record<string, string>): Promise<string> {
    const port = await freePort();
    const gw = new Proc(name, [join(VENV, 'synoptic'), 'gateway', '--host', '127.0.0.1', '--port', String(port), '--nats', this.natsUrl, '--screens', this.dir, '--ui', UI_DIR], env);
    this.procs.push(gw);
    await gw.waitFor(/ready on/, 60_000);
    return `http://127.0.0.1:${port}`;
  }

  /** The channels the gateway at `base` holds now (its `channels` gauge). */
  async channels(base: string): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^synoptic_gateway_channels (\S+)$/m.exec(text)?.[1] ?? -1);
  }

  /** Wait until the gateway at `base` holds no channel (the previous page's session is gone): the next open is cold. */
  async drained(base: string): Promise<void> {
    for (const t0 = Date.now(); Date.now() - t0 < 10_000; ) {
      const text = await (await fetch(`${base}/metrics`)).text();
      if (/^synoptic_gateway_channels 0(\.0)?$/m.test(text)) return;
      await new Promise((r) => setTimeout(r, 20)); // polling the gateway, not a fixed wait
    }
    throw new Error(`the gateway at ${base} still holds channels after 10 s`);
  }

  async publisher(channels: number, rate: number, kind = 'scalar', points = 10_000): Promise<Proc> {
    const p = new Proc(`pub-${kind}`, [join(VENV, 'python'), join(ROOT, 'ui/bench/publish.py'), '--nats', this.natsUrl, '--channels', String(channels), '--rate', String(rate), '--kind', kind, '--points', String(points)]);
    this.procs.push(p);
    await p.waitFor(/publisher ready/, 30_000);
    return p;
  }

  /** Stop a publisher and return what it says it published. */
  async stopPublisher(p: Proc): Promise<{ per_second: number; late_ticks: number }> {
    const mark = p.mark();
    await p.stop();
    const line = p.output.slice(mark).trim().split('\n').pop() ?? '{}';
    return JSON.parse(line);
  }

  async stop() {
    for (const p of this.procs.reverse()) await p.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

test('browser benchmarks', async ({ page }) => {
  const bench = new Bench();
  await bench.start();
  const os = await import('node:os');
  const machine = { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), cpus: os.cpus().length, load_avg_1m: Math.round(os.loadavg()[0] * 100) / 100 };
  const results: Record<string, unknown> = { benchmark: 'web-ui', machine, load_average_at_start: os.loadavg().map((x) => Math.round(x * 10) / 10), channels: N };
  try {
    let pub = await bench.publisher(N, 10);

    // 1. screen open: navigation start → every widget showing a live value (values already in the store)
    await page.addInitScript(([bench, imported]) => {
      const n = location.hash.includes('bench-1000') ? bench : location.hash.includes('imported-500') ? imported : 0;
      if (!n) return;
      // seen in an animation frame callback, i.e. before that frame's layout and paint:
      // the time is taken by a task queued from there, which runs after the frame is rendered
      const check = () => {
        // every value live, and the grid revealed (not content-visibility: hidden)
        if (document.querySelectorAll('.grid:not(.unrevealed) [data-role=value][data-stale=false]').length >= n) {
          const after = new MessageChannel();
          after.port1.onmessage = () => ((window as any).__openMs = performance.now());
          after.port2.postMessage(0);
        } else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    }, [N, bench.importedLive]);
    /** 7 loads of the screen from `base`, each after `before()`: open times and milestones */
    const openRuns = async (base: string, label: string, before: () => Promise<void>, route = 'bench-1000') => {
      const opens: number[] = [];
      const marks: Record<string, number>[] = [];
      for (let run = 0; run < OPEN_RUNS; run++) {
        await before();
        await traced(page, label, run, async () => {
          await page.goto(`${base}/?run=${label}${run}${QUERY}#/screen/${route}`);
          await page.waitForFunction(() => (window as any).__openMs !== undefined, null, { timeout: 30_000 });
        });
        opens.push(await page.evaluate(() => (window as any).__openMs));
        marks.push(await page.evaluate(() => {
          const at = (name: string) => Math.round(performance.getEntriesByName(name)[0]?.startTime ?? -1);
          const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
          return { html_request: Math.round(nav.requestStart), html_response: Math.round(nav.responseStart), dom_content_loaded: Math.round(nav.domContentLoadedEventEnd), connect: at('synoptic:connect'), open: at('synoptic:open'), hello: at('synoptic:hello'), screen: at('synoptic:screen'), sub: at('synoptic:sub'), mounted: at('synoptic:mounted'), snapshot_rx: at('synoptic:snap-rx'), snapshot_decoded: at('synoptic:snap-decoded'), snapshot: at('synoptic:snap'), snapshot_committed: at('synoptic:snap-committed'), subs_sent: performance.getEntriesByName('synoptic:sub').length, grids: document.querySelectorAll('.grid').length };
        }));
      }
      return { runs: opens.map((x) => Math.round(x)), median: pct(opens, 50), target: 300, milestones: marks };
    };
    if (PARTS.has('open')) {
      // cold: the gateway with linger 0, the previous page gone (about:blank) and its channels dropped before each load
      const cold = await openRuns(bench.coldBase, 'cold', async () => {
        await page.goto('about:blank');
        await bench.drained(bench.coldBase);
      });
      // re-open: the default gateway (linger 5 s); one load first (cold, not counted), then 7 reloads within the linger
      await page.goto(`${bench.base}/?run=warmup${QUERY}#/screen/bench-1000`);
      await page.waitForFunction(() => (window as any).__openMs !== undefined, null, { timeout: 30_000 });
      const reopen = await openRuns(bench.base, 'reopen', async () => {});
      results.screen_open_cold_ms = cold;
      results.screen_open_reopen_ms = reopen;
    }
    if (PARTS.has('import') || PARTS.has('link')) {
      // the imported 500-widget .bob (a canvas screen), opened like the grid above: cold, then re-opens
      const opens = PARTS.has('import');
      const cold = opens ? await openRuns(bench.coldBase, 'icold', async () => {
        await page.goto('about:blank');
        await bench.drained(bench.coldBase);
      }, 'imported-500') : undefined;
      await page.goto(`${bench.base}/?run=iwarmup${QUERY}#/screen/imported-500`);
      await page.waitForFunction(() => (window as any).__openMs !== undefined, null, { timeout: 30_000 });
      const reopen = opens ? await openRuns(bench.base, 'ireopen', async () => {}, 'imported-500') : undefined;
      // a link followed: the imported menu's button opens the 500-widget screen in its place; from the click to
      // every value of the linked screen live (cold: its channels new to the gateway; again: held by its linger)
      // cold and again alternate run by run (the same minutes for both: a machine's load that changes
      // during the bench weighs on both alike); `held`: the channels the gateway held at the click
      const follow = async (base: string, label: string, run: number, before: () => Promise<void>) => {
        await before();
        await page.goto(`${base}/?run=${label}${run}${QUERY}#/screen/imported-menu`);
        await page.getByRole('link', { name: LINK_TEXT }).waitFor();
        await page.waitForFunction(() => document.querySelector('.grid.canvas')?.getAttribute('data-ready') === 'true');
        const held = await bench.channels(base);
        const cpu0 = bench.procs.map((p) => procCpuMs(p.child.pid));
        const ms = await traced(page, label, run, () => page.evaluate(([n, text]) => new Promise<number>((done) => {
          const link = [...document.querySelectorAll('a')].find((a) => a.textContent?.includes(text as string))!;
          const t0 = performance.now();
          (window as any).__clickAt = t0;
          link.click();
          // seen in an animation frame callback; the time taken after that frame is rendered (as for an open)
          const check = () => {
            if (location.hash.includes('imported-500') && document.querySelectorAll('.grid:not(.unrevealed) [data-role=value][data-stale=false]').length >= (n as number)) {
              const after = new MessageChannel();
              after.port1.onmessage = () => done(performance.now() - t0);
              after.port2.postMessage(0);
            } else requestAnimationFrame(check);
          };
          requestAnimationFrame(check);
        }), [bench.importedLive, LINK_TEXT] as const));
        const cpu1 = bench.procs.map((p) => procCpuMs(p.child.pid));
        // the same milestones as an open's, from the click (the first of each after it)
        const marks: Record<string, number> = await page.evaluate(() => {
          const t0 = (window as any).__clickAt as number;
          const at = (name: string) => Math.round((performance.getEntriesByName(name).find((e) => e.startTime >= t0)?.startTime ?? t0 - 1) - t0);
          return { screen: at('synoptic:screen'), sub: at('synoptic:sub'), mounted: at('synoptic:mounted'), snapshot_rx: at('synoptic:snap-rx'), snapshot_decoded: at('synoptic:snap-decoded'), snapshot: at('synoptic:snap'), snapshot_committed: at('synoptic:snap-committed') };
        });
        marks.held = held;
        // CPU ms of the bench's own processes (gateways, NATS, publisher) from the click to the open (BENCH_PROC_CPU=1)
        if (process.env.BENCH_PROC_CPU) bench.procs.forEach((p, i) => cpu1[i] > cpu0[i] && (marks[`cpu_${p.name}`] = Math.round(cpu1[i] - cpu0[i])));
        return { ms, marks };
      };
      const coldL = { runs: [] as number[], marks: [] as Record<string, number>[] };
      const againL = { runs: [] as number[], marks: [] as Record<string, number>[] };
      // the first "again" follows a visit of the linked screen on its gateway (held by its linger)
      await page.goto(`${bench.base}/?run=lwarmup${QUERY}#/screen/imported-500`);
      await page.waitForFunction(() => (window as any).__openMs !== undefined, null, { timeout: 30_000 });
      for (let run = 0; run < OPEN_RUNS; run++) {
        const c = await follow(bench.coldBase, 'lcold', run, async () => {
          await page.goto('about:blank');
          await bench.drained(bench.coldBase);
        });
        coldL.runs.push(c.ms);
        coldL.marks.push(c.marks);
        const a = await follow(bench.base, 'lagain', run, async () => {});
        againL.runs.push(a.ms);
        againL.marks.push(a.marks);
      }
      const summary = (r: typeof coldL) => ({ runs: r.runs.map((x) => Math.round(x)), median: pct(r.runs, 50), target: 300, milestones: r.marks });
      const linkCold = summary(coldL);
      const linkAgain = summary(againL);
      results.imported = { import: bench.importResult, live_widgets: bench.importedLive, open_cold_ms: cold, open_reopen_ms: reopen, link_cold_ms: linkCold, link_again_ms: linkAgain };
    }
    // a re-open once more, counting the CPU the renderer spent (the wall time above includes waiting for a busy machine)
    const openCpu = await rendererCpu(page, async () => {
      await page.goto(`${bench.base}/?run=cpu${QUERY}#/screen/bench-1000`);
      await page.waitForFunction(() => (window as any).__openMs !== undefined, null, { timeout: 30_000 });
    }, false, TRACE_FILE);
    if (process.env.BENCH_SCREENSHOT) await page.screenshot({ path: process.env.BENCH_SCREENSHOT }); // the opened screen, to look at
    if (PARTS.has('open')) results.screen_open_reopen_renderer_cpu_ms = openCpu;

    // 2. sustained: N channels × 10 Hz
    if (PARTS.has('sustained')) results.sustained_10hz = { ...(await sample(page, SUSTAIN_S)), published: await bench.stopPublisher(pub) };
    else await bench.stopPublisher(pub);

    // 3. breaking rate: the same screen at higher rates per channel
    const steps: Record<string, unknown>[] = [];
    for (const rate of PARTS.has('breaking') ? RATES : []) {
      pub = await bench.publisher(N, rate);
      await page.waitForTimeout(1000); // warm-up
      const s = await sample(page, STEP_S);
      const published = await bench.stopPublisher(pub);
      const ok = s.fps >= 30 && (s.receipt_to_paint_ms.p99 ?? 1e9) <= 100 && (s.age_p50_last_third_ms ?? 0) <= 2 * (s.age_p50_first_third_ms ?? 0) + 50;
      steps.push({ rate_hz: rate, offered_per_s: N * rate, published, ...s, ok });
      if (!ok) break;
    }
    if (PARTS.has('breaking')) results.breaking = steps;

    // 4. charts: 50 trends at 10 Hz and 10 spectra of 10,000 points at 10 Hz on one screen
    if (PARTS.has('charts')) {
      const scalars = await bench.publisher(50, 10);
      const arrays = await bench.publisher(10, 10, 'array', 10_000);
      await page.goto(`${bench.base}/?charts${QUERY}#/screen/bench-charts`);
      await page.waitForFunction(() => (window as any).__synoptic?.stats.commits > 20, null, { timeout: 30_000 });
      await page.waitForTimeout(2000);
      results.charts = { ...(await sample(page, SUSTAIN_S)), published_scalars: await bench.stopPublisher(scalars), published_arrays: await bench.stopPublisher(arrays) };
    }
  } finally {
    await bench.stop();
  }
  results.load_average_at_end = os.loadavg().map((x) => Math.round(x * 10) / 10);
  console.log(JSON.stringify(results, null, 1));
});
