/**
 * A 1-megapixel image in the browser (docs/benchmarks.md, "PV Access"): the real
 * stack of the end-to-end tests (simulated PV Access server publishing a
 * 1024×1024 16-bit image at 10 Hz, the PVA adapter, nats-server, one gateway);
 * Chromium opens a screen of the image alone (BENCH_IMAGE_SCREEN=epics7-demo: the
 * EPICS 7 demo screen) and the image widget counts what it paints.
 * Prints one JSON document: images painted per second, and the gateway's CPU (% of
 * a core) over the same window.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { Stack } from '../tests/e2e/stack';

/** The stack with one more screen: the image alone (the cost of the image, nothing else). */
class ImageStack extends Stack {
  copyScreens(): void {
    super.copyScreens();
    const screen = {
      title: 'image alone', layout: { columns: 12, row_height: 28, gap: 4 },
      // the image widget's size on the EPICS 7 demo screen (8 columns × 16 rows: drawn about 430 px)
      widgets: [{ type: 'image', channels: [this.pva('IMAGE')], w: 8, h: 16, options: { profile: true } }],
    };
    writeFileSync(join(this.dir, 'screens', 'bench-image.json'), JSON.stringify(screen));
  }
}

const WINDOW_S = Number(process.env.BENCH_IMAGE_WINDOW_S ?? 15);
/** Linux clock ticks per second of /proc/PID/stat (USER_HZ). */
const TICKS = 100;

/** utime + stime of a process, seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

test('image to the browser', async ({ page }) => {
  test.setTimeout(300_000);
  const stack = await new ImageStack().start();
  try {
    // count what arrives on the page's WebSocket (bytes), beside what the widget paints
    await page.addInitScript(() => {
      const Native = window.WebSocket;
      (window as any).__wsBytes = 0;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          this.addEventListener('message', (e) => ((window as any).__wsBytes += (e.data as ArrayBuffer).byteLength ?? 0));
        }
      } as typeof WebSocket;
    });
    await page.goto(`${stack.baseUrl}/#/screen/${process.env.BENCH_IMAGE_SCREEN ?? 'bench-image'}`);
    const canvas = page.locator(`[data-widget="image"][data-channel="${stack.pva('IMAGE')}"] canvas[role=img]`);
    await page.waitForFunction((el) => Number(el?.getAttribute('data-frames') ?? 0) > 10, await canvas.elementHandle(), { timeout: 60_000 });
    const frames = async () => Number(await canvas.getAttribute('data-frames'));
    const bytes = () => page.evaluate(() => (window as any).__wsBytes as number);
    // the renderer main thread's busy time (Chrome's TaskDuration and ScriptDuration, s)
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const busy = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
      return { task: get('TaskDuration'), script: get('ScriptDuration') };
    };
    const m0 = await busy();
    const f0 = await frames();
    const b0 = await bytes();
    const c0 = cpuSeconds(stack.gateway.pid);
    const t0 = Date.now();
    await page.waitForTimeout(WINDOW_S * 1000);
    const seconds = (Date.now() - t0) / 1000;
    const painted = (await frames()) - f0;
    const received = (await bytes()) - b0;
    const m1 = await busy();
    const gateway = ((cpuSeconds(stack.gateway.pid) - c0) / seconds) * 100;
    // the image as sent: binned to the widget's pixels (sub.pts), or 1024x1024 (data-drawn absent: full)
    const drawn = (await canvas.getAttribute('data-drawn')) ?? '1024x1024';
    const [dw, dh] = drawn.split('x').map(Number);
    console.log(JSON.stringify({
      benchmark: 'pva-image-browser',
      machine: { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), cpus: cpus().length, load_avg_1m: Math.round(loadavg()[0] * 100) / 100 },
      image: '1024x1024 u2 at 10 Hz', window_s: Math.round(seconds * 10) / 10,
      images_painted_per_s: Math.round((painted / seconds) * 10) / 10,
      image_sent: `${drawn} u2`,
      images_received_per_s: Math.round((received / (dw * dh * 2) / seconds) * 10) / 10, // the rest of the screen is small
      received_mb_per_s: Math.round((received / 1e6 / seconds) * 10) / 10,
      gateway_cpu_percent_of_a_core: Math.round(gateway * 10) / 10,
      renderer_main_thread_ms_per_image: painted ? Math.round(((m1.task - m0.task) * 1000 / painted) * 10) / 10 : null,
      renderer_script_ms_per_image: painted ? Math.round(((m1.script - m0.script) * 1000 / painted) * 10) / 10 : null,
    }, null, 1));
  } finally {
    await stack.stop();
  }
});
