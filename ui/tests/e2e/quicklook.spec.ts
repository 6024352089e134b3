/** End to end: the quick-look page builds a form from typed URIs and saves it as a screen. */
import { readFileSync } from 'node:fs';
import { expect, test } from './fixtures';

test('quick look: typed URIs give an instant form, saved as a screen file', async ({ page, stack }) => {
  await page.goto(`${stack.baseUrl}/#/quick`);
  const uris = [stack.pv('SINE'), stack.pv('MODE'), stack.attr('double'), 'not-a-uri'];
  await page.getByLabel('channel URIs').fill(uris.join('\n'));
  await page.getByLabel('channel URIs').press('Control+Enter');
  await expect(page.getByRole('alert')).toContainText('not-a-uri');
  const rows = page.locator('.w-form tbody tr');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0).locator('[data-role=value]')).toHaveText(/-?\d+\.\d{3}/);
  await expect(rows.nth(2).locator('[data-role=value]')).toHaveAttribute('data-stale', 'false');
  await expect(page).toHaveURL(/#\/quick\?ch=/);

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Save as screen' }).click();
  const saved = JSON.parse(readFileSync(await (await download).path(), 'utf8'));
  expect(saved.widgets[0].type).toBe('form');
  expect(saved.widgets[0].channels).toEqual(uris.slice(0, 3));
});
