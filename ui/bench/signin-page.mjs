/**
 * The browser's side of `make bench-auth`: sign-in round trips in Chromium against a
 * gateway that signs people in with a provider, one JSON line out:
 *   {"runs": [{"total_ms", "to_provider_ms", "back_ms"}, …], "returning": […]}
 * runs: each in a fresh browser context (no session at the provider, nothing cached);
 * returning: again and again in one context, signed out in between (session cookies
 * and storage cleared), the provider's page assets in the browser's cache.
 * total: the click on Sign in until the user's name is shown; to_provider: until the
 * provider's form is shown; back: from submitting the form until the name is shown.
 * Usage: node bench/signin-page.mjs URL USER RUNS
 */
import { chromium } from '@playwright/test';

const [url, user, runs] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? 5)];
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
/** One sign-in on a new page of `context`: its times. */
async function signInOnce(context) {
  const page = await context.newPage();
  await page.goto(`${url}/#/`);
  const button = page.getByRole('button', { name: 'Sign in' });
  await button.waitFor({ timeout: 60_000 });
  const t0 = performance.now();
  await button.click();
  await page.locator('#username').waitFor({ timeout: 60_000 });
  const t1 = performance.now();
  await page.locator('#username').fill(user);
  await page.locator('#password').fill(user);
  const t2 = performance.now();
  await page.locator('#kc-login').click();
  await page.getByTestId('signed-in').waitFor({ timeout: 60_000 });
  const t3 = performance.now();
  // signed out for the next run: no session here (storage) nor at the provider (cookies)
  await page.evaluate(() => sessionStorage.clear());
  await context.clearCookies();
  await page.close();
  const r = (x) => Math.round(x * 10) / 10;
  // the form filled by the script in between is not the system's time
  return { total_ms: r(t1 - t0 + (t3 - t2)), to_provider_ms: r(t1 - t0), back_ms: r(t3 - t2) };
}

const out = { runs: [], returning: [] };
try {
  // a browser new to the provider each time: nothing cached
  for (let k = 0; k < runs; k++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    out.runs.push(await signInOnce(context));
    await context.close();
  }
  // a person signing in again: the browser keeps the provider's page assets in its
  // cache, the session is gone (cookies and storage cleared after each run)
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  for (let k = 0; k <= runs; k++) out.returning.push(await signInOnce(context));
  out.returning.shift(); // its first run filled the cache
  await context.close();
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
