/**
 * ECharts behind an attachment: `{@attach echart(ctx, (c) => (chart = c))}` creates
 * the chart once on the element, resizes it with the element and disposes it on
 * removal. Widgets update it with `setOption` from one effect each, which runs at
 * most once per animation frame (the gateway commits once per frame).
 */
import { untrack } from 'svelte';
import type { Attachment } from 'svelte/attachments';
import * as echarts from 'echarts/core';
import { GaugeChart, LineChart, ScatterChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

// Only what the widgets use (the SVG renderer is registered by the unit tests alone).
echarts.use([
  LineChart, ScatterChart, GaugeChart,
  GridComponent, DataZoomComponent, LegendComponent, TooltipComponent, MarkLineComponent,
  CanvasRenderer,
]);

export type ECharts = echarts.ECharts;

/**
 * Text widths for ECharts' layout, with a line at least as tall as its font: zrender
 * takes a line's height from the width of a CJK glyph (国), a few pixels where no
 * CJK font is installed (a plain Debian desktop), so labels were laid out and tested
 * for overlap (`hideOverlap`) as if they were that short, and ran into each other.
 */
function lineHeightFloor(): ((text: string, font?: string) => { width: number }) | null {
  const ctx = typeof document === 'undefined' ? null : document.createElement('canvas').getContext('2d');
  if (!ctx) return null;
  let current = '';
  let size = 12;
  return (text, font = '12px sans-serif') => {
    if (font !== current) {
      ctx.font = current = font; // parsing a font is the costly part: once per change, as zrender does
      size = Number(/(\d+(?:\.\d+)?)px/.exec(ctx.font)?.[1] ?? 12);
    }
    const width = ctx.measureText(text).width;
    return { width: text === '国' ? Math.max(width, size) : width };
  };
}

const measureText = lineHeightFloor();
if (measureText) echarts.setPlatformAPI({ measureText });

/** A text drawn by a chart (tick label, legend, title) and its box, in the chart's pixels. */
export interface TextBox {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** An element a chart is attached to: `textBoxes()` lists the texts the chart draws now. */
export type ChartHost = HTMLElement & { textBoxes?: () => TextBox[] };

/**
 * The texts `chart` draws now (its canvas holds no DOM to measure), measured as the
 * browser draws them: each span's ink across and its font's line box down, placed by
 * its alignment and transform, in chart pixels. Labels a chart hides (an axis's
 * `hideOverlap`) are not drawn, so not listed. (zrender's own boxes take a line's
 * height from the width of a CJK glyph, wrong where no CJK font is installed.)
 */
export function textBoxes(chart: ECharts): TextBox[] {
  type Span = {
    type: string;
    invisible?: boolean;
    transform?: number[] | null;
    style: { text?: unknown; x?: number; y?: number; font?: string; textAlign?: CanvasTextAlign; textBaseline?: CanvasTextBaseline };
  };
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) return [];
  const out: TextBox[] = [];
  for (const el of chart.getZr().storage.getDisplayList(true) as unknown as Span[]) {
    const text = String(el.style?.text ?? '');
    if (el.type !== 'tspan' || el.invisible || !text.trim()) continue;
    const { x = 0, y = 0, font, textAlign = 'left', textBaseline = 'alphabetic' } = el.style;
    if (font) ctx.font = font;
    ctx.textAlign = textAlign;
    ctx.textBaseline = textBaseline;
    const m = ctx.measureText(text);
    const [l, r] = [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight];
    const [t, b] = [y - m.fontBoundingBoxAscent, y + m.fontBoundingBoxDescent];
    // zrender's matrix [a, b, c, d, tx, ty]: x' = a·x + c·y + tx, y' = b·x + d·y + ty
    const [ma, mb, mc, md, tx, ty] = el.transform ?? [1, 0, 0, 1, 0, 0];
    const corners = [[l, t], [r, t], [l, b], [r, b]];
    const xs = corners.map(([px, py]) => ma * px + mc * py + tx);
    const ys = corners.map(([px, py]) => mb * px + md * py + ty);
    const [x0, y0] = [Math.min(...xs), Math.min(...ys)];
    out.push({ text, x: x0, y: y0, w: Math.max(...xs) - x0, h: Math.max(...ys) - y0 });
  }
  return out;
}

/** Attach a chart to an element; `ready` receives it (and null when it goes). */
export function echart(renderer: 'canvas' | 'svg', ready: (chart: ECharts | null) => void): Attachment<HTMLElement> {
  return (el) => {
    const chart = echarts.init(el, null, {
      renderer,
      width: el.clientWidth || 300,
      height: el.clientHeight || 150,
    });
    untrack(() => ready(chart));
    (el as ChartHost).textBoxes = () => textBoxes(chart); // read by the device tests, never by the app
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => chart.resize());
    observer?.observe(el);
    return () => {
      observer?.disconnect();
      delete (el as ChartHost).textBoxes;
      untrack(() => ready(null));
      chart.dispose();
    };
  };
}

/** An attachment that tells `set` the element's width (px, `offsetWidth`) now and whenever it changes. */
export function widthOf(set: (px: number, el: HTMLElement) => void): Attachment<HTMLElement> {
  return (el) => {
    const update = () => set(el.offsetWidth, el);
    update();
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(update);
    observer?.observe(el);
    return () => observer?.disconnect();
  };
}

/** Axis and text colours for the current theme. */
export function chartColours(dark: boolean) {
  return dark
    ? { text: '#c8d0da', axis: '#56606c', grid: '#2a323c', series: ['#4fc3f7', '#ffb74d', '#81c784', '#e57373', '#ba68c8', '#fff176'] }
    : { text: '#1f2630', axis: '#8893a0', grid: '#dde2e8', series: ['#0277bd', '#ef6c00', '#2e7d32', '#c62828', '#6a1b9a', '#9e9d24'] };
}
