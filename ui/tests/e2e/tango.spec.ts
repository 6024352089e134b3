/** End to end on the simulated Tango device: values, DevState, spectrum, a write. */
import { expect, openScreen, test, widget } from './fixtures';

test('the Tango screen shows live values, the DevState and a spectrum', async ({ page, stack }) => {
  await openScreen(page, stack, 'tango-demo');
  const double = widget(page, 'label', stack.attr('double')).locator('[data-role=value]');
  await expect(double).toHaveAttribute('data-stale', 'false');
  // the device's first connection: a device server started by the stack on a busy
  // machine may answer the adapter only after some seconds
  await expect(double).not.toHaveText(/disconnected/, { timeout: 45_000 });
  const first = await double.textContent();
  await expect.poll(() => double.textContent()).not.toBe(first);
  const state = widget(page, 'led', stack.attr('devstate'));
  await expect(state.locator('[data-role=value]')).toHaveText(/^(ON|OFF|CLOSE|OPEN|INSERT|EXTRACT|MOVING|STANDBY|FAULT|INIT|RUNNING|ALARM|DISABLE|UNKNOWN)$/);
  await expect(widget(page, 'spectrum', stack.attr('spectrum')).locator('canvas').first()).toBeVisible();
  await expect(widget(page, 'form', stack.attr('boolean')).locator('tbody tr')).toHaveCount(17);
});

test('a write widget changes a Tango attribute', async ({ page, stack }) => {
  await openScreen(page, stack, 'tango-demo', stack.token());
  const menu = widget(page, 'menu', stack.attr('mode'));
  const select = menu.locator('select');
  await expect(select).toBeEnabled();
  const options = await select.locator('option').allTextContents();
  const current = await select.locator('option:checked').textContent();
  const other = options.find((o) => o !== current && o !== '—')!;
  await select.selectOption({ label: other });
  await expect(menu.locator('[data-role=write-status]')).toHaveText('written');
  await expect(select.locator('option:checked')).toHaveText(other);
});

test('a command button runs a Tango command with its argument and shows the output', async ({ page, stack }) => {
  await openScreen(page, stack, 'tango-demo', stack.token());
  const setLevel = page.locator(`[data-widget=command] [data-command="${stack.attr('SetLevel')}"]`);
  await setLevel.locator('[data-role=input]').fill('123.5');
  await setLevel.locator('[data-role=run]').click();
  await expect(setLevel.locator('.confirm')).toContainText('run SetLevel(123.5)?');
  await setLevel.locator('.confirm .yes').click();
  await expect(setLevel.locator('[data-role=write-status]')).toHaveText('→ 123.5');
  // the device took it: the double attribute reads the level back
  await expect(widget(page, 'label', stack.attr('double')).locator('[data-role=value]')).toContainText('123.500');
  await setLevel.locator('[data-role=input]').fill('5000');
  await setLevel.locator('[data-role=run]').click();
  await setLevel.locator('.confirm .yes').click();
  await expect(setLevel.locator('[data-role=write-status]')).toContainText('failed: SIM_OutOfRange');
  const reset = page.locator(`[data-widget=command] [data-command="${stack.attr('Reset')}"]`);
  await reset.locator('[data-role=run]').click();
  await reset.locator('.confirm .yes').click();
  await expect(reset.locator('[data-role=write-status]')).toHaveText('done');
});

test('without a write grant the command button is disabled', async ({ page, stack }) => {
  await openScreen(page, stack, 'tango-demo');
  const reset = page.locator(`[data-widget=command] [data-command="${stack.attr('Reset')}"]`);
  await expect(reset.locator('[data-role=run]')).toBeDisabled();
});
