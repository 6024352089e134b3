/**
 * The UI as the gateway serves it: precompressed files, the security headers, the
 * screen's chart chunks preloaded from index.html, and a whole screen working under
 * the Content-Security-Policy (not one violation).
 */
import type { Page } from '@playwright/test';
import { expect, openScreen, test } from './fixtures';

/** Every CSP violation and console error of `page` from now on. */
async function watchCsp(page: Page): Promise<{ violations: string[]; errors: string[] }> {
  const out = { violations: [] as string[], errors: [] as string[] };
  await page.exposeFunction('reportViolation', (v: string) => out.violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const where = `${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`;
      const what = (e.target as Element | null)?.outerHTML?.slice(0, 150);
      (window as unknown as { reportViolation(v: string): void }).reportViolation(`${e.violatedDirective} ${e.blockedURI} ${where} ${what}`);
    });
  });
  page.on('console', (m) => m.type() === 'error' && out.errors.push(m.text()));
  return out;
}

test('a screen works under the CSP, served compressed, its chart chunks preloaded', async ({ page, stack }) => {
  const csp = await watchCsp(page);
  const served: { url: string; encoding?: string }[] = [];
  page.on('response', (r) => served.push({ url: r.url(), encoding: r.headers()['content-encoding'] }));

  const doc = await page.goto(`${stack.baseUrl}/#/screen/epics-demo`);
  const headers = doc!.headers();
  expect(headers['content-encoding']).toBe('br');
  expect(headers['vary']).toBe('Accept-Encoding');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  const policy = headers['content-security-policy'];
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+';/);
  expect(policy).not.toContain('unsafe');

  await openScreen(page, stack, 'epics-demo');
  // every kind of widget of the screen drew: charts (canvas), gauges, labels in their places
  await expect(page.locator('[data-widget="trend"] canvas')).toHaveCount(1);
  await expect(page.locator('[data-widget="spectrum"] canvas')).toHaveCount(2);
  await expect(page.locator('[data-widget="gauge"] canvas')).toHaveCount(2);
  const label = page.locator('[data-widget="label"]').first();
  await expect(label.locator('[data-role=value]')).toHaveAttribute('data-stale', 'false');
  expect(await label.evaluate((el) => getComputedStyle(el).gridColumnEnd)).toBe('span 2');
  // index.html asked for the chart chunks as soon as the screen file was in
  const preloads = await page.locator('link[rel=modulepreload]').evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href));
  expect(preloads.some((h) => /\/assets\/echarts-[\w-]+\.js$/.test(h))).toBe(true);
  expect(preloads.some((h) => /\/assets\/Spectrum-[\w-]+\.js$/.test(h))).toBe(true);
  // tooltips of a trend and an XY plot
  await page.locator('[data-widget="trend"] canvas').first().hover();
  await page.locator('[data-widget="xy"] canvas').first().hover();

  const assets = served.filter((s) => /\/assets\/.*\.(js|css)$/.test(s.url));
  expect(assets.length).toBeGreaterThan(3);
  for (const a of assets) expect(a.encoding, a.url).toBe('br');

  // the other pages
  for (const route of ['#/', '#/help', `#/quick?ch=${stack.pv('SINE')},${stack.pv('WF1K')}`]) {
    await page.goto(`${stack.baseUrl}/${route}`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  }
  await openScreen(page, stack, 'tango-demo');
  await expect(page.locator('[data-widget="spectrum"] canvas')).toHaveCount(1);
  expect(csp.violations).toEqual([]);
  expect(csp.errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
});

test('a screen of labels only preloads no chart code', async ({ page, stack }) => {
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await openScreen(page, stack, 'counters');
  await expect(page.locator('[data-widget="label"] [data-role=value]').first()).toHaveAttribute('data-stale', 'false');
  expect(requested.filter((u) => /echarts/.test(u))).toEqual([]);
});

test('the UI refuses to be framed by another page', async ({ page, stack }) => {
  const blocked: string[] = [];
  page.on('console', (m) => blocked.push(m.text()));
  await page.setContent(`<iframe src="${stack.baseUrl}/#/screen/epics-demo"></iframe>`);
  await expect.poll(() => blocked.some((t) => /frame-ancestors|Refused to (display|frame)/i.test(t))).toBe(true);
});
