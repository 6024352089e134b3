/**
 * The editor with NATS down (after the other editor and history tests: a NATS
 * restart loses the in-memory history stream): it says so, keeps the draft, and
 * saves once the bus is back.
 */
import { expect, test } from './fixtures';
import { bind, drop, openEditor, save, savedRevision } from './editing';

test('with NATS down the editor says so and keeps the draft; the save goes through once it is back', async ({ page, stack }) => {
  await openEditor(page, stack, '');
  await drop(page, 'label', 1, 1);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  await page.getByTestId('new-name').fill('e2e-down');
  const r1 = await save(page, 'before the outage');
  await stack.nats.kill();
  await expect(page.getByRole('alert').filter({ hasText: 'The bus (NATS) is down' })).toBeVisible();
  await page.locator('.ed-item[data-type="label"]').click();
  await page.keyboard.press('ArrowRight');
  await page.getByRole('button', { name: 'Save' }).click();
  const error = page.getByTestId('save-error');
  await expect(error).toContainText('The screen store is unavailable');
  await expect(error).toContainText('Your changes are kept in this browser');
  const draft = JSON.parse((await page.evaluate(() => localStorage.getItem('synoptic.draft:e2e-down')))!);
  expect(draft.screen.widgets[0].x).toBe(2);
  await stack.restartNats();
  const state = page.getByTestId('save-state');
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 45_000 });
  // Each try waits for its answer (the editor bounds a save's wait), so a failure names the last error.
  await expect
    .poll(async () => {
      await page.getByRole('button', { name: 'Save' }).click();
      await expect(state).not.toHaveText('saving…', { timeout: 30_000 });
      return `${await state.textContent()} ${(await error.allTextContents()).join(' ')}`.trim();
    }, { timeout: 60_000, intervals: [1000] })
    .toMatch(/^saved · revision \d+$/);
  expect(await savedRevision(page, r1)).toBeGreaterThan(r1);
  expect(await page.evaluate(() => localStorage.getItem('synoptic.draft:e2e-down'))).toBeNull();
});
