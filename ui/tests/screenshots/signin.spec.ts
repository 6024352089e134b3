/** Screenshots of signing in for docs/user-guide.md ("Sign in"; `make ui-screenshots`): the provider's sign-in page, and a screen signed in as the operator. */
import { join } from 'node:path';
import { expect, widget } from '../e2e/fixtures';
import { signIn, signinTest as test } from '../e2e/provider';
import { ROOT } from '../e2e/stack';

const out = (name: string) => join(ROOT, 'docs/screenshots', `${name}.png`);

test('screenshots of signing in', async ({ page, stack, signed }) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1200, height: 700 });
  await page.goto(`${signed.baseUrl}/#/screen/epics-demo`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#username').fill('operator');
  await page.screenshot({ path: out('guide-sign-in') });
  await page.goBack();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await signIn(page, 'operator');
  await expect(page.locator('.access')).toHaveText('values: can set');
  await expect(widget(page, 'input', stack.pv('SP')).locator('input')).toBeEnabled();
  await page.screenshot({ path: out('guide-signed-in') });
});
