/**
 * The screen editor on a 1000-widget screen, against a real nats-server and a
 * gateway with the screen store (the KV bucket) and live synthetic channels:
 * editor open, frame time while dragging a widget, the drop's commit, the save
 * round trip, and how long a viewer takes to see a save. Prints one JSON document
 * (docs/benchmarks.md, "Screen editor"). `make bench-editor`.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type Page } from '@playwright/test';
import { Proc, freePort } from '../tests/e2e/procs';
import { ROOT } from '../tests/e2e/stack';
import { handToken } from '../tests/e2e/token';

const VENV = join(ROOT, '.venv/bin');
const N = Number(process.env.BENCH_WIDGETS ?? 1000);
const DRAGS = Number(process.env.BENCH_DRAGS ?? 8);
const SAVES = Number(process.env.BENCH_SAVES ?? 15);
const UI_DIR = process.env.BENCH_UI_DIR ?? join(ROOT, 'ui/dist');
const SECRET = 'bench-secret-not-for-production';
const NAME = 'bench-edit';

const pct = (xs: number[], p: number) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};
const stats = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99), max: pct(xs, 100) });

function token(): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'bench', read: ['*'], write: [], screens: ['*'], exp: Math.floor(Date.now() / 1000) + 3600 })}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

/** `BENCH_LAYOUT=canvas`: the same widgets in canvas pixel boxes (an imported display), else on the grid. */
const LAYOUT = process.env.BENCH_LAYOUT === 'canvas' ? 'canvas' : 'grid';

/** 1000 labels and LEDs with captions on a 24-column grid (or a 960 px canvas, 24 to a row), like an operator's overview. */
function screen(): object {
  const widget = (i: number) => ({ type: i % 2 ? 'led' : 'label', title: `ch ${i}`, channels: [`sim://BENCH:SCALAR:${String(i).padStart(5, '0')}`] });
  if (LAYOUT === 'canvas') {
    const widgets = Array.from({ length: N }, (_, i) => ({ ...widget(i), box: { x: (i % 24) * 40, y: Math.floor(i / 24) * 46, w: 38, h: 44 } }));
    return { version: 1, title: `${N} widgets to edit`, layout: { type: 'canvas', width: 960, height: Math.ceil(N / 24) * 46 }, widgets };
  }
  const widgets = Array.from({ length: N }, (_, i) => ({ ...widget(i), w: 2, h: 2 }));
  return { version: 1, title: `${N} widgets to edit`, layout: { type: 'grid', columns: 24, row_height: 22, gap: 2 }, widgets };
}

/**
 * Main-thread work per animation frame while `during` runs, from a Chromium
 * trace: the page marks each frame (`requestAnimationFrame`), and the renderer
 * main thread's tasks between two marks are that frame's work (wall and CPU ms).
 */
