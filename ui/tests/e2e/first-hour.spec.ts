/**
 * A newcomer's first hour, on a 1400-px desktop and on a phone: the screen list, a
 * new screen, widgets from the palette (real gestures: with a mouse on the desktop, a
 * drag from the palette, a drop at a column, a corner resize; with a finger on the
 * phone, taps, a type held and dragged to a column, a widget moved, a corner resize),
 * channels from the picker, save, view, share a link, import a display, a quick look.
 * It fails on any error banner, any overlap nobody asked for, any widget whose colour
 * contradicts its severity, and on the phone any page wider than the screen.
 */
import { devices, type Browser, type BrowserContextOptions, type CDPSession, type Locator, type Page } from '@playwright/test';
import type { Stack } from './stack';
import { expect, openScreen, test } from './fixtures';
import { bind, drop, save } from './editing';
import { noErrorBanner, noOverlap, noViewerOverlap, severityContradictions } from './checks';
import { BOB } from './importing';
import { handToken } from './token';

const phone = devices['Pixel 7'];
const PHONE: BrowserContextOptions = { viewport: phone.viewport, deviceScaleFactor: phone.deviceScaleFactor, isMobile: phone.isMobile, hasTouch: phone.hasTouch, userAgent: phone.userAgent };
const DESKTOP: BrowserContextOptions = { viewport: { width: 1400, height: 900 } };

/** The page is no wider than its window (nothing to scroll sideways). */
async function noSidewaysScroll(page: Page): Promise<void> {
  const { wide, window } = await page.evaluate(() => ({ wide: document.documentElement.scrollWidth, window: innerWidth }));
  expect(wide, 'the page scrolls sideways').toBeLessThanOrEqual(window);
}

/**
 * A new screen as a newcomer makes one: the screen list's "+ New screen", then Create
 * (a 12-column grid). The demo screen is viewed first: its channels are in the directory.
 */
async function newFromTheList(page: Page, stack: Stack, title: string): Promise<void> {
  await openScreen(page, stack, 'epics-demo');
  await handToken(page, stack.token('alice', ['*'], ['*']));
  await page.goto(`${stack.baseUrl}/#/`);
  await page.getByRole('link', { name: '+ New screen' }).click();
  await page.getByTestId('new-title').fill(title);
  await page.getByTestId('new-screen').getByRole('button', { name: 'Create' }).click();
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
}

/** Waits until an LED shows "Fault" (a major alarm) with no widget's colour contradicting its severity. */
async function faultReadsTheSame(page: Page): Promise<void> {
  await expect
    .poll(async () => {
      const { bad, seen } = await severityContradictions(page);
      expect(bad).toEqual([]);
      return seen;
    })
    .toContain('Fault:sev-major');
}

