/** Trends with history: open with the window drawn, keep updating, zoom out loads older data. */
import { expect, openScreen, test } from './fixtures';

test('a trend opens with history drawn, keeps updating, and zooming out loads older data', async ({ page, stack }) => {
  const trend = page.locator('[data-widget="trend"] .w-trend').first();
  // the first open: the bus has kept the sine since the stack started
  await openScreen(page, stack, 'epics-demo');
  await expect.poll(async () => Number(await trend.getAttribute('data-points'))).toBeGreaterThan(40);
  // opened again: drawn from history at once, before any live value could fill it
  await page.reload();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect.poll(async () => Number(await trend.getAttribute('data-history-points')), { timeout: 10_000 }).toBeGreaterThan(40);
  const from = Number(await trend.getAttribute('data-history-from'));
  expect(Date.now() - from).toBeGreaterThanOrEqual(29_000); // the whole 30 s window asked for
  // and keeps updating with live values
  const drawn = Number(await trend.getAttribute('data-points'));
  await expect.poll(async () => Number(await trend.getAttribute('data-points'))).toBeGreaterThan(drawn + 10);
  // zooming out past the window loads older history
  await trend.locator('.chart').focus();
  await page.keyboard.press('-');
  await expect(trend).toHaveAttribute('data-window-s', '60');
  await expect.poll(async () => Number(await trend.getAttribute('data-history-from'))).toBeLessThan(from - 25_000);
  // so does the wheel, turned out over the whole window
  const wider = Number(await trend.getAttribute('data-history-from'));
  await trend.locator('.chart').hover();
  await page.mouse.wheel(0, 200);
  await expect(trend).toHaveAttribute('data-window-s', '120');
  await expect.poll(async () => Number(await trend.getAttribute('data-history-from'))).toBeLessThan(wider - 55_000);
  // the range picker asks for more; CSV exports what is shown
  await trend.getByLabel('time range').selectOption({ label: '1 h' });
  await expect(trend).toHaveAttribute('data-window-s', '3600');
  const [download] = await Promise.all([page.waitForEvent('download'), trend.getByRole('button', { name: 'CSV' }).click()]);
  const csv = await (await download.createReadStream()).toArray();
  const text = Buffer.concat(csv).toString();
  expect(text.split('\n')[0]).toBe('time,channel,value');
  expect(text).toContain('ca://DEMO:SINE');
  await expect(trend.locator('.hist-error')).toHaveCount(0);
});

test('the trends of a screen opening together ask for their history in one request, each drawn', async ({ page, stack }) => {
  // the hist frames the page sends (msgpack: their channels read as text)
  const hists: string[] = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const text = typeof f.payload === 'string' ? f.payload : f.payload.toString('latin1');
      if (text.includes('hist')) hists.push(text);
    }),
  );
  // the demo screen first: its channels' values are on the bus (adapters publish what is shown)
  await openScreen(page, stack, 'epics-demo');
  await expect.poll(async () => Number(await page.locator('[data-widget="trend"] .w-trend').first().getAttribute('data-points'))).toBeGreaterThan(20);
  const names = ['SINE', 'NOISE', 'WALK', 'CNT:00000'];
  await stack.putRawScreen('e2e-four-trends', {
    version: 1, title: 'Four trends', layout: { type: 'grid', columns: 12, row_height: 28, gap: 4 },
    widgets: names.map((n) => ({ type: 'trend', title: n, channels: [stack.pv(n)], w: 4, h: 4, options: { window_s: 30 } })),
  });
  const before = hists.length;
  await openScreen(page, stack, 'e2e-four-trends');
  const trends = page.locator('[data-widget="trend"] .w-trend');
  await expect(trends).toHaveCount(names.length);
  for (let k = 0; k < names.length; k++) {
    await expect.poll(async () => Number(await trends.nth(k).getAttribute('data-history-points')), { timeout: 15_000 }).toBeGreaterThan(0);
  }
  const opening = hists.slice(before);
  expect(opening).toHaveLength(1);
  for (const n of names) expect(opening[0]).toContain(stack.pv(n));
  await expect(page.locator('.hist-error')).toHaveCount(0);
});
