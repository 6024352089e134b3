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

/** Height of a value axis's interval per interval asked for (px): room for a 10 px label and its gap. */
const VALUE_SPLIT_PX = 40;

/**
 * The number of intervals (`splitNumber`) to ask of a value axis `h` px long (the
 * plot's height): one per 40 px, 1 to 5 (ECharts' default). ECharts rounds the
 * interval to 1, 2, 3 or 5 × 10ⁿ, down by up to 1.5×, and widens a `scale` axis to
 * whole intervals, so it draws up to about 1.5 × n + 1 of them: ticks stay ≥ 16 px
 * apart, clear of each other's 10 px labels, where the default 5 put the labels of
 * a small chart (a canvas screen's 40 px plot) on top of each other.
 */
export function valueSplits(h: number): number {
  return Math.min(5, Math.max(1, Math.floor(h / VALUE_SPLIT_PX)));
}

/** A tick label: at most 3 significant digits (no `1.4285714`). */
export function tickLabel(v: number): string {
  return String(Number(v.toPrecision(3)));
}
