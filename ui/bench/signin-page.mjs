/**
 * The browser's side of `make bench-auth`: sign-in round trips in Chromium against a
 * gateway that signs people in with a provider (each in a fresh browser context: no
 * session at the provider), one JSON line out:
 *   {"runs": [{"total_ms", "to_provider_ms", "back_ms"}, …]}
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
const out = [];
try {
  for (let k = 0; k < runs; k++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
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
    const r = (x) => Math.round(x * 10) / 10;
    // the form filled by the script in between is not the system's time
    out.push({ total_ms: r(t1 - t0 + (t3 - t2)), to_provider_ms: r(t1 - t0), back_ms: r(t3 - t2) });
    await context.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify({ runs: out }) + '\n');
