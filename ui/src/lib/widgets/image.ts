/**
 * Image drawing for the image widget: pure functions over a typed array, no
 * per-pixel objects. A frame is mapped through a 256-entry colour table straight
 * into the 32-bit words of a canvas `ImageData`; the range (`lo`..`hi`) is fixed
 * or found in one pass over the visible region.
 */

type Pixels = ArrayLike<number>;

/** A region of the image in pixels: columns x0..x1-1, rows y0..y1-1. */
export interface Region {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** Colour map anchor points, evenly spaced from 0 to 1, as [r, g, b]. */
const ANCHORS: Record<string, [number, number, number][]> = {
  grey: [[0, 0, 0], [255, 255, 255]],
  viridis: [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142], [31, 158, 137], [53, 183, 121], [110, 206, 88], [181, 222, 43], [253, 231, 37]],
  inferno: [[0, 0, 4], [31, 12, 72], [85, 15, 109], [136, 34, 106], [186, 54, 85], [227, 89, 51], [249, 140, 10], [249, 201, 50], [252, 255, 164]],
  jet: [[0, 0, 128], [0, 0, 255], [0, 128, 255], [0, 255, 255], [128, 255, 128], [255, 255, 0], [255, 128, 0], [255, 0, 0], [128, 0, 0]],
};

/** The colour maps the widget offers. */
export const COLORMAPS = Object.keys(ANCHORS);

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** One opaque pixel as the 32-bit word a canvas `ImageData` holds. */
function rgba(r: number, g: number, b: number): number {
  return littleEndian ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
}

const tables = new Map<string, Uint32Array>();

/** The 256-entry table of a colour map (grey for an unknown name). */
export function colorTable(name: string): Uint32Array {
  const key = name in ANCHORS ? name : 'grey';
  let table = tables.get(key);
  if (!table) {
    const anchors = ANCHORS[key];
    table = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      const pos = (i / 255) * (anchors.length - 1);
      const k = Math.min(Math.floor(pos), anchors.length - 2);
      const f = pos - k;
      const [a, b] = [anchors[k], anchors[k + 1]];
      table[i] = rgba(
        Math.round(a[0] + (b[0] - a[0]) * f),
        Math.round(a[1] + (b[1] - a[1]) * f),
        Math.round(a[2] + (b[2] - a[2]) * f),
      );
    }
    tables.set(key, table);
  }
  return table;
}

/**
 * The size to paint a region at: the region itself, or smaller (the same aspect)
 * when the screen shows it smaller than one image pixel per device pixel, so a
 * megapixel image shown in 400 px paints 400² pixels, not 1024².
 */
export function paintSize(region: Region, maxWidth: number, maxHeight: number): [number, number] {
  const rw = region.x1 - region.x0;
  const rh = region.y1 - region.y0;
  const step = Math.max(1, rw / Math.max(maxWidth, 1), rh / Math.max(maxHeight, 1));
  return [Math.max(1, Math.floor(rw / step)), Math.max(1, Math.floor(rh / step))];
}

/**
 * Device pixels across the longer side of an `h × w` image drawn contained in a
 * `boxW × boxH` CSS-pixel box (the count an image subscription asks, `sub.pts`);
 * an image of unknown size is taken as square.
 */
export function drawnPixels(boxW: number, boxH: number, dpr: number, h = 0, w = 0): number {
  const [ih, iw] = h > 0 && w > 0 ? [h, w] : [1, 1];
  const scale = Math.min(boxW / iw, boxH / ih);
  return Math.ceil(Math.max(iw, ih) * scale * dpr);
}

/** Source column (or row) of each painted one: nearest pixel, `n` of them over `from`..`to`. */
function samples(from: number, to: number, n: number): Int32Array {
  const out = new Int32Array(n);
  const step = (to - from) / n;
  for (let i = 0; i < n; i++) out[i] = from + Math.floor(i * step);
  return out;
}

