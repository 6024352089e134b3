/**
 * A new screen's first document: a grid (widgets in columns and rows, reflowing
 * with the window) or a canvas (widgets at pixel positions on a fixed-size canvas,
 * scaled to the window), its sizes checked against the schema's limits.
 */
import type { Screen } from '../screen';
import { CANVAS_FIELDS, GRID_FIELDS, type Field } from './options';

export type NewLayout = { type: 'grid'; columns: number } | { type: 'canvas'; width: number; height: number };

/** The chooser's defaults: the grid the viewer and the demo screens use, a 1280 × 800 canvas. */
export const DEFAULT_GRID: NewLayout = { type: 'grid', columns: 12 };
export const DEFAULT_CANVAS: NewLayout = { type: 'canvas', width: 1280, height: 800 };

/** Canvas sizes offered as presets (px). */
export const CANVAS_PRESETS: readonly (readonly [number, number])[] = [
  [1280, 800],
  [1920, 1080],
  [1024, 768],
  [800, 600],
];

const field = (fields: readonly Field[], key: string): Field => fields.find((f) => f.key === key)!;

/** The limits of a size field, from the schema: [min, max]. */
export function limits(layout: NewLayout['type'], key: 'columns' | 'width' | 'height'): [number, number] {
  const f = field(layout === 'grid' ? GRID_FIELDS : CANVAS_FIELDS, key);
  return [f.min ?? 1, f.max ?? Infinity];
}

/** Why a size is refused ('' when it is accepted). */
export function sizeError(layout: NewLayout): string {
  const sizes: [key: 'columns' | 'width' | 'height', value: number][] =
    layout.type === 'grid' ? [['columns', layout.columns]] : [['width', layout.width], ['height', layout.height]];
  for (const [key, v] of sizes) {
    const [min, max] = limits(layout.type, key);
    if (!Number.isInteger(v) || v < min || v > max) return `${key} is a whole number from ${min} to ${max}`;
  }
  return '';
}

/** The empty screen of that layout (throws on a size the schema refuses: check sizeError first). */
export function blankScreen(title: string, layout: NewLayout): Screen {
  const why = sizeError(layout);
  if (why) throw new RangeError(why);
  const head = { version: 1 as const, title: title.trim() || 'New screen' };
  if (layout.type === 'canvas') return { ...head, layout: { type: 'canvas', width: layout.width, height: layout.height }, widgets: [] };
  return { ...head, layout: { type: 'grid', columns: layout.columns, row_height: 30, gap: 4 }, widgets: [] };
}

/**
 * The name a title suggests for a screen's address: lower case, letters and digits
 * joined by "-" (a screen name is 1-128 letters, digits, - or _, starting with a
 * letter or digit); '' when the title has none.
 */
export function nameFor(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128)
    .replace(/-+$/, '');
}
