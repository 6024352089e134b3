/**
 * Signing in with the real provider (Keycloak, the demo realm and role file), as
 * `make demo` runs it: each demo user signs in, does what their group may (write a
 * setpoint, run a command, edit and save a screen: a revision by that user) and
 * not more, and signs out; a signed-out viewer reads; a foreign answer, a replayed
 * code and a return address elsewhere are refused; a provider that cannot be
 * reached is said so; a 20-second token renews on the open socket while 1000
 * updates/s flow (beside the demo's widgets) and not one is lost.
 */
import { join } from 'node:path';
import { drop, save } from './editing';
import { expect, widget } from './fixtures';
import { Proc, freePort } from './procs';
import { SignedGateway, signIn, signinTest, signOut } from './provider';
import { ROOT } from './stack';

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
    // the provider's endpoints come from the gateway (GET /api/auth): the page never reads its discovery document
    const discovery: string[] = [];
    page.on('request', (r) => void (r.url().includes('/.well-known/openid-configuration') && discovery.push(r.url())));
    await signIn(page, user);
    await expect(page.getByTestId('signed-in')).toHaveText(NAMES[user]);
    expect(page.url()).toBe(`${signed.baseUrl}/#/screen/epics-demo`); // back where it was, no code in the address
    expect(discovery).toEqual([]);
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
      // an edit saved: the screens API records the revision as this user's
      await drop(page, 'text', 1, 1);
      await expect(page.locator('.ed-item[data-type="text"]')).toHaveCount(1);
      const revision = await save(page, 'a heading, by the signed-in engineer');
      const history = await fetch(`${stack.baseUrl}/api/screens/${name}/history`, { headers: { authorization: `Bearer ${stack.token('e2e')}` } });
      const newest = ((await history.json()) as { revisions: { revision: number; by: string; summary: string }[] }).revisions[0];
      expect(newest).toMatchObject({ revision, by: user, summary: 'a heading, by the signed-in engineer' });
      const saved = (await (await fetch(`${stack.baseUrl}/api/screens/${name}`)).json()) as { widgets: { type: string }[] };
      expect(saved.widgets.map((w) => w.type)).toEqual(['text']);
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

/** 10 channels at 100 Hz each (ui/bench/publish.py: a counter per channel in `seq`), beside the demo's EPICS widgets. */
const RATE_CHANNELS = Array.from({ length: 10 }, (_, i) => `sim://BENCH:SCALAR:${String(i).padStart(5, '0')}`);

