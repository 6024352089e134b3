/**
 * Canvas screens: each widget sits in a box of its own, absolutely placed in canvas
 * pixels, carrying the widget's style; the canvas is scaled to the window as a whole.
 */
import type { Box, CanvasLayout, WidgetSpec } from '../screen';
import { applyStyle, cssColour } from './style';

/** The absolutely placed box of one canvas widget (styled; hidden when `visible` is false). */
export function canvasBox(spec: WidgetSpec): HTMLElement {
  const el = document.createElement('div');
  el.className = `abs t-${spec.type}`;
  const b: Box = spec.box ?? { x: 0, y: 0, w: 100, h: 20 };
  const s = el.style;
  s.left = `${b.x}px`;
  s.top = `${b.y}px`;
  s.width = `${b.w}px`;
  s.height = `${b.h}px`;
  applyStyle(el, spec.style);
  if (spec.visible === false) el.hidden = true;
  return el;
}

/** The uniform scale of a canvas in an area `areaW` × `areaH` pixels. */
export function canvasScale(layout: CanvasLayout, areaW: number, areaH: number): number {
  const mode = layout.scale ?? 'fit-width';
  if (mode === 'none' || areaW <= 0) return 1;
  const sx = areaW / layout.width;
  if (mode === 'fit-width' || areaH <= 0) return sx;
  return Math.min(sx, areaH / layout.height);
}

/** The text colour for a canvas background: dark on light backgrounds, null (the theme's) otherwise. */
export function textOn(background: string | undefined): string | null {
  const css = cssColour(background);
  if (!css) return null;
  const n = parseInt(css.slice(1, 7), 16);
  const lum = (0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255)) / 255;
  return lum > 0.55 ? '#000000' : '#ffffff';
}
