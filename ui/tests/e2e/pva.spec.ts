/** End to end on the simulated PV Access server: the image and table widgets live. */
import { expect, openScreen, test, widget } from './fixtures';

test('the EPICS 7 screen shows the 1024×1024 image live, zooms it, and the table and structure', async ({ page, stack }) => {
  const received: number[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(f.payload.length)));
  await openScreen(page, stack, 'epics7-demo');
  const image = widget(page, 'image', stack.pva('IMAGE'));
  const canvas = image.locator('canvas[role=img]');
  // drawn from the image binned to the widget's width (sub.pts): 2 × 2 blocks, 512 KB frames
  await expect(image.locator('[data-role=info]')).toHaveText(/^1024×1024 ÷2 · auto \d+\.\.\d+$/);
  await expect(canvas).toHaveAttribute('data-region', '1024x1024');
  await expect(canvas).toHaveAttribute('data-drawn', '512x512');
  await expect(canvas).toHaveAttribute('data-bin', '2');
  // frames keep coming: the image moves at 10 Hz
  const frames = async () => Number(await canvas.getAttribute('data-frames'));
  const first = await frames();
  await expect.poll(frames, { timeout: 20_000 }).toBeGreaterThan(first + 5);
  // real pixels: the readout under the pointer names a 16-bit value
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await expect(image.locator('[data-role=readout]')).toHaveText(/^x \d+ y \d+: \d+$/);
  // drag a rectangle: the canvas shows that region only
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.4);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.6, { steps: 4 });
  await page.mouse.up();
  expect(Math.max(...received)).toBeLessThan(600_000); // never the 2 MB image before the zoom
  // zoomed: the full image (full detail), the same region of it
  await expect(canvas).toHaveAttribute('data-bin', '1');
  await expect(image.locator('[data-role=info]')).toHaveText(/^1024×1024 zoom \d+×\d+ at \d+,\d+/);
  const [zw, zh] = (await canvas.getAttribute('data-region'))!.split('x').map(Number);
  expect(zh).toBeLessThan(400); // the canvas is wider than the image: the drag spans 20 % of its height
  expect(await canvas.getAttribute('data-drawn')).toBe('1024x1024');
  expect(zw).toBeGreaterThan(20);
  expect(Math.max(...received)).toBeGreaterThan(2_000_000);
  await canvas.focus();
  await page.keyboard.press('Escape');
  await expect(canvas).toHaveAttribute('data-region', '1024x1024');
  await expect(canvas).toHaveAttribute('data-bin', '2'); // binned again
  // a fixed range and another colour map are applied to the next frame
  await image.locator('select').selectOption('inferno');
  await image.getByLabel('fixed').check();
  await expect(image.locator('[data-role=info]')).toHaveText(/fixed 0\.\.65535$/);
  await image.getByLabel('range high').fill('1000'); // the whole image is above: the top colour
  await expect(image.locator('[data-role=info]')).toHaveText(/fixed 0\.\.1000$/);
  const top = await samples(canvas, 3);
  expect(top.every(([r, g, b]) => r === 252 && g === 255 && b === 164)).toBe(true); // inferno's last
  await expect(image.locator('canvas.profile')).toHaveAttribute('data-row', /\d+/);

  const table = widget(page, 'table', stack.pva('TABLE'));
  await expect(table.locator('thead th')).toHaveText(['name', 'position', 'current', 'ok']);
  await expect(table.locator('tbody tr')).toHaveCount(Math.min(stack.records, 8));
  const position = table.locator('tbody tr').first().locator('td').nth(1);
  const before = await position.textContent();
  await expect.poll(() => position.textContent(), { timeout: 20_000 }).not.toBe(before);
  const motor = widget(page, 'table', stack.pva('MOTOR'));
  await expect(motor.locator('tbody tr').first()).toHaveText(/position\s*1\.500/);
  await expect(motor.locator('tbody')).toContainText('limits.high');
});

/** RGBA of `n` × `n` evenly spread pixels of a widget's canvas, as painted. */
async function samples(canvas: import('@playwright/test').Locator, n = 5): Promise<number[][]> {
  return canvas.evaluate((c: HTMLCanvasElement, k: number) => {
    const ctx = c.getContext('2d')!;
    const out: number[][] = [];
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        const x = Math.floor(((i + 0.5) * c.width) / k);
        const y = Math.floor(((j + 0.5) * c.height) / k);
        out.push([...ctx.getImageData(x, y, 1, 1).data]);
      }
    }
    return out;
  }, n);
}

test('compressed images (lz4 grey, jpeg RGB) show live, decompressed by the adapter; a click picks the profile row', async ({ page, stack }) => {
  await openScreen(page, stack, 'epics7-demo');
  const lz4 = widget(page, 'image', stack.pva('IMAGE:LZ4'));
  const jpeg = widget(page, 'image', stack.pva('IMAGE:JPEG'));
  const big = widget(page, 'image', stack.pva('IMAGE'));
  // 128×96 images, never binned (smaller than their widgets), a new one each second
  await expect(lz4.locator('[data-role=info]')).toHaveText(/^128×96 · auto \d+\.\.\d+$/);
  await expect(jpeg.locator('[data-role=info]')).toHaveText(/^128×96 rgb · auto \d+\.\.\d+$/);
  await expect(jpeg.getByLabel('colour map')).toBeDisabled(); // RGB: its own colours
  await expect(lz4.getByLabel('colour map')).toBeEnabled();
  const lz4Canvas = lz4.locator('canvas[role=img]');
  await expect(lz4Canvas).toHaveAttribute('data-drawn', '128x96');
  const frames = async () => Number(await lz4Canvas.getAttribute('data-frames'));
  const first = await frames();
  await expect.poll(frames, { timeout: 20_000 }).toBeGreaterThan(first + 1);
  // the grey map paints r = g = b, and the pattern, not one flat colour
  const grey = await samples(lz4Canvas);
  expect(grey.every(([r, g, b, a]) => r === g && g === b && a === 255)).toBe(true);
  expect(new Set(grey.map(([r]) => r)).size).toBeGreaterThan(3);
  // the RGB image keeps its colours: blue is the constant middle channel, red and green ramp against each other
  const rgb = await samples(jpeg.locator('canvas[role=img]'));
  expect(rgb.some(([r, g]) => Math.abs(r - g) > 40)).toBe(true);
  // viridis on the detector image: never grey
  const viridis = await samples(big.locator('canvas[role=img]'), 3);
  expect(viridis.every(([r, g, b]) => !(r === g && g === b))).toBe(true);
  // a click picks the profile's row (image pixels), by default the middle one
  const profile = lz4.locator('canvas.profile');
  await expect(profile).toHaveAttribute('data-row', '48');
  await lz4Canvas.scrollIntoViewIfNeeded(); // the last row of the screen
  const box = (await lz4Canvas.boundingBox())!;
  const scale = Math.min(box.width / 128, box.height / 96);
  const top = box.y + (box.height - 96 * scale) / 2;
  await page.mouse.click(box.x + box.width / 2, top + 20.5 * scale);
  await expect(profile).toHaveAttribute('data-row', '20');
});
