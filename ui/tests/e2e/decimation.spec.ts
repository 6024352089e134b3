/**
 * Arrays sized to the screen, in the browser: a spectrum asks the gateway for two
 * points per pixel (sub.pts) and draws the envelope it gets over the same extent
 * as the full array; zoomed, it asks for the full array.
 */
import type { Page } from '@playwright/test';
import { expect, openScreen, test } from './fixtures';

const WAVE = '[data-widget="spectrum"][data-channel="ca://DEMO:WF100K"] .w-spectrum';

/** The sub frames the page sends, decoded (the app's are JSON-free msgpack: read their channels). */
function subsSent(page: Page): { pts: boolean; text: string }[] {
  const out: { pts: boolean; text: string }[] = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const text = typeof f.payload === 'string' ? f.payload : f.payload.toString('latin1');
      if (text.includes('WF100K')) out.push({ pts: text.includes('pts'), text });
    }),
  );
  return out;
}

async function extentOf(page: Page): Promise<{ seq: string; points: string; extent: number[] }> {
  const el = page.locator(WAVE);
  return el.evaluate((e) => ({
    seq: (e as HTMLElement).dataset.seq ?? '',
    points: (e as HTMLElement).dataset.points ?? '',
    extent: ((e as HTMLElement).dataset.extent ?? '').split(',').map(Number),
  }));
}

test('a reduced waveform spans what the full one does; zoomed, the full array', async ({ page, context, stack }) => {
  const sent = subsSent(page);
  const received: number[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(typeof f.payload === 'string' ? f.payload.length : f.payload.length)));
  await openScreen(page, stack, 'epics-demo');
  const wave = page.locator(WAVE);
  await expect(wave).toHaveAttribute('data-points', /^(512|1024|2048)$/); // ~2 points per pixel of a 4-column plot
  expect(sent.filter((s) => s.pts)).toHaveLength(1);
  expect(sent.filter((s) => !s.pts)).toEqual([]); // the screen's own subscription leaves the waveform out
  expect(Math.max(...received)).toBeLessThan(100_000); // never the 800 KB array

  // the same screen zoomed on another page: the full array
  const full = await context.newPage();
  await openScreen(full, stack, 'epics-demo');
  const chart = full.locator(WAVE).locator('.chart');
  await expect(full.locator(WAVE)).toHaveAttribute('data-points', /\d+/);
  await chart.focus();
  await full.keyboard.press('+');
  await expect(full.locator(WAVE)).toHaveAttribute('data-points', '0');

  // the same value drawn reduced and in full: the same extent (x from 0 to n - 1, y min and max)
  let pair: number[][] | null = null;
  await expect
    .poll(async () => {
      const [a, b] = [await extentOf(page), await extentOf(full)];
      pair = a.seq !== '' && a.seq === b.seq && a.points !== '0' && b.points === '0' ? [a.extent, b.extent] : null;
      return pair !== null;
    }, { timeout: 30_000 })
    .toBe(true);
  const [reduced, whole] = pair!;
  expect(reduced).toEqual(whole);
  expect(reduced.slice(0, 2)).toEqual([0, 99_999]);
  // back to the whole plot: reduced again
  await full.keyboard.press('Home');
  await expect(full.locator(WAVE)).toHaveAttribute('data-points', /^[1-9]\d+$/);
  await full.close();
});
