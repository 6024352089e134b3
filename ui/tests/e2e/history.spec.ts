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
