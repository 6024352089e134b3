/**
 * The alarm page's side of `make bench-alarms`: one Chromium page on the alarm page of
 * a running gateway, driven over stdin by the Python benchmark, one JSON line out per
 * command.
 *   (start)        → {"ready": listed}              once the page holds the list
 *   storm N FIRST  → {"listed_s", "frame_gap_p95_ms", "frame_gap_max_ms", "frames", "rows"}
 *                    after the N channels FIRST… (benchmark numbering) are all listed
 *                    MAJOR: seconds from the command, and the animation-frame gaps meanwhile
 *   acks           → {"acked": {ch: ms since the epoch}} when each acknowledgement arrived
 *   quit
 * Usage: node bench/alarms-page.mjs URL
 */
import { createInterface } from 'node:readline';
import { chromium } from '@playwright/test';

const url = process.argv[2];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

await page.goto(`${url}/#/alarms`);
await page.waitForFunction(() => globalThis.__synopticAlarms?.loaded, null, { timeout: 120_000 });
await page.evaluate(() => {
  const acked = (globalThis.__benchAcked = {});
  globalThis.__synopticAlarms.onFrame((frame) => {
    for (const s of frame.up ?? []) if (s.ev === 'ack' && !(s.ch in acked)) acked[s.ch] = Date.now();
  });
});
out({ ready: await page.evaluate(() => globalThis.__synopticAlarms.size) });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, ...args] = line.trim().split(/\s+/);
  if (cmd === 'storm') {
    const [n, first] = args.map(Number);
    out(await page.evaluate(async ([n, first]) => {
      const store = globalThis.__synopticAlarms;
      const uri = (i) => `ca://BENCH:A${String(Math.floor(i / 1000)).padStart(3, '0')}:C${String(i % 1000).padStart(4, '0')}`;
      const wanted = Array.from({ length: n }, (_, k) => uri(first + k));
      const t0 = performance.now();
      const frames = [];
      let missing = wanted;
      await new Promise((done) => {
        const tick = (t) => {
          frames.push(t);
          missing = missing.filter((ch) => store.get(ch)?.lat !== 2);
          if (!missing.length || t - t0 > 60_000) done();
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      const listed = (performance.now() - t0) / 1000;
      // a second more of frames: the page drawing the list it now holds
      await new Promise((done) => {
        const tick = (t) => (frames.push(t), t - t0 < listed * 1000 + 1000 ? requestAnimationFrame(tick) : done());
        requestAnimationFrame(tick);
      });
      const gaps = frames.slice(1).map((t, i) => t - frames[i]).sort((a, b) => a - b);
      const q = (p) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))] * 10) / 10;
      return { listed_s: missing.length ? null : Math.round(listed * 1000) / 1000, missing: missing.length, frame_gap_p95_ms: q(0.95),
        frame_gap_max_ms: q(1), frames: frames.length, rows: Number(document.querySelector('[data-testid=alarm-rows]')?.getAttribute('data-count')) };
    }, [n, first]));
  } else if (cmd === 'acks') {
    out({ acked: await page.evaluate(() => globalThis.__benchAcked) });
  } else if (cmd === 'quit') {
    break;
  }
}
await browser.close();
