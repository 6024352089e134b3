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
