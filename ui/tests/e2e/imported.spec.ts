/** Imported displays, live: a Phoebus .bob over the simulated IOC and a Taranta .wj over the simulated Tango
 * device, converted by the gateway (POST /api/import), saved, opened as canvas screens. */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, test, widget } from './fixtures';
import { BOB, WJ, importAndSave, openImported } from './importing';

test('an imported .bob is a live canvas with its fonts, local and formula channels and rules; its decorations drawn; what has no mapping is a labelled placeholder', async ({ page, stack }) => {
  const { name, report, screen } = await importAndSave(page, stack, 'imported-demo.bob', BOB, '&macro=P%3DDEMO%3A');
  expect(report.widgets).toBe(10);
  expect(screen.layout).toEqual({ type: 'canvas', width: 600, height: 300 });
  await openImported(page, stack, name);
  await expect(page.getByText('Sector DEMO:')).toBeVisible();
  await expect(page.locator('.abs.t-text').first()).toHaveCSS('font-size', '18px'); // Header 2
  const counter = page.locator(`[data-channel="${stack.pv('CNT:00000')}"]`).first();
  const value = counter.locator('[data-role=value]').or(counter.and(page.locator('[data-role=value]'))).first();
  await expect(value).toHaveAttribute('data-stale', 'false');
  const first = parseFloat((await value.textContent())!);
  await expect.poll(async () => parseFloat((await value.textContent())!)).toBeGreaterThan(first);
  await expect(page.locator(`[data-widget=led][data-channel="${stack.pv('STATE')}"]`)).toHaveCount(1);
  await expect(page.locator(`[data-widget=bar][data-channel="${stack.pv('SINE')}"]`)).toHaveCount(1);
  // the box is the display's pixels, scaled to the window's width
  const root = page.locator('.grid.canvas').first();
  const scale = Number(await root.getAttribute('data-scale'));
  const sine = widget(page, 'label', stack.pv('SINE')).locator('xpath=..');
  expect((await sine.boundingBox())!.width).toBeCloseTo(120 * scale, 0);
  // the local PV and the formula over it run in the browser: writing the local changes the formula
  const formula = page.locator('[data-widget=label][data-channel="=`loc://gain`*2"]');
  await expect(formula).toHaveText(/^6(\.0+)?$/);
  const gain = page.locator('[data-widget=input][data-channel="loc://gain(3)"] input').first();
  await gain.fill('20');
  await gain.press('Enter');
  await expect(formula).toHaveText(/^40(\.0+)?$/);
  // the open-display button is a link to the screen its file becomes
  await expect(page.getByRole('link', { name: 'EPICS demo' })).toBeVisible();
  // the polyline decoration is drawn through its points
  await expect(page.locator('[data-widget=shape] polyline')).toHaveAttribute('points', '0,30 100,30 100,0 200,0');
  // never dropped: the web browser has no mapping and is a visible placeholder naming its original type
  const placeholder = page.locator('[data-widget=placeholder]');
  await expect(placeholder).toBeVisible();
  await expect(placeholder).toContainText('web_browser');
});

test('an imported Taranta .wj is a live canvas against the simulated Tango device', async ({ page, stack }) => {
  const host = encodeURIComponent(`127.0.0.1:${stack.tangoPort}`);
  const { name, report } = await importAndSave(page, stack, 'imported-tango.wj', WJ, `&tango_host=${host}`);
  expect(report.widgets).toBe(8);
  expect(report.placeholders).toEqual({});
  expect(report.mapped['COMMAND_EXECUTOR → command']).toBe(1);
  await openImported(page, stack, name);
  await expect(page.getByText('Simulated Tango device')).toBeVisible();
  const double = widget(page, 'label', stack.attr('double')).locator('[data-role=value]');
  await expect(double).toHaveAttribute('data-stale', 'false');
  const first = await double.textContent();
  await expect.poll(() => double.textContent()).not.toBe(first);
  await expect(widget(page, 'label', stack.attr('state')).locator('[data-role=value]')).toHaveText(/^[A-Z]+$/);
  await expect(widget(page, 'spectrum', stack.attr('spectrum')).locator('canvas').first()).toBeVisible();
  await expect(widget(page, 'trend', stack.attr('double')).locator('canvas').first()).toBeVisible();
  // the command executor is a command button for the device's Init (disabled: no write grant here)
  const init = page.locator(`[data-widget=command] [data-command="${stack.attr('init')}"]`);
  await expect(init.locator('[data-role=run]')).toHaveText('Init');
  await expect(page.locator('[data-widget=placeholder]')).toHaveCount(0);
});

test('a third-party Phoebus screen (monitors_led.bob) imports whole and its LEDs and text update run live from sim:// channels', async ({ page, stack }) => {
  const file = new URL('../../../importer/tests/realworld/phoebus/monitors_led.bob', import.meta.url);
  const { name, report } = await importAndSave(page, stack, 'monitors_led.bob', readFileSync(file, 'utf8'));
  expect(report.placeholders).toEqual({});
  await openImported(page, stack, name);
  const ramp = 'sim://ramp(0, 4, 1)';
  const leds = page.locator(`[data-widget=led][data-channel="${ramp}"]`);
  await expect(leds).toHaveCount(16);
  await expect(page.locator('.abs.t-shape ellipse')).toHaveCount(2); // the multi-state LEDs: lamps filled by state
  const lampFill = () => page.locator('.abs.t-shape').first().evaluate((el) => (el as HTMLElement).style.getPropertyValue('--w-bg'));
  const fill = await lampFill();
  await expect.poll(lampFill, { timeout: 10_000 }).not.toBe(fill); // the state, and its colour, follow the ramp
  const value = page.locator(`[data-widget=label][data-channel="${ramp}"]`).locator('[data-role=value]').or(page.locator(`[data-widget=label][data-channel="${ramp}"][data-role=value]`)).first();
  await expect(value).toHaveAttribute('data-stale', 'false');
  const first = await value.textContent();
  await expect.poll(() => value.textContent(), { timeout: 10_000 }).not.toBe(first); // the ramp steps every second
  // every LED is live, and some are lit at some point of the ramp
  await expect.poll(async () => leds.evaluateAll((els) => els.filter((e) => (e.closest('[data-on]') ?? e.querySelector('[data-on]'))?.getAttribute('data-on') === 'true').length), { timeout: 10_000 }).toBeGreaterThan(0);
});

test('every third-party screen of the real corpus imports through the gateway and draws all its widgets', async ({ page, stack }) => {
  const root = new URL('../../../importer/tests/realworld/', import.meta.url);
  // the single files (whole sets are imported as sites: sets.spec.ts)
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(bob|opi|wj)$/.test(f) && !f.startsWith('sets/')).sort();
  expect(files.length).toBeGreaterThanOrEqual(16);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  for (const file of files) {
    const base = file.split('/').pop()!;
    const { name, screen } = await importAndSave(page, stack, `real-${base}`, readFileSync(new URL(file, root), 'utf8'), '&tango_host=127.0.0.1%3A10000');
    await page.goto(`${stack.baseUrl}/#/screen/${name}`);
    await expect(page.locator('.grid.canvas').first().locator(':scope > .abs'), file).toHaveCount(screen.widgets.length);
  }
  expect(errors).toEqual([]);
});
