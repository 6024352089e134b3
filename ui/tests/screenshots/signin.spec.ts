/**
 * Screenshots of signing in for docs/user-guide.md ("Sign in"; `make ui-screenshots`):
 * the top bar signed out (the Sign in control), the provider's sign-in page (the
 * demo's Keycloak, a demo user typed in), the top bar signed in (the user's name,
 * Sign out) and a screen signed in as the operator.
 */
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
  const top = page.locator('nav.top');
  await expect(top.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await top.screenshot({ path: out('guide-sign-in-control') });
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#username').fill('operator');
  await page.screenshot({ path: out('guide-sign-in') });
  await page.goBack();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await signIn(page, 'operator');
  await expect(page.locator('.access')).toHaveText('values: can set');
  await expect(widget(page, 'input', stack.pv('SP')).locator('input')).toBeEnabled();
  await expect(top.getByTestId('signed-in')).toHaveText('Otto Operator');
  await top.screenshot({ path: out('guide-signed-in-header') });
  await page.screenshot({ path: out('guide-signed-in') });
});
