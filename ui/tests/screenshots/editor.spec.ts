/** Screenshots of the screen editor for docs/screenshots/ (run by `make ui-screenshots`). */
import { join } from 'node:path';
import { devices } from '@playwright/test';
import { expect, openScreen, test } from '../e2e/fixtures';
import { ROOT } from '../e2e/stack';
import { handToken } from '../e2e/token';

const out = (name: string) => join(ROOT, 'docs/screenshots', `${name}.png`);

test('screenshots of the screen editor', async ({ page, stack }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.evaluate(() => localStorage.setItem('synoptic-theme', 'dark')).catch(() => {});
  await openScreen(page, stack, 'epics-demo'); // its channels are in the directory from here on
  const token = stack.token('alice', ['*'], ['*']);
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/edit/epics-demo`);
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.locator('.ed-item').first()).toBeVisible();
  await page.waitForTimeout(3000); // trends fill: a picture, not an assertion

  // two gauges selected (shift-click), ready to align; the panel shows what they share
  await page.locator('.ed-item[data-type="gauge"]').first().click();
  await page.locator('.ed-item[data-type="bar"]').first().click({ modifiers: ['Shift'] });
  await page.screenshot({ path: out('editor-selection') });

  // one label: its properties, and the channel picker with the highlighted channel live
  await page.locator('.ed-item[data-type="label"]').first().click();
  const picker = page.getByRole('combobox', { name: 'channel 1' });
  await picker.fill('DEMO:S');
  await expect(page.getByTestId('picker-preview')).toBeVisible();
  await page.waitForTimeout(500);
  await page.screenshot({ path: out('editor-channel-picker') });
  await picker.press('Escape');

  // a save, then the history with a preview of the first revision
  await page.locator('.ed-item[data-type="label"]').first().click();
  await page.locator('[data-prop="title"]').fill('sine wave');
  await page.locator('[data-prop="title"]').press('Enter');
  await page.getByRole('textbox', { name: 'summary of the change' }).fill('the sine titled');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('save-state')).toHaveText(/^saved · revision \d+$/);
  await page.getByRole('button', { name: 'History' }).click();
  await expect(page.locator('.revisions li')).toHaveCount(2);
  await page.locator('.revisions li').nth(1).getByRole('button', { name: 'Preview' }).click();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: out('editor-revision-preview') });

});

test('the screen editor on a phone', async ({ browser, stack }) => {
  const phone = devices['Pixel 7'];
  const context = await browser.newContext({ viewport: phone.viewport, deviceScaleFactor: phone.deviceScaleFactor, isMobile: phone.isMobile, hasTouch: phone.hasTouch, userAgent: phone.userAgent });
  const page = await context.newPage();
  await openScreen(page, stack, 'epics-demo');
  await handToken(page, stack.token('alice', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/edit/epics-demo`);
  await expect(page.getByTestId('editor')).toBeVisible();
  // a label tapped: selected on the screen, its panel below
  await page.locator('.ed-item[data-type="label"]').first().tap();
  await expect(page.locator('.ed-item.selected')).toHaveCount(1);
  await page.getByRole('heading', { name: 'EPICS simulated IOC' }).scrollIntoViewIfNeeded();
  await page.waitForTimeout(1000); // values fill: a picture, not an assertion
  await page.screenshot({ path: out('editor-phone') });
  await context.close();
});
