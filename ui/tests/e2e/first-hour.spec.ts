/**
 * A newcomer's first hour in the editor, with real mouse gestures (drag from the
 * palette, drop at a column, corner resize): it fails on any error banner, any
 * overlap nobody asked for, and any widget whose colour contradicts its severity.
 */
import { expect, test } from './fixtures';
import { bind, drop, openEditor } from './editing';
import { noErrorBanner, noOverlap, severityContradictions } from './checks';

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
  await drop(page, 'label', 9, 4);
  await drop(page, 'input', 7, 4);
  await expect(item('input')).toHaveAttribute('data-x', '7');
  await expect(field('w')).toHaveValue('2');
  await noOverlap(page);

  // a bar made one row taller by its corner keeps its width
  await drop(page, 'bar', 1, 7);
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
  await bind(page, 'DEMO:STA', stack.pv('STATE'));
  await expect
    .poll(async () => {
      const { bad, seen } = await severityContradictions(page);
      expect(bad).toEqual([]);
      return seen;
    })
    .toContain('Fault:sev-major');
  await noOverlap(page);
  await noErrorBanner(page);
  await expect(canvas).toBeVisible();
});