test('a token renewed while 1000 updates/s flow: no update lost, no reconnect', async ({ page, stack, provider }) => {
  // the web UI's client whose access tokens live 20 s: renewed 5 s before they end
  const gateway = await new SignedGateway(stack, provider.issuer, 'synoptic-ui-short').start();
  const publisher = new Proc('publisher', [join(ROOT, '.venv/bin/python'), join(ROOT, 'ui/bench/publish.py'), '--nats', stack.natsUrl, '--channels', '10', '--rate', '100']);
  try {
    await publisher.waitFor(/publisher ready/, 30_000);
    const demo = (await (await fetch(`${stack.baseUrl}/api/screens/epics-demo`)).json()) as { widgets: object[] };
    const screen = { ...demo, title: 'Renewal at 1000 updates/s', widgets: [...demo.widgets, ...RATE_CHANNELS.map((uri) => ({ type: 'label', channels: [uri], w: 2, h: 2 }))] };
    const made = await fetch(`${stack.baseUrl}/api/screens/e2e-renewal`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token('e2e', [], ['*'])}` },
      body: JSON.stringify({ screen, base_revision: 0, summary: 'renewal under load' }),
    });
    expect(made.status).toBe(200);
    await page.goto(`${gateway.baseUrl}/#/screen/e2e-renewal`);
    await signIn(page, 'operator');
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    await expect(page.locator('.access')).toHaveText('values: can set');
    for (const uri of RATE_CHANNELS) await expect(widget(page, 'label', uri).locator('[data-role=value]')).toHaveAttribute('data-stale', 'false');

    // from here the page records every update of the 10 channels it receives, and the socket's frames
    const first = await page.evaluate((uris) => {
      type Frame = { op: string; id?: number | null; exp?: number; expired?: boolean };
      type Ch = { receive(v: { seq: number }): void };
      const gw = (window as unknown as { __synoptic: { handle(f: Frame): void; channel(u: string): Ch; expires: number | null; stats: { conflated: number; missed: number } } }).__synoptic;
      const rec = { seqs: {} as Record<string, number[]>, auths: [] as Frame[], hellos: 0, conflated: gw.stats.conflated, missed: gw.stats.missed };
      (window as unknown as { __renewal: typeof rec }).__renewal = rec;
      const handle = gw.handle.bind(gw);
      gw.handle = (f: Frame) => {
        if (f.op === 'auth') rec.auths.push({ op: f.op, id: f.id, exp: f.exp, expired: f.expired });
        if (f.op === 'hello') rec.hellos++;
        handle(f);
      };
      for (const uri of uris) {
        const ch = gw.channel(uri);
        const receive = ch.receive.bind(ch);
        const seqs: number[] = (rec.seqs[uri] = []);
        ch.receive = (v) => {
          seqs.push(Number(v.seq));
          receive(v);
        };
      }
      return gw.expires;
    }, RATE_CHANNELS);
    expect(first).not.toBeNull();

    // the page renews its token on the open socket: an answered auth frame with a later expiry
    type Rec = { seqs: Record<string, number[]>; auths: { id?: number | null; exp?: number; expired?: boolean }[]; hellos: number; conflated: number; missed: number };
    const recorded = () => page.evaluate(() => (window as unknown as { __renewal: Rec }).__renewal);
    await expect.poll(async () => (await recorded()).auths.filter((a) => a.id !== null && (a.exp ?? 0) > first!).length, { timeout: 60_000 }).toBeGreaterThan(0);
    const renewedAt = Date.now();
    await expect.poll(async () => Date.now() - renewedAt > 2_000 && (await recorded()).seqs[RATE_CHANNELS[0]].length > 0).toBe(true); // updates flow on after it
    const report = JSON.parse((await (async () => {
      const mark = publisher.mark();
      await publisher.stop();
      return publisher.output.slice(mark).trim().split('\n').pop() ?? '{}';
    })())) as { published: number; per_second: number };
    expect(report.per_second).toBeGreaterThan(700); // ~1000/s on a busy machine
    const last = report.published / RATE_CHANNELS.length; // each channel's final seq (one per tick)
    await expect.poll(async () => Math.min(...Object.values((await recorded()).seqs).map((s) => s[s.length - 1] ?? 0)), { timeout: 30_000 }).toBe(last);

    const rec = await recorded();
    let counted = 0;
    for (const uri of RATE_CHANNELS) {
      const seqs = rec.seqs[uri];
      const gaps = seqs.slice(1).flatMap((s, k) => (s === seqs[k] + 1 ? [] : [`${seqs[k]}→${s}`]));
      expect(gaps, `${uri}: updates lost`).toEqual([]);
      counted += seqs.length;
    }
    expect(counted).toBeGreaterThan(10 * 100 * 5); // at least 5 s of the 1000 updates/s, the renewal among them
    expect(rec.auths.filter((a) => a.expired)).toEqual([]);
    expect(rec.hellos).toBe(0); // no reconnect
    const stats = await page.evaluate(() => (window as unknown as { __synoptic: { stats: { conflated: number; missed: number } } }).__synoptic.stats);
    expect([stats.conflated - rec.conflated, stats.missed - rec.missed]).toEqual([0, 0]);
    await expect(page.locator('.access')).toHaveText('values: can set');
  } finally {
    await publisher.stop();
    await gateway.stop();
  }
});
