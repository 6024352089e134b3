/** How many ticks a chart has room for. */

/** Width of a gauge's tick label with its gap, in pixels (4 characters at 9 px). */
const GAUGE_LABEL_PX = 30;
/** Interval counts that cut a round range (0–100, −10–10, …) at round values. */
const NICE_SPLITS = [10, 5, 4, 2];

/**
 * The number of intervals (`splitNumber`) of a gauge of radius `r` px: its 270°
 * dial holds a label every ~30 px of its label circle (at ~3/4 of the radius), so a
 * small gauge gets fewer labels instead of overlapping ones: the largest of 10, 5,
 * 4, 2 that fits (2 at least).
 */
export function gaugeSplits(r: number): number {
  const room = Math.floor((1.5 * Math.PI * 0.75 * r) / GAUGE_LABEL_PX) - 1;
  return NICE_SPLITS.find((n) => n <= room) ?? 2;
}

/** A tick label: at most 3 significant digits (no `1.4285714`). */
export function tickLabel(v: number): string {
  return String(Number(v.toPrecision(3)));
}
