import { describe, expect, it } from 'vitest';
import { autoRange, colorTable, COLORMAPS, dragRegion, drawnPixels, paintMono, paintRgb, paintSize, rowProfile } from './image';

const whole = (w: number, h: number) => ({ x0: 0, y0: 0, x1: w, y1: h });
/** The bytes of one packed ImageData pixel: [r, g, b, a]. */
const rgbaOf = (word: number) => Array.from(new Uint8Array(new Uint32Array([word]).buffer));

describe('colour tables', () => {
  it('have 256 opaque entries from the first anchor to the last', () => {
    for (const name of COLORMAPS) {
      const t = colorTable(name);
      expect(t.length).toBe(256);
      expect(rgbaOf(t[0])[3]).toBe(255);
    }
    expect(rgbaOf(colorTable('grey')[0])).toEqual([0, 0, 0, 255]);
    expect(rgbaOf(colorTable('grey')[255])).toEqual([255, 255, 255, 255]);
    expect(rgbaOf(colorTable('viridis')[255])).toEqual([253, 231, 37, 255]);
    expect(colorTable('no such map')).toBe(colorTable('grey'));
  });
});

describe('mono images', () => {
  const w = 4;
  const data = Uint16Array.from({ length: 12 }, (_, i) => i * 100); // 3 rows of 4

  it('auto range covers the shown region only', () => {
    expect(autoRange(data, w, whole(4, 3))).toEqual([0, 1100]);
    expect(autoRange(data, w, { x0: 1, y0: 1, x1: 3, y1: 3 })).toEqual([500, 1000]);
    expect(autoRange(new Uint16Array(0), 0, whole(0, 0))).toEqual([0, 1]);
    expect(autoRange(data, w, whole(4, 3), 1, 2, 1)).toEqual([0, 200]); // over the painted samples: pixels 0 and 2
    expect(autoRange(Uint8Array.from([1, 9, 3, 4, 5, 6]), 2, whole(2, 1), 3)).toEqual([1, 9]); // RGB: every colour
  });

  it('maps each pixel of the region through the table, clamped to the range', () => {
    const out = new Uint32Array(4);
    const grey = colorTable('grey');
    paintMono(out, data, w, { x0: 1, y0: 1, x1: 3, y1: 3 }, 500, 1000, grey);
    // pixels 5, 6 / 9, 10 (values 500, 600 / 900, 1000) → 0, 51 / 204, 255
    expect(Array.from(out, (p) => rgbaOf(p)[0])).toEqual([0, 51, 204, 255]);
    paintMono(out, data, w, { x0: 0, y0: 0, x1: 2, y1: 2 }, 450, 460, grey);
    expect(Array.from(out, (p) => rgbaOf(p)[0])).toEqual([0, 0, 0, 255]); // 0, 100, 400 below, 500 above
  });

  it('a megapixel frame paints without per-pixel objects in well under a frame budget', () => {
    const big = new Uint16Array(1024 * 1024).map((_, i) => i & 0xffff);
    const out = new Uint32Array(big.length);
    const start = performance.now();
    const [lo, hi] = autoRange(big, 1024, whole(1024, 1024));
    paintMono(out, big, 1024, whole(1024, 1024), lo, hi, colorTable('inferno'));
    expect(performance.now() - start).toBeLessThan(500); // ~10 ms in a browser; jsdom on a busy machine is slower
    expect(out[0]).toBe(colorTable('inferno')[0]);
  });

  it('the profile is one row of the region, reusing its buffer', () => {
    const p = rowProfile(data, w, 2, 1, 4);
    expect(Array.from(p)).toEqual([900, 1000, 1100]);
    expect(rowProfile(data, w, 0, 1, 4, 1, p)).toBe(p);
  });
});

describe('colour images', () => {
  it('paint interleaved [h, w, 3] pixels scaled to the range', () => {
    const rgb = Uint8Array.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30]); // 2×2
    const out = new Uint32Array(4);
    paintRgb(out, rgb, 2, whole(2, 2), 0, 255);
    expect(rgbaOf(out[0])).toEqual([255, 0, 0, 255]);
    expect(rgbaOf(out[3])).toEqual([10, 20, 30, 255]);
    expect(Array.from(rowProfile(rgb, 2, 1, 0, 2, 3))).toEqual([85, 20]);
  });
});

describe('zoom by dragging', () => {
  it('a drag selects the pixels it spans, clamped; a click selects nothing', () => {
    const within = whole(100, 50);
    expect(dragRegion(10.2, 40, 2.7, 60, within)).toEqual({ x0: 3, y0: 40, x1: 10, y1: 50 });
    expect(dragRegion(5, 5, 5.4, 6, within)).toBeNull();
  });
});

describe('painting at the shown size', () => {
  it('a region larger than the screen shows it is painted smaller, same aspect', () => {
    expect(paintSize(whole(1024, 1024), 400, 300)).toEqual([300, 300]);
    expect(paintSize(whole(1024, 512), 400, 400)).toEqual([400, 200]);
    expect(paintSize(whole(100, 50), 400, 400)).toEqual([100, 50]); // never larger than the region
  });

  it('sampling takes the nearest source pixels', () => {
    const data = Uint16Array.from({ length: 16 }, (_, i) => i); // 4×4, value = index
    const out = new Uint32Array(4);
    const grey = colorTable('grey');
    paintMono(out, data, 4, whole(4, 4), 0, 255, grey, 2, 2);
    expect(Array.from(out, (p) => rgbaOf(p)[0])).toEqual([0, 2, 8, 10]);
  });
});

describe('drawnPixels', () => {
  it('is the longer side of the image as drawn contained, in device pixels', () => {
    expect(drawnPixels(909, 430, 1, 1024, 1024)).toBe(430);
    expect(drawnPixels(909, 430, 2, 1024, 1024)).toBe(860);
    expect(drawnPixels(909, 430, 1, 512, 2048)).toBe(909);
    expect(drawnPixels(300, 800, 1)).toBe(300); // unknown size: square
  });
});