/**
 * Smallest and largest value in the region ([0, 1] when empty): over the pixels
 * painted (`ow`×`oh` nearest samples, by default every pixel), so the range is
 * the one of what is shown, at the cost of what is painted.
 */
export function autoRange(data: Pixels, width: number, region: Region, channels = 1, ow = region.x1 - region.x0, oh = region.y1 - region.y0): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  const xs = samples(region.x0, region.x1, ow);
  const ys = samples(region.y0, region.y1, oh);
  for (let r = 0; r < oh; r++) {
    const row = ys[r] * width;
    for (let c = 0; c < ow; c++) {
      const i = (row + xs[c]) * channels;
      for (let k = 0; k < channels; k++) {
        const v = data[i + k];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

/**
 * Paint the region of a mono image into `out` (the `Uint32Array` view of an
 * `ImageData` of `ow`×`oh`, by default the region's size; smaller samples the
 * nearest pixels), through `table` between `lo` and `hi`.
 */
export function paintMono(out: Uint32Array, data: Pixels, width: number, region: Region, lo: number, hi: number, table: Uint32Array, ow = region.x1 - region.x0, oh = region.y1 - region.y0): void {
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  const xs = samples(region.x0, region.x1, ow);
  const ys = samples(region.y0, region.y1, oh);
  let o = 0;
  for (let r = 0; r < oh; r++) {
    const row = ys[r] * width;
    for (let c = 0; c < ow; c++) {
      let k = (data[row + xs[c]] - lo) * scale;
      k = k < 0 ? 0 : k > 255 ? 255 : k | 0;
      out[o++] = table[k];
    }
  }
}

/** Paint the region of an interleaved RGB image (`[h, w, 3]`) into `out` (`ow`×`oh` as for `paintMono`), each colour scaled from `lo`..`hi` to 0..255. */
export function paintRgb(out: Uint32Array, data: Pixels, width: number, region: Region, lo: number, hi: number, ow = region.x1 - region.x0, oh = region.y1 - region.y0): void {
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  const clamp = (v: number) => {
    const k = (v - lo) * scale;
    return k < 0 ? 0 : k > 255 ? 255 : k | 0;
  };
  const xs = samples(region.x0, region.x1, ow);
  const ys = samples(region.y0, region.y1, oh);
  let o = 0;
  for (let r = 0; r < oh; r++) {
    const row = ys[r] * width;
    for (let c = 0; c < ow; c++) {
      const i = (row + xs[c]) * 3;
      out[o++] = rgba(clamp(data[i]), clamp(data[i + 1]), clamp(data[i + 2]));
    }
  }
}

/** The values of row `y` between columns x0 and x1 (mono; RGB: their mean), reusing `out` when it fits. */
export function rowProfile(data: Pixels, width: number, y: number, x0: number, x1: number, channels = 1, out?: Float64Array): Float64Array {
  const n = Math.max(x1 - x0, 0);
  const buf = out && out.length === n ? out : new Float64Array(n);
  for (let x = 0; x < n; x++) {
    const i = (y * width + x0 + x) * channels;
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += data[i + c];
    buf[x] = sum / channels;
  }
  return buf;
}

/** The region a drag from (ax, ay) to (bx, by) selects, in image pixels inside `within` (at least 2×2), or null for a click. */
export function dragRegion(ax: number, ay: number, bx: number, by: number, within: Region): Region | null {
  const clampX = (v: number) => Math.min(Math.max(Math.round(v), within.x0), within.x1);
  const clampY = (v: number) => Math.min(Math.max(Math.round(v), within.y0), within.y1);
  const x0 = clampX(Math.min(ax, bx));
  const x1 = clampX(Math.max(ax, bx));
  const y0 = clampY(Math.min(ay, by));
  const y1 = clampY(Math.max(ay, by));
  return x1 - x0 >= 2 && y1 - y0 >= 2 ? { x0, y0, x1, y1 } : null;
}
