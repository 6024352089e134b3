/** End to end against the real stack: values, outside writes, write widgets. */
import { expect, openScreen, test, widget } from './fixtures';

test('the list page shows the screens the gateway serves', async ({ page, stack }) => {
  await page.goto(`${stack.baseUrl}/`);
  await expect(page.getByRole('link', { name: 'EPICS simulated IOC' })).toBeVisible();
  await page.getByRole('link', { name: 'EPICS simulated IOC' }).click();
  await expect(page).toHaveURL(/#\/screen\/epics-demo$/);
  await expect(page.getByRole('heading', { name: 'EPICS simulated IOC' })).toBeVisible();
});

test('a screen shows live values that change', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const counter = widget(page, 'label', stack.pv('CNT:00000')).locator('[data-role=value]');
  await expect(counter).toHaveAttribute('data-stale', 'false');
  await expect(counter).toHaveText(/^\s*\d+/);
  const first = Number((await counter.textContent())!.trim());
  await expect.poll(async () => Number((await counter.textContent())!.trim())).toBeGreaterThan(first + 5);
  // a value with alarm limits gets its severity class, units and precision
  const sine = widget(page, 'label', stack.pv('SINE')).locator('[data-role=value]');
  await expect(sine).toHaveText(/-?\d+\.\d{3}\s*mm/);
  await expect(sine).toHaveClass(/sev-(ok|minor|major)/);
});

test('a caput from outside changes the widget', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const sp = widget(page, 'input', stack.pv('SP')).locator('[data-role=value]');
  await stack.put(stack.pv('SP'), '85');
  await expect(sp).toHaveText(/85\.000\s*A/);
  await expect(sp).toHaveClass(/sev-minor/); // HIGH = 80, MINOR
});

test('write widgets are disabled without a write grant', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  await expect(page.locator('.access')).toHaveText('values: view only');
  await expect(widget(page, 'input', stack.pv('SP')).locator('input')).toBeDisabled();
  await expect(widget(page, 'button', stack.pv('SP')).locator('button')).toBeDisabled();
  await expect(widget(page, 'toggle', stack.pv('MODE')).locator('button')).toBeDisabled();
  await expect(widget(page, 'menu', stack.pv('MODE')).locator('select')).toBeDisabled();
});

test('a write widget changes the PV; a read-only channel offers no write', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo', stack.token());
  await expect(page.locator('.access')).toHaveText('values: can set');
  const input = widget(page, 'input', stack.pv('SP'));
  await input.locator('input').fill('33.25');
  await input.locator('input').press('Enter');
  await expect(input.getByText('write 33.25?')).toBeVisible(); // confirmation first
  await expect(input.getByRole('button', { name: 'Yes' })).toBeFocused();
  await page.keyboard.press('Enter'); // keyboard only
  await expect(input.locator('[data-role=write-status]')).toHaveText('written');
  await expect(input.locator('[data-role=value]')).toHaveText(/33\.250\s*A/);
  // the PV really changed: read it back outside the browser
  await expect.poll(() => stack.get(stack.pv('SP'))).toContain('33.25');

  await widget(page, 'menu', stack.pv('MODE')).locator('select').selectOption({ label: 'Standby' });
  await expect(widget(page, 'led', stack.pv('MODE'))).toContainText('Standby');

  // a read-only channel (access security) offers no write at all
  await expect(widget(page, 'input', stack.pv('SP:RO')).locator('input')).toBeDisabled();
});

test('a refused write shows the error reply', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo', stack.token('sp-only', [stack.pv('SP')]));
  const button = widget(page, 'button', stack.pv('SP')).locator('button').last();
  await expect(button).toBeEnabled();
  const menu = widget(page, 'menu', stack.pv('MODE'));
  await menu.locator('select').selectOption({ label: 'On' });
  await expect(menu.locator('[data-role=write-status]')).toHaveText(/^denied/);
});

test('a trend zooms and pans from the keyboard; the help page lists the keys', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const trend = page.locator('[data-widget="trend"]').first();
  const chart = trend.locator('.chart');
  await expect(chart.locator('canvas')).toHaveCount(1);
  await chart.focus();
  await page.keyboard.press('+');
  await expect(trend.getByRole('button', { name: 'live ⟳' })).toBeVisible(); // zoomed: no longer following
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Home');
  await expect(trend.getByRole('button', { name: 'live ⟳' })).toHaveCount(0);
  await expect(trend.locator('.w-trend')).toHaveAttribute('data-follow', 'true');
  await page.getByRole('link', { name: 'Help' }).click();
  await expect(page.getByRole('heading', { name: 'Keyboard' })).toBeVisible();
  await expect(page.getByText('zoom the time (X) axis in / out')).toBeVisible();
});