async function frameWork(page: Page, during: () => Promise<void>): Promise<{ wall: number[]; cpu: number[]; intervals: number[] }> {
  const browser = page.context().browser()!;
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __marking: boolean };
    w.__frames = [];
    w.__marking = true;
    // the moving phase of each drag (pointer down → up) is marked in the trace too
    addEventListener('pointerdown', () => performance.mark('bench:down'), { capture: true });
    addEventListener('pointerup', () => performance.mark('bench:up'), { capture: true });
    const tick = (t: number) => {
      w.__frames.push(t);
      performance.mark('bench:frame');
      if (w.__marking) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] });
  await during();
  const trace = await browser.stopTracing();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __marking: boolean };
    w.__marking = false;
    return w.__frames;
  });
  const events = JSON.parse(trace.toString()).traceEvents as { ph: string; name: string; pid: number; tid: number; ts: number; dur?: number; tdur?: number; args?: { name?: string } }[];
  const names = new Map<string, string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  const marks = [...new Set(events.filter((e) => e.name === 'bench:frame').map((e) => e.ts))].sort((a, b) => a - b);
  // the editor page's renderer only (the viewer's page is another renderer process)
  const pid = events.find((e) => e.name === 'bench:frame')?.pid;
  const tasks = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && e.pid === pid && names.get(`${e.pid}:${e.tid}`) === 'CrRendererMain');
  const wall = new Array(Math.max(0, marks.length - 1)).fill(0);
  const cpu = new Array(Math.max(0, marks.length - 1)).fill(0);
  for (const t of tasks) {
    // the frame whose interval the task starts in
    let lo = 0;
    let hi = marks.length - 1;
    if (t.ts < marks[0] || t.ts >= marks[hi]) continue;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (marks[mid] <= t.ts) lo = mid;
      else hi = mid;
    }
    wall[lo] += (t.dur ?? 0) / 1000;
    cpu[lo] += (t.tdur ?? 0) / 1000;
  }
  // keep the frames that start while the pointer is down (the drop's own frame is measured apart)
  const downs = events.filter((e) => e.name === 'bench:down').map((e) => e.ts).sort((a, b) => a - b);
  const ups = events.filter((e) => e.name === 'bench:up').map((e) => e.ts).sort((a, b) => a - b);
  const moving = (ts: number) => downs.some((d, i) => ts >= d && ts < (ups[i] ?? Infinity));
  const keep = marks.slice(0, -1).map((ts) => moving(ts));
  return { wall: wall.filter((_, i) => keep[i]), cpu: cpu.filter((_, i) => keep[i]), intervals: frames.slice(1).map((t, i) => t - frames[i]) };
}

