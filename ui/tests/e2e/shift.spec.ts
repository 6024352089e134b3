/**
 * Circular buffers as shifts, in the browser: the EPICS demo's WF1K (a compress
 * record in circular-buffer mode fed by the 10 Hz sine) reaches the page as its new
 * samples only (sub.shift), and the array the page rebuilds and the plot it draws
 * equal, value for value, the full array a subscription without shift gets.
 */
import { expect, openScreen, test, widget } from './fixtures';

const WF1K = '[data-widget="spectrum"][data-channel="ca://DEMO:WF1K"] .w-spectrum';

test('WF1K is drawn from shift updates and equals the full array of the same seq', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  await expect(widget(page, 'spectrum', stack.pv('WF1K')).locator('.w-spectrum')).toBeVisible();
  // a reference in the same page: a JSON socket of its own, WF1K without shift
  await page.evaluate((uri) => {
    const ref = new Map<number, number[]>();
    (globalThis as unknown as { __ref: Map<number, number[]> }).__ref = ref;
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?format=json`);
    const keep = (v: { seq: number; v: { b64: string } } | null) => {
      if (!v?.v?.b64) return;
      const bytes = Uint8Array.from(atob(v.v.b64), (c) => c.charCodeAt(0));
      ref.set(v.seq, Array.from(new Float64Array(bytes.buffer)));
    };
    ws.onmessage = (e) => {
      const f = JSON.parse(e.data as string);
      if (f.op === 'hello') ws.send(JSON.stringify({ op: 'sub', id: 1, ch: [uri] }));
      else if (f.op === 'snap' || f.op === 'upd') f.val.forEach(keep);
    };
  }, stack.pv('WF1K'));
  type Check = { shifted: number; misses: number; seq: number; same: boolean; n: number; extent: string; refExtent: string };
  const check = () =>
    page.evaluate(
      ({ uri, sel }): Check => {
        const g = globalThis as unknown as {
          __synoptic: { stats: { shifted: number; shiftMisses: number }; channel(u: string): { current?: { seq?: number; v?: { data?: Float64Array } } } };
          __ref: Map<number, number[]>;
        };
        const cur = g.__synoptic.channel(uri).current;
        const host = document.querySelector(sel) as HTMLElement | null;
        const seq = Number(host?.dataset.seq ?? cur?.seq ?? 0);
        const data = cur?.seq === seq ? Array.from(cur?.v?.data ?? []) : [];
        const ref = g.__ref.get(seq);
        const same = !!ref && data.length === ref.length && data.every((x, k) => Object.is(x, ref[k]));
        const refExtent = ref ? `0,${ref.length - 1},${Math.min(...ref)},${Math.max(...ref)}` : '';
        return { shifted: g.__synoptic.stats.shifted, misses: g.__synoptic.stats.shiftMisses, seq, same, n: data.length, extent: host?.dataset.extent ?? '', refExtent };
      },
      { uri: stack.pv('WF1K'), sel: WF1K },
    );
  // shift updates arrive and are applied; the drawn value equals the reference one
  let last: Check | null = null;
  await expect
    .poll(async () => {
      last = await check();
      return last.shifted >= 20 && last.same && last.extent === last.refExtent;
    }, { timeout: 60_000 })
    .toBe(true);
  const first = last!;
  expect(first.misses).toBe(0);
  expect(first.n).toBeGreaterThan(10);
  // and keeps equal as it shifts on (several later values, each checked whole)
  let matched = 0;
  let seen = first.seq;
  await expect
    .poll(async () => {
      const c = await check();
      if (c.seq > seen && c.same && c.extent === c.refExtent) {
        matched++;
        seen = c.seq;
      }
      return matched;
    }, { timeout: 60_000 })
    .toBeGreaterThanOrEqual(5);
  expect((await check()).misses).toBe(0);
});
