/**
 * Keyboard zoom and pan of a chart with `inside` data zooms (index 0: the X axis,
 * index 1: the Y axis, when there is one). Keys, while the chart has focus:
 * `+` / `-` zoom X in / out, `←` / `→` pan X, `↑` / `↓` zoom Y in / out;
 * `Home` or `Escape` are left to the widget (back to the live window).
 */
import type { ECharts } from './echarts';

/** The help text shown with charts (tooltips, the help page). */
export const CHART_KEYS = '+ − zoom time · ← → pan · ↑ ↓ zoom values · Home/Esc back to live';

interface ZoomWindow {
  start?: number;
  end?: number;
}

/** Move the zoom window of data zoom `index` (percent of the axis): scale its span by `factor`, shift its centre by `shift` spans. */
export function zoomWindow(chart: ECharts, index: number, factor: number, shift = 0): void {
  const zooms = (chart.getOption().dataZoom ?? []) as ZoomWindow[];
  const zoom = zooms[index];
  if (!zoom) return;
  const start = zoom.start ?? 0;
  const end = zoom.end ?? 100;
  const span = Math.min(100, Math.max(0.5, (end - start) * factor));
  let centre = (start + end) / 2 + shift * (end - start);
  centre = Math.min(100 - span / 2, Math.max(span / 2, centre));
  chart.dispatchAction({ type: 'dataZoom', dataZoomIndex: index, start: centre - span / 2, end: centre + span / 2 });
}

/** Apply a key to the chart; true when it was one of the zoom/pan keys. */
export function chartKey(chart: ECharts, key: string, hasY: boolean): boolean {
  switch (key) {
    case '+':
    case '=':
      zoomWindow(chart, 0, 0.5);
      return true;
    case '-':
    case '_':
      zoomWindow(chart, 0, 2);
      return true;
    case 'ArrowLeft':
      zoomWindow(chart, 0, 1, -0.25);
      return true;
    case 'ArrowRight':
      zoomWindow(chart, 0, 1, 0.25);
      return true;
    case 'ArrowUp':
      if (hasY) zoomWindow(chart, 1, 0.5);
      return hasY;
    case 'ArrowDown':
      if (hasY) zoomWindow(chart, 1, 2);
      return hasY;
    default:
      return false;
  }
}
