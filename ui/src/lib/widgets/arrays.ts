/** Array helpers for the chart widgets. */

type Numeric = ArrayLike<number | bigint>;

/**
 * Fill `out` (reused when large enough) with `[0, y0, 1, y1, …]`: ECharts reads a
 * typed array as flat (x, y) pairs. One pass per painted frame, not per update.
 */
export function interleaveIndex(y: Numeric, out: Float64Array | null): Float64Array {
  const n = y.length;
  const buf = out && out.length === 2 * n ? out : new Float64Array(2 * n);
  const big = n > 0 && typeof y[0] === 'bigint';
  for (let i = 0; i < n; i++) {
    buf[2 * i] = i;
    buf[2 * i + 1] = big ? Number(y[i]) : (y[i] as number);
  }
  return buf;
}

/** The point counts the gateway rounds `sub.pts` up to (synoptic_schemas.frames.POINT_SIZES). */
export const POINT_SIZES = [256, 512, 1024, 2048, 4096, 8192, 16384];

/** The most points worth drawing on `px` pixels (two per pixel), rounded up as the gateway does. */
export function pointsFor(px: number): number {
  const n = Math.ceil(2 * px);
  return POINT_SIZES.find((s) => n <= s) ?? POINT_SIZES[POINT_SIZES.length - 1];
}

/** `n` device pixels across an image (see image.ts drawnPixels), rounded up as the gateway does (sub.pts). */
export function pixelsFor(n: number): number {
  return POINT_SIZES.find((s) => n <= s) ?? POINT_SIZES[POINT_SIZES.length - 1];
}

/** Fill `out` with `[x0, y0, x1, y1, …]` for the common length of x and y. */
export function interleavePairs(x: Numeric, y: Numeric, out: Float64Array | null): Float64Array {
  const n = Math.min(x.length, y.length);
  const buf = out && out.length === 2 * n ? out : new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    buf[2 * i] = Number(x[i]);
    buf[2 * i + 1] = Number(y[i]);
  }
  return buf;
}
