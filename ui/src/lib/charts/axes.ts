/** Where a chart's texts go: axis labels clear of each other and of the corner, the legend clear of the controls. */

/**
 * An axis's tick labels (10 px, in `color`): labels that would overlap are dropped
 * (ECharts `hideOverlap`), and the end labels are kept clear of the corner the two
 * axes share and of the chart's edges: the x axis's first label starts at its tick
 * and its last ends there; the y axis's lowest label sits above its tick and its
 * highest below. (Centred, the first time label ran under the lowest value label.)
 */
export function axisLabels(color: string, axis: 'x' | 'y') {
  const ends = axis === 'x' ? { alignMinLabel: 'left', alignMaxLabel: 'right' } : { verticalAlignMinLabel: 'bottom', verticalAlignMaxLabel: 'top' };
  return { color, fontSize: 10, hideOverlap: true, ...ends } as const;
}

/** A legend item's room beside its text: the 25 px line sample, its 5 px gap and 10 px to the next item. */
const LEGEND_ITEM_PX = 40;

/** Where a chart's legend goes, and the top of its plot grid. */
export interface LegendPlace {
  top: number;
  left: number;
  /** each name cut to this width (with an ellipsis), or undefined: names whole */
  textWidth?: number;
  gridTop: number;
}

/**
 * A legend of `names` (measured by `measure`, px) on a chart `width` px wide whose
 * top row holds controls up to `from` px: beside them when every name fits, else
 * on a row of its own below them, names cut to share it. A legend never runs under
 * the controls or past the chart's edge.
 */
export function legendPlace(names: string[], width: number, from: number, measure: (text: string) => number): LegendPlace {
  const need = names.reduce((sum, n) => sum + measure(n) + LEGEND_ITEM_PX, 0);
  if (need <= width - from - 4) return { top: 0, left: from, gridTop: 22 };
  const share = Math.floor((width - 8) / names.length) - LEGEND_ITEM_PX;
  return { top: 16, left: 4, textWidth: Math.max(share, 24), gridTop: 38 };
}

/** The width of a text in `font` as a canvas draws it (px), for layouts made before drawing. */
export function textMeasure(font: string): (text: string) => number {
  const ctx = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  if (!ctx) return (text) => text.length * 6;
  ctx.font = font;
  return (text) => ctx.measureText(text).width;
}
