/**
 * The browser's side of `make bench-auth`: sign-in round trips in Chromium against a
 * gateway that signs people in with a provider, one JSON line out:
 *   {"runs": [{"total_ms", "to_provider_ms", "back_ms"}, …], "returning": […]}
 * runs: each in a fresh browser context (no session at the provider, nothing cached);
 * returning: again and again in one context, signed out in between (session cookies
 * and storage cleared), the provider's page assets in the browser's cache.
 * total: the click on Sign in until the user's name is shown; to_provider: until the
 * provider's form is shown; back: from submitting the form until the name is shown.
 * The moments are the page's own (a script in each page of the context, wall clock):
 * the click and the submit as their events are dispatched, the form's first paint
 * (first-contentful-paint of the provider's page), the name's first frame (the frame
 * after it enters the DOM). The driver's own times (from before Playwright's click,
 * its checks that the element is ready and stable included, to its polling seeing the
 * name) are kept apart as `driver_*`.
 * Usage: node bench/signin-page.mjs URL USER RUNS
 */
import { chromium } from '@playwright/test';

const [url, user, runs] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? 5)];
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
/** In every page: its moments, as console lines `@synoptic-bench NAME WALL_MS`. */
function stamps() {
  const say = (name) => console.log(`@synoptic-bench ${name} ${performance.timeOrigin + performance.now()}`);
  document.addEventListener('click', (e) => e.target?.closest?.('button.signin') && say('click'), true);
  document.addEventListener('submit', () => say('submit'), true);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'first-contentful-paint' && document.getElementById('username')) say(`form ${performance.timeOrigin + e.startTime}`);
  }).observe({ type: 'paint', buffered: true });
  const seen = new MutationObserver(() => {
    if (!document.querySelector('[data-testid=signed-in]')) return;
    seen.disconnect();
    requestAnimationFrame(() => say('shown'));
  });
  seen.observe(document, { subtree: true, childList: true });
}

/** One sign-in on a new page of `context`: its times. */
async function signInOnce(context) {
  const page = await context.newPage();
  const at = {};
  const waiting = new Map();
  page.on('console', (m) => {
    const [tag, name, wall] = m.text().split(' ');
    if (tag !== '@synoptic-bench' || name in at) return;
    at[name] = Number(wall); // the form's: its paint, not its report
    waiting.get(name)?.();
  });
  /** The page's moment `name`, once it has said it. */
  const moment = (name) =>
    name in at
      ? Promise.resolve()
      : new Promise((ok, fail) => {
          const timer = setTimeout(() => fail(new Error(`no '${name}' moment from the page: ${JSON.stringify(at)}`)), 60_000);
          waiting.set(name, () => (clearTimeout(timer), ok()));
        });
  await page.goto(`${url}/#/`);
  const button = page.getByRole('button', { name: 'Sign in' });
  await button.waitFor({ timeout: 60_000 });
  const t0 = performance.now();
  await button.click();
  await page.locator('#username').waitFor({ timeout: 60_000 });
  const t1 = performance.now();
  await moment('form');
  await page.locator('#username').fill(user);
  await page.locator('#password').fill(user);
  const t2 = performance.now();
  await page.locator('#kc-login').click();
  await page.getByTestId('signed-in').waitFor({ timeout: 60_000 });
  const t3 = performance.now();
  await moment('shown');
  // signed out for the next run: no session here (storage) nor at the provider (cookies)
  await page.evaluate(() => sessionStorage.clear());
  await context.clearCookies();
  await page.close();
  const r = (x) => Math.round(x * 10) / 10;
  for (const name of ['click', 'submit']) await moment(name);
  // the form filled by the script in between is not the system's time
  return {
    total_ms: r(at.form - at.click + (at.shown - at.submit)),
    to_provider_ms: r(at.form - at.click),
    back_ms: r(at.shown - at.submit),
    driver_total_ms: r(t1 - t0 + (t3 - t2)),
    driver_to_provider_ms: r(t1 - t0),
    driver_back_ms: r(t3 - t2),
  };
}

const out = { runs: [], returning: [] };
try {
  // a browser new to the provider each time: nothing cached
  for (let k = 0; k < runs; k++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.addInitScript(stamps);
    out.runs.push(await signInOnce(context));
    await context.close();
  }
  // a person signing in again: the browser keeps the provider's page assets in its
  // cache, the session is gone (cookies and storage cleared after each run)
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(stamps);
  for (let k = 0; k <= runs; k++) out.returning.push(await signInOnce(context));
  out.returning.shift(); // its first run filled the cache
  await context.close();
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
