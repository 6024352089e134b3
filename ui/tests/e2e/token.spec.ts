/**
 * A page holding a token sends it on every screen read, as a gateway without
 * anonymous access requires: index.html's early fetch, the screen list, the screen
 * and a screen it embeds or re-reads; and on its WebSocket in an `auth` frame. No
 * request of the page carries it in a URL, and an old `?access_token=` link is
 * not taken.
 */
import { expect, openScreen, test } from './fixtures';
import { handToken } from './token';

test('every screen read of a page holding a token carries it, no URL does', async ({ page, stack }) => {
  const token = stack.token('e2e-viewer', []);
  const reads: { path: string; auth: string | null }[] = [];
  const urls: string[] = [];
  const sockets: string[] = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  page.on('request', (r) => {
    urls.push(r.url());
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/api/')) reads.push({ path, auth: r.headers()['authorization'] ?? null });
  });
  await openScreen(page, stack, 'epics-demo', token);
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/`);
  await expect(page.locator('a[href="#/screen/epics-demo"]').first()).toBeVisible();
  const paths = reads.map((r) => r.path);
  expect(paths).toContain('/api/screens/epics-demo');
  expect(paths).toContain('/api/screens');
  expect(reads.filter((r) => r.auth !== `Bearer ${token}`)).toEqual([]);
  expect(urls.filter((u) => u.includes(token))).toEqual([]);
  expect(sockets.length).toBeGreaterThan(0);
  expect(await page.evaluate(() => (window as unknown as { __synoptic: { user: string } }).__synoptic.user)).toBe('e2e-viewer');
});

test('a token in the address is not taken', async ({ page, stack }) => {
  await page.goto(`${stack.baseUrl}/?access_token=${stack.token('e2e-url')}#/screen/epics-demo`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  expect(await page.evaluate(() => (window as unknown as { __synoptic: { user: string } }).__synoptic.user)).toBe('anonymous');
});
