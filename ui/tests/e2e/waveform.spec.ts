/**
 * The EPICS demo's 100k-point waveform (ca://DEMO:WF100K) draws in the browser: the
 * simulated IOC writes its pattern (as `make demo` does) and its 100 000 doubles reach
 * the spectrum widget (reduced by the gateway to the widget's width).
 */
import { expect, openScreen, test, widget } from './fixtures';

test('the 100k-point waveform draws its pattern', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics-demo');
  const wf = widget(page, 'spectrum', stack.pv('WF100K'));
  await expect(wf.locator('.w-spectrum')).toBeVisible();
  await expect(wf.locator('.empty')).toHaveCount(0);
  // the channel holds the pattern's doubles (envelope 1000, noise sigma 20), not their
  // bytes read as integers (0 … 2^32): all 100 000 points, or the gateway's min/max
  // reduction of them to the widget's width (which keeps the extremes)
  const stats = () =>
    page.evaluate((uri) => {
      const gw = (globalThis as { __synoptic?: { channel(u: string): { current?: { v?: { data?: Float64Array } } } } }).__synoptic!;
      const data = gw.channel(uri).current?.v?.data;
      if (!data) return { n: 0, min: 0, max: 0 };
      let min = Infinity;
      let max = -Infinity;
      for (const x of data) [min, max] = [Math.min(min, x), Math.max(max, x)];
      return { n: data.length, min, max };
    }, stack.pv('WF100K'));
  await expect.poll(async () => (await stats()).n).toBeGreaterThanOrEqual(500);
  const { min, max } = await stats();
  expect(min).toBeLessThan(-100);
  expect(max).toBeGreaterThan(100);
  expect(Math.max(-min, max)).toBeLessThan(1200);
  // and the chart drew it: pixels of the series colour (dark theme #4fc3f7) on its canvas
  const seriesPixels = () =>
    wf.locator('canvas').first().evaluate((c: HTMLCanvasElement) => {
      const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < px.length; i += 4) if (Math.abs(px[i] - 79) + Math.abs(px[i + 1] - 195) + Math.abs(px[i + 2] - 247) < 60) n++;
      return n;
    });
  await expect.poll(seriesPixels).toBeGreaterThan(500);
});
