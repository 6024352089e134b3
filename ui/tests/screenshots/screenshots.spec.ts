/** Screenshots of the demo screens for docs/screenshots/ (run by `make ui-screenshots`). */
import { join } from 'node:path';
import { devices } from '@playwright/test';
import { expect, openScreen, test } from '../e2e/fixtures';
import { ROOT } from '../e2e/stack';

const out = (name: string) => join(ROOT, 'docs/screenshots', `${name}.png`);

test('screenshots of the demo screens', async ({ page, stack }) => {
  await page.setViewportSize({ width: 1440, height: 1000 });
  await page.goto(`${stack.baseUrl}/#/`);
  await expect(page.getByRole('link', { name: 'EPICS simulated IOC' })).toBeVisible();
  await page.screenshot({ path: out('screen-list') });

  for (const theme of ['dark', 'light']) {
    await page.evaluate((t) => localStorage.setItem('synoptic-theme', t), theme);
    await openScreen(page, stack, 'epics-demo', stack.token());
    await page.waitForTimeout(4000); // let trends fill: a picture, not an assertion
    await page.screenshot({ path: out(`epics-demo-${theme}`), fullPage: true });
  }
  await page.evaluate(() => localStorage.setItem('synoptic-theme', 'dark'));
  await openScreen(page, stack, 'tango-demo', stack.token());
  await page.waitForTimeout(4000);
  await page.screenshot({ path: out('tango-demo-dark'), fullPage: true });
  await openScreen(page, stack, 'counters');
  await page.screenshot({ path: out('counters'), fullPage: true });

  // the EPICS adapter dies: the gateway's liveness frames mark its channels stale
  await openScreen(page, stack, 'epics-demo');
  await page.waitForTimeout(4000); // some history in the trend first
  await stack.adapter.kill();
  await expect(page.locator(`[data-channel="${stack.pv('SINE')}"] [data-role=value]`).first()).toHaveAttribute('data-stale', 'true', { timeout: 10_000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: out('epics-demo-adapter-stopped'), fullPage: true });
  await stack.startAdapter();

  await page.goto(`${stack.baseUrl}/#/help`);
  await expect(page.getByRole('heading', { name: 'Keyboard' })).toBeVisible();
  await page.screenshot({ path: out('help') });

  await page.goto(`${stack.baseUrl}/#/quick?ch=${['SINE', 'NOISE', 'STATE', 'MODE', 'MSG', 'SP', 'WF1K'].map((n) => stack.pv(n)).join(',')}`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await expect(page.locator('.grid')).toHaveAttribute('data-ready', 'true');

  await stack.gateway.kill();
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'reconnecting');
  await page.screenshot({ path: out('quick-look-reconnecting') });
});

test('the demo screens on a phone and a tablet', async ({ browser, stack }) => {
  for (const [kind, name] of [['phone', 'Pixel 7'], ['tablet', 'iPad (gen 7)']] as const) {
    const { viewport, deviceScaleFactor, isMobile, hasTouch, userAgent } = devices[name];
    const context = await browser.newContext({ viewport, deviceScaleFactor: Math.min(deviceScaleFactor, 2), isMobile, hasTouch, userAgent });
    const page = await context.newPage();
    for (const screen of ['epics-demo', 'tango-demo']) {
      await openScreen(page, stack, screen, stack.token());
      await page.waitForTimeout(3000); // let trends fill: a picture, not an assertion
      await page.screenshot({ path: out(`${kind}-${screen}`), fullPage: true });
    }
    await context.close();
  }
});