test('screen editor benchmarks', async ({ browser, page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'synoptic-edbench-'));
  const procs: Proc[] = [];
  const machine = { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), cpus: cpus().length, load_avg_1m: Math.round(loadavg()[0] * 100) / 100 };
  const results: Record<string, unknown> = { benchmark: 'screen-editor', layout: LAYOUT, machine, load_average_at_start: loadavg().map((x) => Math.round(x * 10) / 10), widgets: N };
  try {
    writeFileSync(join(dir, `${NAME}.json`), JSON.stringify(screen()));
    const natsPort = await freePort();
    const natsUrl = `nats://127.0.0.1:${natsPort}`;
    const nats = new Proc('nats', [join(VENV, 'nats-server'), '-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', join(dir, 'js')]);
    procs.push(nats);
    await nats.waitFor(/Server is ready/, 20_000);
    const pub = new Proc('pub', [join(VENV, 'python'), join(ROOT, 'ui/bench/publish.py'), '--nats', natsUrl, '--channels', String(N), '--rate', '1', '--kind', 'scalar']);
    procs.push(pub);
    await pub.waitFor(/publisher ready/, 30_000);
    const port = await freePort();
    const gw = new Proc('gateway', [join(VENV, 'synoptic'), 'gateway', '--host', '127.0.0.1', '--port', String(port), '--nats', natsUrl, '--jwt-secret', SECRET, '--allow-anonymous', '--screens', dir, '--ui', UI_DIR]);
    procs.push(gw);
    await gw.waitFor(/ready on/, 60_000);
    const base = `http://127.0.0.1:${port}`;
    const tok = token();

    // a viewer of the screen in another browser context: when does it hear of each save?
    const viewer = await (await browser.newContext()).newPage();
    await viewer.goto(`${base}/#/screen/${NAME}`);
    await viewer.waitForFunction(() => document.querySelector('.grid')?.getAttribute('data-ready') === 'true', null, { timeout: 30_000 });
    await viewer.evaluate((name) => {
      const w = window as unknown as { __seen: Record<number, number>; __synoptic: { watchScreen(n: string, l: (f: { rev: number }) => void): () => void } };
      w.__seen = {};
      w.__synoptic.watchScreen(name, (f) => (w.__seen[f.rev] = Date.now()));
    }, NAME);

    // 1. open the editor: navigation → every widget on the canvas
    const t0 = Date.now();
    await handToken(page, tok);
    await page.goto(`${base}/#/edit/${NAME}`);
    await page.waitForFunction((n) => document.querySelectorAll('.ed-item').length === n, N, { timeout: 60_000 });
    results.editor_open_ms = Date.now() - t0;
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'live');
    await page.waitForTimeout(1500); // values in, first paints done: a picture of steady editing

    // 2. drag one widget (the 500th) around: frame work while the pointer moves, then the drop
    const drops: number[] = [];
    const work = await frameWork(page, async () => {
      for (let d = 0; d < DRAGS; d++) {
        const item = page.locator('.ed-item').nth(Math.floor(N / 2) + d);
        await item.scrollIntoViewIfNeeded();
        const b = (await item.boundingBox())!;
        const [x0, y0] = [b.x + b.width / 2, b.y + b.height / 2];
        await page.mouse.move(x0, y0);
        await page.mouse.down();
        for (let k = 1; k <= 60; k++) await page.mouse.move(x0 + k * 4, y0 + Math.sin(k / 8) * 60);
        // the drop: one document change, one undo step, the moved widget re-placed
        const before = await page.evaluate(() => performance.now());
        await page.mouse.up();
        drops.push(await page.evaluate((t) => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now() - t), 0))), before));
      }
    });
    results.drag = {
      drags: DRAGS,
      pointer_moves_per_drag: 60,
      frame_work_wall_ms: stats(work.wall),
      frame_work_cpu_ms: stats(work.cpu),
      frame_interval_ms: stats(work.intervals),
      drop_to_next_frame_ms: stats(drops),
    };

    // 3. save round trip of the 1000-widget screen (a small move between saves), and a viewer seeing it
    const saves: number[] = [];
    const savedAt: [number, number, number][] = [];
    for (let s = 0; s < SAVES; s++) {
      await page.keyboard.press('ArrowRight');
      const r = await page.evaluate(async (i) => {
        const ed = (window as unknown as { __synopticEditor: { save(summary: string): Promise<{ ok: boolean; revision?: number; error?: string }> } }).__synopticEditor;
        const [t, sentAt] = [performance.now(), Date.now()];
        const res = await ed.save(`bench save ${i}`);
        return { ...res, ms: performance.now() - t, sentAt, doneAt: Date.now() };
      }, s);
      if (!r.ok) throw new Error(`save refused: ${JSON.stringify(r)}`);
      saves.push(r.ms);
      savedAt.push([r.revision!, r.sentAt, r.doneAt]);
    }
    const bytes = await page.evaluate(() => JSON.stringify((window as unknown as { __synopticEditor: { doc: { widgets: { spec: unknown }[] } } }).__synopticEditor.doc.widgets.map((w) => w.spec)).length);
    await viewer.waitForFunction((revs) => revs.every((r) => (window as unknown as { __seen: Record<number, number> }).__seen[r]), savedAt.map(([r]) => r), { timeout: 10_000 }).catch(() => {});
    const seen = await viewer.evaluate(() => (window as unknown as { __seen: Record<number, number> }).__seen);
    const heard = savedAt.filter(([rev]) => seen[rev]);
    results.save = {
      saves: SAVES,
      screen_json_bytes: bytes,
      round_trip_ms: stats(saves),
      // the viewer's `screen` frame, from the save's request and from its answer (0: before the answer)
      viewer_frame_after_request_ms: stats(heard.map(([rev, sent]) => seen[rev] - sent)),
      viewer_frame_after_answer_ms: stats(heard.map(([rev, , done]) => Math.max(0, seen[rev] - done))),
      viewer_missed: SAVES - heard.length,
    };
    await viewer.context().close();
  } finally {
    for (const p of procs.reverse()) await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  results.load_average_at_end = loadavg().map((x) => Math.round(x * 10) / 10);
  console.log(JSON.stringify(results, null, 1));
});
