/**
 * The alarm page's side of `make bench-alarms`: one Chromium page on the alarm page of
 * a running gateway, driven over stdin by the Python benchmark, one JSON line out per
 * command.
 *   (start)        → {"ready": listed}              once the page holds the list
 *   storm N FIRST  → {"listed_s", "frame_gap_p95_ms", "frame_gap_max_ms", "frames", "rows",
 *                     "frame_work_p95_ms", "frame_work_max_ms", "frames_traced"}
 *                    after the N channels FIRST… (benchmark numbering) are all listed
 *                    MAJOR: seconds from the command; the animation-frame gaps and the
 *                    main thread's work per frame (Chromium's trace) until a second later
 *   acks           → {"acked": {ch: ms since the epoch}} when each acknowledgement arrived
 *   quit
 * Usage: node bench/alarms-page.mjs URL
 */
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { chromium } from '@playwright/test';

const url = process.argv[2];
/** What a frame costs the page's main thread, read from Chromium's trace. */
const TRACE_CATEGORIES = ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline'];

/**
 * The renderer main thread's CPU time (trace `tdur`: what waits for a busy host's CPU
 * is not the page's work), from the trace: per frame, every task from the end of one
 * frame's rendering task (the one running the animation-frame callbacks, style,
 * layout and paint) to the end of the next, summed (socket messages, the alarm store,
 * Svelte, the browser's rendering: `frame_work_*`), and the rendering task alone
 * (`render_*`); p95 and max over the frames traced (ms); and the share of the traced
 * time the thread ran (`main_thread_busy`).
 */
function frameWork(events) {
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain'
    && events.some((f) => f.name === 'FireAnimationFrame' && f.pid === e.pid && f.tid === e.tid));
  if (!main) return { frame_work_p95_ms: null, frame_work_max_ms: null, frames_traced: 0 };
  const on = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  const tasks = on.filter((e) => e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => a.ts - b.ts);
  const top = [];
  for (const t of tasks) if (!top.length || t.ts >= top.at(-1).ts + top.at(-1).dur) top.push(t); // nested ones are counted in theirs
  const fires = on.filter((e) => e.name === 'FireAnimationFrame').map((e) => e.ts).sort((a, b) => a - b);
  const cpu = (t) => (t.tdur ?? t.dur) / 1000;
  const work = [];
  const render = [];
  let sum = 0;
  let busy = 0;
  let f = 0;
  for (const t of top) {
    sum += cpu(t);
    busy += cpu(t);
    while (f < fires.length && fires[f] < t.ts) f++;
    if (f < fires.length && fires[f] <= t.ts + t.dur) { // this task drew a frame
      work.push(sum);
      render.push(cpu(t));
      sum = 0;
      while (f < fires.length && fires[f] <= t.ts + t.dur) f++;
    }
  }
  work.shift(); // the first holds whatever came before the trace's start
  const q = (list, p) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 10) / 10 : null;
  };
  const span = top.length ? (top.at(-1).ts + top.at(-1).dur - top[0].ts) / 1000 : 0;
  return { frame_work_p95_ms: q(work, 0.95), frame_work_max_ms: q(work, 1), render_p95_ms: q(render, 0.95), render_max_ms: q(render, 1),
    frames_traced: work.length, traced_s: Math.round(span) / 1000, main_thread_busy: span ? Math.round((busy / span) * 1000) / 1000 : null };
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

await page.goto(`${url}/#/alarms`);
await page.waitForFunction(() => globalThis.__synopticAlarms?.loaded, null, { timeout: 120_000 });
await page.evaluate(() => {
  const acked = (globalThis.__benchAcked = {});
  globalThis.__synopticAlarms.onFrame((frame) => {
    for (const s of frame.up ?? []) if (s.ev === 'ack' && !(s.ch in acked)) acked[s.ch] = Date.now();
  });
});
out({ ready: await page.evaluate(() => globalThis.__synopticAlarms.size) });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, ...args] = line.trim().split(/\s+/);
  if (cmd === 'storm') {
    const [n, first] = args.map(Number);
    // set up first (kept out of the trace), then trace until a second after the last is listed
    await page.evaluate(([n, first]) => {
      const store = globalThis.__synopticAlarms;
      const uri = (i) => `ca://BENCH:A${String(Math.floor(i / 1000)).padStart(3, '0')}:C${String(i % 1000).padStart(4, '0')}`;
      const missing = new Set(Array.from({ length: n }, (_, k) => uri(first + k)));
      for (const ch of missing) if (store.get(ch)?.lat === 2) missing.delete(ch);
      const run = (globalThis.__benchStorm = { t0: performance.now(), frames: [], listed: null, missing });
      // which storm alarms are listed MAJOR, as each frame arrives (kept off the animation frames)
      run.stop = store.onFrame((frame) => {
        for (const s of frame.all ?? frame.up ?? []) if (s.lat === 2) missing.delete(s.ch);
        if (!missing.size && run.listed === null) run.listed = performance.now();
      });
      run.done = new Promise((done) => {
        const tick = (t) => {
          run.frames.push(t);
          if ((run.listed !== null && t > run.listed + 1000) || t - run.t0 > 60_000) done(); // a second more: the page drawing the list
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
    }, [n, first]);
    const profile = process.env.BENCH_ALARMS_TRACE ? ['disabled-by-default-v8.cpu_profiler'] : []; // and the page's JS, sampled
    await browser.startTracing(page, { categories: [...TRACE_CATEGORIES, ...profile] });
    const seen = await page.evaluate(async () => {
      const run = globalThis.__benchStorm;
      await run.done;
      run.stop();
      const { frames, listed, t0 } = run;
      const gaps = frames.slice(1).map((t, i) => t - frames[i]).sort((a, b) => a - b);
      const q = (p) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))] * 10) / 10;
      return { listed_s: listed === null ? null : Math.round(listed - t0) / 1000, missing: run.missing.size, frame_gap_p95_ms: q(0.95),
        frame_gap_max_ms: q(1), frames: frames.length, rows: Number(document.querySelector('[data-testid=alarm-rows]')?.getAttribute('data-count')) };
    });
    const raw = await browser.stopTracing();
    if (process.env.BENCH_ALARMS_TRACE) writeFileSync(process.env.BENCH_ALARMS_TRACE, raw);
    const trace = JSON.parse(raw.toString());
    out({ ...seen, ...frameWork(trace.traceEvents ?? trace) });
  } else if (cmd === 'acks') {
    out({ acked: await page.evaluate(() => globalThis.__benchAcked) });
  } else if (cmd === 'quit') {
    break;
  }
}
await browser.close();
