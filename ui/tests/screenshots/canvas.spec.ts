/** Screenshot for docs/user-guide.md (run by `make ui-screenshots`): the canvas demo,
 * a Phoebus-style display scaled to the window, with a local value written and a rule shown. */
import { join } from 'node:path';
import { expect, test } from '../e2e/fixtures';
import { ROOT } from '../e2e/stack';

test('screenshot of a canvas screen', async ({ page, stack }) => {
  await page.setViewportSize({ width: 1200, height: 1000 });
  await page.goto(`${stack.baseUrl}/#/screen/epics-canvas`);
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
  await expect(page.locator(`[data-channel="${stack.pv('SINE')}"] [data-role=value]`).first()).toHaveAttribute('data-stale', 'false');
  await page.locator('[data-widget=menu] select').selectOption({ label: 'On' });
  await expect(page.getByText('Mode is On (a rule shows this)')).toBeVisible();
  await expect(page.locator('.w-embed [data-role=value][data-stale=false]').first()).toBeVisible();
  await page.screenshot({ path: join(ROOT, 'docs/screenshots', 'guide-canvas.png'), fullPage: true });
});
