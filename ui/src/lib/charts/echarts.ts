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
import { DataZoomComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

// Only what the widgets use (the SVG renderer is registered by the unit tests alone).
echarts.use([
  LineChart, ScatterChart, GaugeChart,
  GridComponent, DataZoomComponent, LegendComponent, TooltipComponent,
  CanvasRenderer,
]);

export type ECharts = echarts.ECharts;

/** Attach a chart to an element; `ready` receives it (and null when it goes). */
export function echart(renderer: 'canvas' | 'svg', ready: (chart: ECharts | null) => void): Attachment<HTMLElement> {
  return (el) => {
    const chart = echarts.init(el, null, {
      renderer,
      width: el.clientWidth || 300,
      height: el.clientHeight || 150,
    });
    untrack(() => ready(chart));
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => chart.resize());
    observer?.observe(el);
    return () => {
      observer?.disconnect();
      untrack(() => ready(null));
      chart.dispose();
    };
  };
}

/** Axis and text colours for the current theme. */
export function chartColours(dark: boolean) {
  return dark
    ? { text: '#c8d0da', axis: '#56606c', grid: '#2a323c', series: ['#4fc3f7', '#ffb74d', '#81c784', '#e57373', '#ba68c8', '#fff176'] }
    : { text: '#1f2630', axis: '#8893a0', grid: '#dde2e8', series: ['#0277bd', '#ef6c00', '#2e7d32', '#c62828', '#6a1b9a', '#9e9d24'] };
}
