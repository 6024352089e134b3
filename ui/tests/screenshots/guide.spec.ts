/** Screenshots for docs/user-guide.md (run by `make ui-screenshots`): live values in
 * a quick look, a write asking for confirmation and its result, the EPICS 7 screen,
 * the screen editor and a screen's history, a trend opened with its history. */
import { join } from 'node:path';
import { expect, openScreen, test, widget } from '../e2e/fixtures';
import { ROOT } from '../e2e/stack';
import { handToken } from '../e2e/token';

const out = (name: string) => join(ROOT, 'docs/screenshots', `${name}.png`);

test('screenshots for the user guide', async ({ page, stack }) => {
  await page.setViewportSize({ width: 1200, height: 560 });
  const names = ['SINE', 'NOISE', 'STATE', 'MODE', 'MSG', 'SP'];
  await handToken(page, stack.token());
  await page.goto(`${stack.baseUrl}/#/quick?ch=${names.map((n) => stack.pv(n)).join(',')}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
  for (const n of names) {
    await expect(page.locator(`[data-channel="${stack.pv(n)}"] [data-role=value]`).first()).not.toHaveAttribute('data-stale', 'true');
  }
  await page.screenshot({ path: out('guide-quick-look') });

  await page.setViewportSize({ width: 1440, height: 1000 });
  await openScreen(page, stack, 'epics-demo', stack.token());
  const input = widget(page, 'input', stack.pv('SP'));
  await input.locator('input').fill('42.5');
  await input.locator('input').press('Enter');
  await expect(input.getByRole('button', { name: 'Yes' })).toBeFocused();
  await input.screenshot({ path: out('guide-write-confirm') });
  await page.keyboard.press('Enter');
  await expect(input.locator('[data-role=write-status]')).toHaveText('written');
  await expect(input.locator('[data-role=value]')).toHaveText(/42\.500\s*A/);
  await input.screenshot({ path: out('guide-write-done') });

  // PV Access: a detector image, a table and a structure
  await openScreen(page, stack, 'epics7-demo');
  const image = widget(page, 'image', stack.pva('IMAGE'));
  await expect(image.locator('[data-role=info]')).toHaveText(/^1024×1024 (÷2 )?· auto \d+\.\.\d+$/); // binned to the widget (sub.pts)
  await expect(widget(page, 'image', stack.pva('IMAGE:JPEG')).locator('[data-role=info]')).toHaveText(/ rgb · auto/);
  await expect(widget(page, 'table', stack.pva('TABLE')).locator('tbody tr').first()).toBeVisible();
  await page.screenshot({ path: out('guide-epics7-demo'), fullPage: true });

  // a trend opens with its recent history drawn (the bus keeps it), then goes on live
  await openScreen(page, stack, 'epics-demo');
  const trend = page.locator('[data-widget="trend"]').first();
  await expect.poll(async () => Number(await trend.locator('.w-trend').getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThan(40);
  await page.reload(); // opened again: drawn from history at once
  await expect.poll(async () => Number(await trend.locator('.w-trend').getAttribute('data-history-points')), { timeout: 30_000 }).toBeGreaterThan(40);
  await trend.screenshot({ path: out('guide-trend-history') });

  // the screen editor: a trend selected, its properties beside the grid
  await handToken(page, stack.token('e2e-engineer', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/edit/epics-demo`);
  const editor = page.getByTestId('editor');
  await expect(editor).toBeVisible();
  await editor.locator('.ed-item[data-type="trend"]').first().click();
  await expect(page.locator('[data-prop="title"]')).toHaveValue('sine and walk');
  await page.screenshot({ path: out('guide-editor') });
  // a change saved with a summary, then the screen's history
  await page.locator('[data-prop="title"]').fill('sine and random walk');
  await page.locator('[data-prop="title"]').press('Enter');
  await editor.getByLabel('summary of the change').fill('clearer trend title');
  await editor.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByTestId('save-state')).toHaveText(/^saved · revision \d+$/);
  await editor.getByRole('button', { name: 'History' }).click();
  await expect(page.locator('li[data-revision]').nth(1)).toBeVisible(); // (more when the editor's screenshots saved before)
  await page.screenshot({ path: out('guide-editor-history') });
});
