/**
 * A page opened with a token (`?access_token=`) sends it on every screen read, as
 * a gateway without anonymous access requires: index.html's early fetch, the
 * screen list, the screen and a screen it embeds or re-reads.
 */
import { expect, openScreen, test } from './fixtures';

test('every screen read of a page opened with a token carries it', async ({ page, stack }) => {
  const token = stack.token('e2e-viewer', []);
  const reads: { path: string; auth: string | null }[] = [];
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/api/')) reads.push({ path, auth: r.headers()['authorization'] ?? null });
  });
  await openScreen(page, stack, 'epics-demo', token);
  await page.goto(`${stack.baseUrl}/?access_token=${token}#/`);
  await expect(page.locator('a[href="#/screen/epics-demo"]').first()).toBeVisible();
  const paths = reads.map((r) => r.path);
  expect(paths).toContain('/api/screens/epics-demo');
  expect(paths).toContain('/api/screens');
  expect(reads.filter((r) => r.auth !== `Bearer ${token}`)).toEqual([]);
});
