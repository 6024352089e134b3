/**
 * A newcomer's first hour in the editor, with real mouse gestures (drag from the
 * palette, drop at a column, corner resize): it fails on any error banner, any
 * overlap nobody asked for, and any widget whose colour contradicts its severity.
 */
import { devices, type Browser, type Page } from '@playwright/test';
import type { Stack } from './stack';
import { expect, test } from './fixtures';
import { bind, drop, openEditor, save } from './editing';
import { noErrorBanner, noOverlap, noViewerOverlap, severityContradictions } from './checks';

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
  await openEditor(page, stack, '');
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
  await expect(page.getByTestId('new-name')).toHaveValue('new-screen');
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
  const editor = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  await openEditor(editor, stack, '');
  await drop(editor, 'led', 1, 1);
  await bind(editor, 'STATE', stack.pv('STATE'));
  await drop(editor, 'bar', 3, 1);
  await bind(editor, 'SINE', stack.pv('SINE'));
  await editor.getByTestId('new-name').fill('first-hour');
  await save(editor, '');
  await editor.context().close();
}

const phone = devices['Pixel 7'];
for (const [profile, use] of [
  ['a 1400-px desktop', { viewport: { width: 1400, height: 900 } }],
  ['a phone', { viewport: phone.viewport, deviceScaleFactor: phone.deviceScaleFactor, isMobile: phone.isMobile, hasTouch: phone.hasTouch, userAgent: phone.userAgent }],
] as const) {
  test(`the saved screen on ${profile}: live, no banner, no overlap, colours that agree with severity`, async ({ browser, stack }) => {
    await ensureSaved(browser, stack);
    const page = await (await browser.newContext(use)).newPage();
    await page.goto(`${stack.baseUrl}/#/screen/first-hour`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');
    await faultReadsTheSame(page);
    await noViewerOverlap(page);
    await noErrorBanner(page);
    await page.context().close();
  });
}
