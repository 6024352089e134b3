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

test('local, simulated and formula channels are served by the browser, writable without a grant, never sent to the gateway', async ({ page, stack }) => {
  const sent: string[] = [];
  page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(typeof f.payload === 'string' ? f.payload : f.payload.toString('latin1'))));
  await openCanvas(page, stack, 'epics-canvas');
  const sine = page.locator('[data-channel="sim://sine(0, 10, 0.5)"][data-widget=label]');
  await expect(sine).toHaveAttribute('data-stale', 'false');
  const first = await sine.textContent();
  await expect.poll(() => sine.textContent()).not.toBe(first); // a new value every 0.5 s
  // formula = SINE * gain: follows the IOC's value and the local gain
  const formula = page.locator('[data-widget=label][data-channel^="=`ca://DEMO:SINE`"]');
  const sineIoc = widget(page, 'label', stack.pv('SINE')).locator('[data-role=value]');
  await expect(formula).toHaveAttribute('data-stale', 'false');
  const ratio = async () => {
    const [f, s] = [parseFloat((await formula.textContent())!), parseFloat((await sineIoc.textContent())!)];
    return Math.abs(s) > 0.5 ? Math.round(f / s) : null;
  };
  await expect.poll(ratio, { timeout: 20_000 }).toBe(2);
  await expect(page.locator('.access')).toHaveText('values: view only'); // no write grant …
  const gain = page.locator('[data-widget=input][data-channel="loc://gain(2)"] input');
  await expect(gain).toBeEnabled(); // … but a local value is this tab's own
  await gain.fill('5');
  await gain.press('Enter');
  await expect.poll(ratio, { timeout: 20_000 }).toBe(5);
  // an enum local value drives the LED beside its menu
  await page.locator('[data-widget=menu] select').selectOption({ label: 'On' });
  await expect(page.locator('[data-widget=led][data-channel^="loc://mode"]')).toContainText('On');
  // … and a rule on it shows a text that was hidden
  await expect(page.getByText('Mode is On (a rule shows this)')).toBeVisible();
  await page.locator('[data-widget=menu] select').selectOption({ label: 'Off' });
  await expect(page.getByText('Mode is On (a rule shows this)')).toBeHidden();
  // the gateway saw the formula's input, never the browser's own channels
  const frames = sent.join('\n');
  expect(frames).toContain('DEMO:SINE');
  expect(frames).not.toContain('loc://');
  expect(frames).not.toContain('sim://sine');
  expect(frames).not.toContain('=`');
});
