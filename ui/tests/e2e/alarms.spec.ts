/**
 * Alarms in the browser against the real stack and a real alarm service: the count in
 * every screen's header, the alarm page (acknowledged by the signed-in user and seen
 * at once on every other open page; refused without the grant), the summary widget,
 * a phone's width, and a source that disconnects shown as no data, not cleared.
 */
import type { Page } from '@playwright/test';
import { expect, openScreen, test } from './fixtures';
import { handToken } from './token';

const TREE = `
name: Plant
guidance: The whole plant.
children:
  - name: Power
    guidance: Bring the setpoint back between 5 and 80 A.
    screens:
      - {title: EPICS demo, screen: epics-demo}
    channels:
      - {ch: "ca://DEMO:SP", desc: power supply setpoint}
  - name: Tango
    patterns: ["tango://*/sim/test/1/alarm"]
`;

/** The uncaught errors of `page`, as they happen (a test ends expecting none). */
function pageErrors(page: Page, errors: string[] = []): string[] {
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** The row of `ch` on the alarm page. */
const row = (page: Page, ch: string) => page.locator(`[data-testid="alarm-row"][data-ch="${ch}"]`);

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ stack }) => {
  await stack.startAlarms(TREE);
  await stack.put(stack.pv('SP'), '10'); // in range: no alarm yet
});

