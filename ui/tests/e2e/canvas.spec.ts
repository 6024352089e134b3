/** Canvas screens against the real stack: pixel boxes scaled to the window, styles, macros from the URL, links, embedded screens, tabs. */
import type { Page } from '@playwright/test';
import type { Stack } from './stack';
import { expect, test, widget } from './fixtures';

async function openCanvas(page: Page, stack: Stack, route: string): Promise<void> {
  await page.goto(`${stack.baseUrl}/#/screen/${route}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
}

test('a canvas screen places widgets in pixels, scaled to the window, with its colours, fonts and macros', async ({ page, stack }) => {
  await openCanvas(page, stack, 'epics-canvas');
  await expect(page.getByRole('heading', { name: 'Canvas demo: DEMO:' })).toBeVisible();
  const root = page.locator('.grid.canvas').first();
  const scale = Number(await root.getAttribute('data-scale'));
  const width = await page.locator('.canvas-area').first().evaluate((e) => e.clientWidth);
  expect(scale).toBeCloseTo(width / 960, 3); // fit-width
  const sine = widget(page, 'label', stack.pv('SINE'));
  const value = sine.locator('[data-role=value]');
  await expect(value).toHaveAttribute('data-stale', 'false');
  await expect(value).toHaveText(/-?\d+\.\d+/);
  const box = await sine.locator('xpath=..').boundingBox();
  const origin = await root.boundingBox();
  expect(box!.x - origin!.x).toBeCloseTo(130 * scale, 0);
  expect(box!.width).toBeCloseTo(140 * scale, 0);
  // Read_Background and black text from the style; the heading in Header 1 (bold 22 px)
  await expect(sine.locator('xpath=..')).toHaveCSS('background-color', 'rgb(240, 240, 240)');
  const heading = page.locator('.abs.t-text').first();
  await expect(heading).toHaveText('Signals of DEMO:');
  await expect(heading).toHaveCSS('font-weight', '700');
  await expect(heading).toHaveCSS('font-size', '22px');
  // the window narrows: the whole canvas scales with it
  await page.setViewportSize({ width: 800, height: 900 });
  await expect.poll(async () => Number(await root.getAttribute('data-scale'))).toBeLessThan(scale);
});

test('macros in the URL override the screen\'s; links, embedded screens and tabs pass them on', async ({ page, stack }) => {
  await openCanvas(page, stack, 'epics-canvas?P=OTHER:');
  await expect(page.locator('.abs.t-text').first()).toHaveText('Signals of OTHER:');
  await expect(page.locator('[data-widget=label][data-channel="ca://OTHER:SINE"]')).toHaveCount(1);
  // the embedded counters screen is live inside its box
  const embedded = page.locator('.w-embed').first();
  const counter = embedded.locator(`[data-channel="${stack.pv('CNT:00000')}"] [data-role=value]`).first();
  await expect(counter).toHaveAttribute('data-stale', 'false');
  // tabs: the second shows the EPICS demo screen
  const tabs = page.locator('.w-tabs');
  await tabs.getByRole('tab', { name: 'EPICS demo' }).click();
  await expect(tabs.locator(`[data-widget=gauge][data-channel="${stack.pv('SINE')}"]`).first()).toBeVisible();
  // a link opens its screen with the macros in effect
  await page.getByRole('link', { name: 'Open the EPICS demo' }).click();
  await expect(page).toHaveURL(/#\/screen\/epics-demo\?P=OTHER%3A$/);
  await expect(page.getByRole('heading', { name: 'EPICS simulated IOC' })).toBeVisible();
});
