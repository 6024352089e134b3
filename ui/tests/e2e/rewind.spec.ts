/**
 * Rewind on the real stack: a click on a trend shows the whole screen as it was
 * then (what the page itself had shown at that moment), writes off and a banner;
 * a playback at 10× moves the moment ten times as fast, and once it reaches the
 * present the screen is live again; a link with `?at=` opens the screen at its
 * moment; back to live in one click. The 100 000-point waveform at the moment and
 * in the playback comes reduced to the points its plot draws, as live (never the
 * 800 KB array).
 */
import { expect, openScreen, test, widget } from './fixtures';
import { handToken } from './token';

test('a click on a trend shows the screen at that moment, plays it at 10x, and goes back to live', async ({ page, stack }) => {
  test.setTimeout(150_000); // half a minute of the page's own record first
  const token = stack.token();
  // the size of every frame the page receives once rewinding begins
  let counting = false;
  const received: number[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => void (counting && received.push(f.payload.length))));
  const opened = Date.now();
  await openScreen(page, stack, 'epics-demo', token);
  const press = page.locator('[data-widget="button"] button').first();
  await expect(press).toBeEnabled(); // an operator may write while live
  const counter = widget(page, 'label', stack.pv('CNT:00000'));
  // what the page shows, with when (the truth to compare the rewound screen with)
  await page.evaluate(() => {
    const log: [number, string][] = [];
    (window as unknown as { shown: [number, string][] }).shown = log;
    const el = document.querySelector('[data-widget="label"][data-channel="ca://DEMO:CNT:00000"]');
    const note = () => log.push([Date.now(), el?.textContent?.trim() ?? '']);
    note();
    new MutationObserver(note).observe(el!, { subtree: true, characterData: true, childList: true });
  });
  const start = Number((await counter.textContent())!.replace(/[^\d.]/g, ''));
  // the spectrum of the 100 000-point waveform (a new value a second): its first value
  // published since the page opened (an earlier test may have restarted the adapter)
  const wave = page.locator('[data-widget="spectrum"][data-channel="ca://DEMO:WF100K"] .w-spectrum');
  const waveT = async () => Number(await wave.getAttribute('data-t'));
  await expect.poll(waveT, { timeout: 30_000 }).toBeGreaterThan(opened - 1_500);
  const firstWave = await waveT();
  // 29 s of both (the counter adds 10 a second): the moment clicked below, some 24 s ago,
  // is in it, and a playback at 10x from there takes some 3 s to catch up with live
  await expect.poll(async () => Number((await counter.textContent())!.replace(/[^\d.]/g, '')), { timeout: 60_000 }).toBeGreaterThan(start + 290);
  await expect.poll(waveT, { timeout: 60_000 }).toBeGreaterThan(firstWave + 29_000);

  // the value the spectrum draws live, and every frame from now on
  await expect(wave).toHaveAttribute('data-points', /^(512|1024|2048)$/);
  const liveT = await waveT();
  counting = true;

  // a click in the trend's plot (its last 30 s), a fifth of the way in: that moment
  const trend = page.locator('[data-widget="trend"] .w-trend').first();
  const plot = trend.locator('.chart');
  const box = (await plot.boundingBox())!;
  await page.mouse.click(box.x + 48 + (box.width - 58) * 0.2, box.y + box.height / 2);
  const control = page.getByTestId('time-control');
  await expect(page.getByTestId('rewind-banner')).toBeVisible();
  await expect(control).not.toHaveAttribute('data-moment', '');
  const moment = Number(await control.getAttribute('data-moment'));
  expect(Date.now() - moment).toBeGreaterThan(1_000);
  expect(Date.now() - moment).toBeLessThan(30_000);
  await expect(trend).toHaveAttribute('data-moment', String(moment));
  // a moment the page's own log saw (it began when the test did, not with the trend)
  const logged = await page.evaluate(() => (window as unknown as { shown: [number, string][] }).shown[0][0]);
  expect(moment - logged).toBeGreaterThan(1_000);
  // the counter shows what the page showed then (a value shown within 300 ms of the moment)
  await expect.poll(async () => {
    const text = (await counter.textContent())!.trim();
    const shown = await page.evaluate(() => (window as unknown as { shown: [number, string][] }).shown);
    return shown.some(([t, v]) => v === text && Math.abs(t - moment) < 400) || `${text} not shown near ${moment} (the page's log covers ${shown[0][0]}…${shown[shown.length - 1][0]})`;
  }).toBe(true);
  // the waveform then: a value from before the moment, older than the one drawn live,
  // at the points its plot draws
  await expect.poll(waveT).toBeLessThan(liveT);
  expect(await waveT()).toBeLessThanOrEqual(moment);
  await expect(wave).toHaveAttribute('data-points', /^(512|1024|2048)$/);
  await expect(wave).toHaveAttribute('data-extent', /^0,99999,/);
  // and stays there: the screen is not live
  const frozen = await counter.textContent();
  await page.waitForTimeout(600); // a live counter would move 6 times meanwhile
  expect(await counter.textContent()).toBe(frozen);
  // writes are off while not live
  await expect(press).toBeDisabled();
  // the link carries the moment
  expect(decodeURIComponent(page.url())).toContain(`at=${new Date(moment).toISOString()}`);

  // one second back: the counter shows about ten less
  await page.getByTestId('back-1s').click();
  await expect(control).toHaveAttribute('data-moment', String(moment - 1000));
  await expect.poll(async () => Number((await counter.textContent())!.replace(/[^\d.]/g, ''))).toBeLessThan(Number(frozen!.replace(/[^\d.]/g, '')) - 5);

  // play at 10x from there: the moment moves about ten seconds a second
  await page.getByTestId('play-10').click();
  await expect(control).toHaveAttribute('data-speed', '10');
  await expect.poll(async () => Number(await control.getAttribute('data-moment'))).toBeGreaterThan(moment);
  const t1 = Number(await control.getAttribute('data-moment'));
  const w1 = Date.now();
  await page.waitForTimeout(1_000); // a second of the playback, measured
  const rate = (Number(await control.getAttribute('data-moment')) - t1) / (Date.now() - w1);
  expect(rate).toBeGreaterThan(5);
  expect(rate).toBeLessThan(15);
  const played = Number((await counter.textContent())!.replace(/[^\d.]/g, ''));
  await expect.poll(async () => Number((await counter.textContent())!.replace(/[^\d.]/g, ''))).toBeGreaterThan(played + 20);

  // the playback that reaches the present goes back to live by itself
  await expect(page.getByTestId('rewind-banner')).toHaveCount(0);
  // the moment's answer and the playback's frames held the waveform reduced, as live frames do
  expect(received.length).toBeGreaterThan(10);
  expect(Math.max(...received)).toBeLessThan(100_000);
  await expect(page.getByTestId('live-mark')).toBeVisible();
  await expect(control).toHaveAttribute('data-speed', '');
  const now = Number((await counter.textContent())!.replace(/[^\d.]/g, ''));
  await expect.poll(async () => Number((await counter.textContent())!.replace(/[^\d.]/g, ''))).toBeGreaterThan(now);
  expect(page.url()).not.toContain('at=');
  await expect(press).toBeEnabled();

  // a link with ?at= opens the screen at its moment
  const at = new Date(moment).toISOString();
  await handToken(page, token);
  await page.goto(`${stack.baseUrl}/#/screen/epics-demo?at=${at}`);
  await expect(page.getByTestId('rewind-banner')).toBeVisible();
  await expect(control).toHaveAttribute('data-moment', String(moment));
  await expect.poll(async () => (await counter.textContent())!.trim()).toBe(frozen!.trim());
  await expect(press).toBeDisabled();

  // back to live: one click
  await page.getByTestId('back-to-live').click();
  await expect(page.getByTestId('rewind-banner')).toHaveCount(0);
  await expect(page.getByTestId('live-mark')).toBeVisible();
  const live = Number((await counter.textContent())!.replace(/[^\d.]/g, ''));
  await expect.poll(async () => Number((await counter.textContent())!.replace(/[^\d.]/g, ''))).toBeGreaterThan(live);
  expect(page.url()).not.toContain('at=');
  await expect(press).toBeEnabled();
});