test('widgets dropped, bound, resized and deleted: no banner, no overlap, lamps in their alarm colour', async ({ page, stack }) => {
  await newFromTheList(page, stack, 'First hour');
  const canvas = page.getByTestId('canvas');
  const item = (type: string) => page.locator(`.ed-item[data-type="${type}"]`);
  const field = (prop: string) => page.locator(`input[data-prop="${prop}"]`);

  // a text dropped at column 11 stays at column 11, cut to the two columns left
  await drop(page, 'text', 11, 1);
  await expect(item('text')).toHaveAttribute('data-x', '11');
  await expect(field('w')).toHaveValue('2');

  // two labels on the same channel (the gateway gives both one subscription):
  // deleting one leaves the other live, and no protocol words reach the page
  await drop(page, 'label', 1, 2);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  await drop(page, 'label', 3, 2);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  const labels = item('label');
  await expect(labels).toHaveCount(2);
  await labels.first().click();
  await page.keyboard.press('Delete');
  await expect(labels).toHaveCount(1);
  const value = labels.first().locator('[data-role=value]');
  const before = await value.textContent();
  await expect(value).not.toHaveText(before!); // still updating
  await labels.first().click();
  await page.keyboard.press('Delete');
  await expect(labels).toHaveCount(0);
  await noErrorBanner(page);

  // an input dropped left of a label is cut at the label, not laid over it
  // (each bound as it is dropped: a label, an input or a bar without a channel is not saved)
  await drop(page, 'label', 9, 4);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  await drop(page, 'input', 7, 4);
  await expect(item('input')).toHaveAttribute('data-x', '7');
  await expect(field('w')).toHaveValue('2');
  await bind(page, 'DEMO:MOD', stack.pv('MODE'));
  await noOverlap(page);

  // a bar made one row taller by its corner keeps its width
  await drop(page, 'bar', 1, 7);
  await bind(page, 'DEMO:SIN', stack.pv('SINE'));
  const bar = item('bar');
  const wide = (await bar.boundingBox())!.width;
  const h = (await bar.locator('.ed-handle').boundingBox())!;
  await page.mouse.move(h.x + 4, h.y + 4);
  await page.mouse.down();
  await page.mouse.move(h.x + 4, h.y + 4 + 34, { steps: 5 });
  await page.mouse.up();
  await expect(field('h')).toHaveValue('3');
  await expect(field('w')).toHaveValue('3');
  await expect.poll(async () => Math.round((await bar.boundingBox())!.width)).toBe(Math.round(wide));

  // an LED on an enum channel in alarm ("Fault", MAJOR) is lit in the major colour
  await drop(page, 'led', 5, 7);
  await bind(page, 'STATE', stack.pv('STATE')); // any part of the name finds it
  await faultReadsTheSame(page);
  await noOverlap(page);
  await noErrorBanner(page);
  await expect(canvas).toBeVisible();

  // the name of the address comes from the title; the first save gives the address
  await expect(page.getByTestId('new-name')).toHaveValue('first-hour');
  await page.getByTestId('new-name').fill('epics-demo');
  await expect(page.getByTestId('name-taken')).toContainText("'epics-demo' exists already");
  await page.getByTestId('new-name').fill('first-hour');
  await expect(page.getByTestId('name-taken')).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'summary of the change' })).toHaveAttribute('placeholder', 'added 1 text, 1 label, 1 input, 1 bar, 1 LED');
  await save(page, '');
  await expect(page).toHaveURL(/#\/edit\/first-hour$/);

  // selecting a widget while the history is open shows the widget
  const history = page.getByRole('button', { name: 'History', exact: true }); // not the panel's 'close history'
  await history.click();
  await expect(history).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByRole('button', { name: 'close history' })).toBeVisible();
  await item('led').click();
  await expect(history).toHaveAttribute('aria-pressed', 'false');
  await expect(page.getByRole('button', { name: 'close history' })).toHaveCount(0);
  await noErrorBanner(page);
});

/** The screen the walk above saves, made here when this test runs alone. */
async function ensureSaved(browser: Browser, stack: Stack): Promise<void> {
  const probe = await fetch(`${stack.baseUrl}/api/screens/first-hour`, { headers: { Authorization: `Bearer ${stack.token('alice', ['*'], ['*'])}` } });
  if (probe.ok) return;
  const editor = await (await browser.newContext(DESKTOP)).newPage();
  await newFromTheList(editor, stack, 'First hour');
  await drop(editor, 'led', 1, 1);
  await bind(editor, 'STATE', stack.pv('STATE'));
  await drop(editor, 'bar', 3, 1);
  await bind(editor, 'SINE', stack.pv('SINE'));
  await editor.getByTestId('new-name').fill('first-hour');
  await save(editor, '');
  await editor.context().close();
}