test('the header counts unacknowledged alarms; the page lists, acknowledges by name and every open page sees it', async ({ stack, browser }) => {
  const sp = stack.pv('SP');
  const operator = await browser.newPage();
  const watcher = await browser.newPage();
  const errors = pageErrors(watcher, pageErrors(operator));
  try {
    // a screen's header follows the count (anonymous: reading needs no sign-in)
    await openScreen(watcher, stack, 'epics-demo');
    const badge = watcher.getByTestId('alarm-badge');
    await expect(badge).toBeVisible();
    const before = Number(await badge.getAttribute('data-unack'));

    await handToken(operator, stack.token('e2e-operator', ['*'], [], ['*']));
  await operator.goto(`${stack.baseUrl}/#/alarms?area=Plant/Power`);
    await expect(operator.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(operator.getByTestId('alarm-rows')).toHaveAttribute('data-count', '0');

    await stack.put(sp, '85'); // above HIGH: MINOR
    await expect(row(operator, sp)).toContainText('MINOR');
    await expect(row(operator, sp)).toContainText('power supply setpoint');
    await expect.poll(async () => Number(await badge.getAttribute('data-unack'))).toBeGreaterThan(before);

    // guidance and related screens one click away
    await row(operator, sp).locator('button.ch').click();
    const detail = operator.getByTestId('alarm-detail');
    await expect(detail).toContainText('Bring the setpoint back between 5 and 80 A.');
    await expect(detail).toContainText('The whole plant.');
    await expect(detail.getByRole('link', { name: 'EPICS demo' })).toHaveAttribute('href', '#/screen/epics-demo');

    // a second alarm page, open elsewhere, sees the acknowledgement at once
    await watcher.goto(`${stack.baseUrl}/#/alarms?area=Plant/Power`);
    await expect(row(watcher, sp)).toContainText('MINOR');
    const unack = Number(await watcher.getByTestId('alarm-badge').getAttribute('data-unack'));

    await detail.getByTestId('ack-one').click();
    await expect(operator.getByTestId('alarm-message')).toContainText(`acknowledged: ${sp}`);
    await expect(row(watcher, sp)).toContainText('MINOR ✓');
    await expect(row(watcher, sp)).toContainText('e2e-operator');
    await expect(watcher.getByTestId('alarm-badge')).toHaveAttribute('data-unack', String(unack - 1));

    // back in range: acknowledged and cleared, it leaves the list
    await stack.put(sp, '10');
    await expect(row(operator, sp)).toHaveCount(0);
    await expect(row(watcher, sp)).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    await operator.close();
    await watcher.close();
  }
});

test('without the grant an acknowledgement is refused and the alarm stays unacknowledged', async ({ stack, page }) => {
  const errors = pageErrors(page);
  const sp = stack.pv('SP');
  await stack.put(sp, '95'); // above HIHI: MAJOR
  await handToken(page, stack.token('e2e-reader', [], [], []));
  await page.goto(`${stack.baseUrl}/#/alarms`);
  await expect(row(page, sp)).toContainText('MAJOR');
  await row(page, sp).getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
  await expect(page.getByTestId('alarm-message')).toHaveClass(/error/);
  await expect(page.getByTestId('alarm-message')).toContainText('forbidden: e2e-reader may not ack');
  await expect(row(page, sp)).not.toContainText('✓');
  expect(errors).toEqual([]);
});

test('shelving needs a reason; a shelved alarm leaves the count and shows under Shelved', async ({ stack, page }) => {
  const errors = pageErrors(page);
  const sp = stack.pv('SP');
  await handToken(page, stack.token('e2e-operator', ['*'], [], ['*']));
  await page.goto(`${stack.baseUrl}/#/alarms?area=Plant/Power`);
  await expect(row(page, sp)).toContainText('MAJOR');
  const badge = page.getByTestId('alarm-badge');
  const unack = Number(await badge.getAttribute('data-unack'));
  await row(page, sp).getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Shelve…' }).click();
  const dialog = page.getByRole('dialog', { name: 'shelve' });
  await expect(dialog.getByRole('button', { name: 'Shelve', exact: true })).toBeDisabled();
  await dialog.getByTestId('shelve-why').fill('magnet swap');
  await dialog.getByRole('button', { name: 'Shelve', exact: true }).click();
  await expect(row(page, sp)).toHaveCount(0);
  await expect(badge).toHaveAttribute('data-unack', String(unack - 1));
  await page.getByRole('tab', { name: /Shelved/ }).click();
  await expect(row(page, sp)).toContainText('shelved by e2e-operator');
  await row(page, sp).getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Unshelve' }).click();
  await expect(row(page, sp)).toHaveCount(0);
  await page.getByRole('tab', { name: /Active/ }).click();
  await expect(row(page, sp)).toContainText('MAJOR');
  expect(errors).toEqual([]);
});

test('a screen places the summary of an area; a click opens the page on that area', async ({ stack, page }) => {
  const errors = pageErrors(page);
  await stack.putRawScreen('alarm-summary', {
    version: 1, title: 'Alarm summary', layout: { type: 'grid', columns: 12, row_height: 28, gap: 4 },
    widgets: [{ type: 'alarms', title: 'Power', w: 4, h: 4, options: { area: 'Plant/Power', rows: 2 } }],
  });
  await page.goto(`${stack.baseUrl}/#/screen/alarm-summary`);
  const summary = page.getByTestId('alarm-summary');
  await expect(summary).toHaveAttribute('data-active', '1'); // DEMO:SP is MAJOR since the test before
  await expect(summary).toContainText('power supply setpoint');
  await summary.click();
  await expect(page).toHaveURL(/#\/alarms\?area=Plant%2FPower$/);
  await expect(row(page, stack.pv('SP'))).toContainText('MAJOR');
  expect(errors).toEqual([]);
});

test('on a phone the page fits the width: the list, the area picker and acknowledging', async ({ stack, browser }) => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const errors = pageErrors(phone);
  try {
    const sp = stack.pv('SP');
    await handToken(phone, stack.token('e2e-operator', ['*'], [], ['*']));
  await phone.goto(`${stack.baseUrl}/#/alarms`);
    await expect(row(phone, sp)).toContainText('MAJOR');
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.locator('.area-select select').selectOption('Plant/Power');
    await expect(phone).toHaveURL(/area=Plant%2FPower/);
    await row(phone, sp).locator('button.ch').tap();
    await phone.getByTestId('ack-one').tap();
    await expect(row(phone, sp)).toContainText('MAJOR ✓');
    expect(errors).toEqual([]);
  } finally {
    await phone.close();
  }
});

test('a source that disconnects is shown as no data, not as cleared', async ({ stack, page }) => {
  const errors = pageErrors(page);
  const sp = stack.pv('SP');
  await page.goto(`${stack.baseUrl}/#/alarms?area=Plant/Power`);
  await expect(row(page, sp)).toContainText('MAJOR');
  await stack.ioc.stop();
  try {
    await expect(row(page, sp)).toContainText('no data', { timeout: 60_000 });
  } finally {
    await stack.startIoc();
  }
  // back: the source's own state again (acknowledged and in range: gone from the list)
  await expect.poll(async () => ((await row(page, sp).count()) ? await row(page, sp).textContent() : 'gone'), { timeout: 60_000 }).not.toContain('no data');
  expect(errors).toEqual([]);
});