for (const [profile, use, suffix] of [
  ['a 1400-px desktop', DESKTOP, 'desktop'],
  ['a phone', PHONE, 'phone'],
] as const) {
  test(`on ${profile}: the saved screen live, its link shared, a display imported, a quick look; no banner, no overlap, colours that agree with severity`, async ({ browser, stack }) => {
    await ensureSaved(browser, stack);
    const context = await browser.newContext(use);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    await handToken(page, stack.token('alice', ['*'], ['*']));
    await page.goto(`${stack.baseUrl}/#/`);
    await page.getByRole('link', { name: 'First hour', exact: true }).first().click(); // the screen list, by its title
    await expect(page).toHaveURL(/#\/screen\/first-hour$/);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
    await faultReadsTheSame(page);
    await noViewerOverlap(page);
    await noErrorBanner(page);
    await noSidewaysScroll(page);

    // share a link: Copy link puts the address on the clipboard; it opens the same screen
    await page.getByRole('button', { name: 'Copy link' }).click();
    await expect(page.getByTestId('link-copied')).toHaveText('link copied');
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(`${stack.baseUrl}/#/screen/first-hour`);
    const other = await (await browser.newContext(use)).newPage();
    await other.goto(link);
    await expect(other.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await faultReadsTheSame(other);
    await other.context().close();

    // import a display from the screen list: its report, saved, opened live
    await page.getByRole('link', { name: 'Screens', exact: true }).click();
    await page.getByTestId('import-file').setInputFiles({ name: 'sector.bob', mimeType: 'application/octet-stream', buffer: Buffer.from(BOB.replaceAll('NOPE:', 'DEMO:')) });
    await expect(page.getByTestId('import-report')).toContainText('9 of 10 widgets mapped');
    await page.getByTestId('import-name').fill(`sector-${suffix}`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByRole('link', { name: `sector-${suffix}` }).click();
    await expect(page.locator('.grid.canvas').first()).toHaveAttribute('data-ready', 'true');
    await expect(page.getByText('Sector DEMO:')).toBeVisible();
    await noErrorBanner(page);
    await noSidewaysScroll(page);

    // a quick look from the list: typed channels, live at once
    await page.getByRole('link', { name: 'Screens', exact: true }).click();
    await page.getByRole('link', { name: 'Quick look →' }).click();
    await page.getByLabel('channel URIs').fill([stack.pv('SINE'), stack.pv('STATE')].join('\n'));
    await page.getByLabel('channel URIs').press('Control+Enter');
    const rows = page.locator('.w-form tbody tr');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0).locator('[data-role=value]')).toHaveText(/-?\d+\.\d{3}/);
    await noErrorBanner(page);
    await noSidewaysScroll(page);
    await context.close();
  });
}

/** Bind the selected widget's next channel with a finger: type, wait for the search's best match, tap it. */
async function pick(page: Page, search: string, uri: string): Promise<void> {
  await page.getByRole('combobox', { name: 'add channel' }).fill(search);
  const best = page.getByRole('listbox', { name: 'channels' }).getByRole('option').first(); // not a menu's options in the panel
  await expect(best).toHaveAccessibleName(uri); // the list of this search, not of the one before (it moves)
  await best.tap();
}

/** Chromium's double-tap timeout, and a margin. */
const DOUBLE_TAP_WINDOW_MS = 400;

/** A finger on the screen as a phone sends it (touch events, which the page sees as pointer events too). */
function finger(cdp: CDPSession) {
  const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', x = 0, y = 0) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y }] });
  return {
    down: (x: number, y: number) => touch('touchStart', x, y),
    /** to (x, y) in a few steps from (x0, y0) */
    async move(x0: number, y0: number, x: number, y: number, steps = 5): Promise<void> {
      for (let i = 1; i <= steps; i++) await touch('touchMove', x0 + ((x - x0) * i) / steps, y0 + ((y - y0) * i) / steps);
    },
    up: () => touch('touchEnd'),
  };
}

/** The centre of an element, in the window's coordinates. */
async function centre(locator: Locator): Promise<{ x: number; y: number }> {
  const b = (await locator.boundingBox())!;
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/**
 * Tap Save and wait for its answer. The tap must have been a click (a tap the browser
 * did not turn into one fails here, not as a save that never came); the answer is
 * awaited as long as the editor itself waits for the gateway (20 s), and a refused or
 * failed save fails with the reason the editor shows.
 */
async function tapSave(page: Page): Promise<void> {
  const button = page.getByRole('button', { name: 'Save' });
  await expect(button).toBeEnabled();
  // Desktop Chromium's emulated touch keeps double-tap detection on: a tap within its
  // 300 ms window of an earlier tap (here: the label's, a quick drag between) is taken
  // as a double tap and clicks nothing. No event marks the window's end; a person's
  // taps on two controls are further apart than this anyway.
  await page.waitForTimeout(DOUBLE_TAP_WINDOW_MS);
  const clicked = button.evaluate((b) => new Promise<void>((done) => b.addEventListener('click', () => done(), { once: true })));
  await button.tap();
  await clicked;
  const state = page.getByTestId('save-state');
  const refused = page.locator('[data-testid=save-error], [data-testid=invalid], [data-testid=conflict]');
  await expect(refused.or(state.filter({ hasText: /^saved · revision \d+$/ }))).toBeVisible({ timeout: 30_000 });
  await expect(refused).toHaveCount(0);
  await expect(state).toHaveText(/^saved · revision \d+$/);
}

test('the editor on a phone: a tap places and selects, the panel and the channel picker are reached, a finger drags a type from the palette to a column, moves a widget and resizes by the corner; nothing scrolls sideways', async ({ browser, stack }) => {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  await newFromTheList(page, stack, 'On a phone');
  await noSidewaysScroll(page);
  const item = (type: string) => page.locator(`.ed-item[data-type="${type}"]`);
  const panel = page.getByRole('complementary', { name: 'properties' });

  // a tap on a type adds it and selects it; its panel is below the screen
  await page.locator('[data-palette="label"]').tap();
  await expect(item('label')).toHaveClass(/selected/);
  const picker = page.getByRole('combobox', { name: 'add channel' });
  await picker.scrollIntoViewIfNeeded();
  await expect(panel).toBeInViewport({ ratio: 0.1 });
  await picker.tap();
  await pick(page, 'sine', stack.pv('SINE'));
  await expect(item('label').locator('[data-role=value]')).toHaveText(/-?\d+\.\d{3}/);
  await noSidewaysScroll(page);

  await page.locator('[data-palette="led"]').tap();
  await expect(item('led')).toHaveClass(/selected/);
  await expect(item('label')).not.toHaveClass(/selected/);
  await pick(page, 'STATE', stack.pv('STATE'));
  await faultReadsTheSame(page);

  // a finger holds a type until it lifts, drags it onto the screen and lets go on
  // column 7 of row 4: it lands there (cut to the columns left)
  const hand = finger(await context.newCDPSession(page));
  const field = (prop: string) => page.locator(`input[data-prop="${prop}"]`);
  const type = page.locator('[data-palette="text"]');
  await page.locator('.ed-palette').evaluate((el) => el.scrollIntoView({ block: 'start' })); // the palette and the screen's first rows in view
  const canvas = (await page.getByTestId('canvas').boundingBox())!;
  const pitch = (canvas.width + 4) / 12;
  const from = await centre(type);
  const to = { x: canvas.x + 6 * pitch + pitch / 2, y: canvas.y + 3 * 34 + 15 };
  await hand.down(from.x, from.y);
  await expect(type).toHaveClass(/lifted/); // the hold: a swipe from the palette scrolls instead
  await hand.move(from.x, from.y, to.x, to.y);
  await hand.up();
  await expect(item('text')).toHaveClass(/selected/);
  await expect(item('text')).toHaveAttribute('data-x', '7');
  await expect(item('text')).toHaveAttribute('data-y', '4');
  await expect(field('w')).toHaveValue('6');

  // a finger moves the lamp two columns to the right
  const x0 = Number(await item('led').getAttribute('data-x'));
  const lamp = await centre(item('led'));
  await hand.down(lamp.x, lamp.y);
  await hand.move(lamp.x, lamp.y, lamp.x + 2 * pitch, lamp.y);
  await hand.up();
  await expect(item('led')).toHaveAttribute('data-x', String(x0 + 2));

  // a tap selects; a finger on the corner makes the label one row taller
  await item('label').tap();
  await expect(item('label')).toHaveClass(/selected/);
  const [w, h] = [await field('w').inputValue(), Number(await field('h').inputValue())];
  const corner = await centre(item('label').locator('.ed-handle'));
  await hand.down(corner.x, corner.y);
  await hand.move(corner.x, corner.y, corner.x, corner.y + 36);
  await hand.up();
  await expect(field('h')).toHaveValue(String(h + 1));
  await expect(field('w')).toHaveValue(w);
  await noOverlap(page);
  await noErrorBanner(page);
  await noSidewaysScroll(page);

  // saved from the phone, then viewed there
  await expect(page.getByTestId('new-name')).toHaveValue('on-a-phone');
  await tapSave(page);
  await page.getByRole('link', { name: '← view' }).tap();
  await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
  await faultReadsTheSame(page);
  await noViewerOverlap(page);
  await noSidewaysScroll(page);
  await context.close();
});
