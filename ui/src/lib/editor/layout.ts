/**
 * Where the viewer's CSS grid puts each widget, as explicit 1-based cells: the
 * editor works on explicit positions. Follows CSS Grid's sparse auto-placement
 * (row flow): widgets with both x and y first, then those with only y, then the
 * rest in order from a cursor that only moves forward.
 */
import type { WidgetSpec } from '../screen';

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

class Occupancy {
  readonly rows: boolean[][] = [];
  constructor(readonly columns: number) {}

  fits(x: number, y: number, w: number, h: number): boolean {
    if (x < 1 || x + w - 1 > this.columns) return false;
    for (let r = y; r < y + h; r++) {
      const row = this.rows[r];
      if (!row) continue;
      for (let c = x; c < x + w; c++) if (row[c]) return false;
    }
    return true;
  }

  take(b: Box): void {
    for (let r = b.y; r < b.y + b.h; r++) {
      const row = (this.rows[r] ??= []);
      for (let c = b.x; c < b.x + b.w; c++) row[c] = true;
    }
  }
}

/**
 * Explicit boxes for `specs` on a grid of `columns` (spans clamped to the grid);
 * `size` gives a type's default span when a widget has none.
 */
export function placeAll(specs: readonly WidgetSpec[], columns: number, size: (type: string) => [number, number]): Box[] {
  const grid = new Occupancy(columns);
  const out: Box[] = new Array(specs.length);
  const span = (s: WidgetSpec): [number, number] => {
    const [dw, dh] = size(s.type);
    return [Math.min(columns, Math.max(1, s.w ?? dw)), Math.max(1, s.h ?? dh)];
  };
  specs.forEach((s, i) => {
    if (s.x && s.y) {
      const [w, h] = span(s);
      const x = Math.min(s.x, columns - w + 1);
      out[i] = { x, y: s.y, w, h };
      grid.take(out[i]);
    }
  });
  specs.forEach((s, i) => {
    if (!s.x && s.y) {
      const [w, h] = span(s);
      let x = 1;
      while (!grid.fits(x, s.y, w, h) && x + w - 1 < columns) x++;
      out[i] = { x, y: s.y, w, h };
      grid.take(out[i]);
    }
  });
  let cx = 1;
  let cy = 1;
  specs.forEach((s, i) => {
    if (s.y) return;
    const [w, h] = span(s);
    if (s.x) {
      const x = Math.min(s.x, columns - w + 1);
      if (x < cx) cy++;
      while (!grid.fits(x, cy, w, h)) cy++;
      out[i] = { x, y: cy, w, h };
      cx = x + w;
    } else {
      for (;;) {
        if (cx + w - 1 > columns) {
          cx = 1;
          cy++;
          continue;
        }
        if (grid.fits(cx, cy, w, h)) break;
        cx++;
      }
      out[i] = { x: cx, y: cy, w, h };
      cx += w;
    }
    grid.take(out[i]);
  });
  return out;
}

/** Whether two boxes share a cell. */
export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Whether `inner` lies entirely within `outer`. */
export function inside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;
}

/** The first free cell (row by row) for a box of w × h, below `fromRow`. */
export function firstFree(boxes: readonly Box[], columns: number, w: number, h: number, fromRow = 1): Box {
  const grid = new Occupancy(columns);
  for (const b of boxes) grid.take(b);
  const cw = Math.min(w, columns);
  for (let y = fromRow; ; y++) for (let x = 1; x + cw - 1 <= columns; x++) if (grid.fits(x, y, cw, h)) return { x, y, w: cw, h };
}

/**
 * Where a widget of default size w × h dropped on cell `at` goes: its left column is
 * the one dropped on, its size the default cut to the columns and to the free cells
 * right of and below it (never over another widget); dropped on a widget, it goes
 * to the first free row below, in the same column. A section takes no cells: what is
 * dropped on it goes inside it.
 */
export function dropBox(boxes: readonly (Box & { section?: boolean })[], columns: number, at: { x: number; y: number }, w: number, h: number): Box {
  const grid = new Occupancy(columns);
  for (const b of boxes) if (!b.section) grid.take(b);
  const x = Math.min(columns, Math.max(1, at.x));
  const maxW = Math.max(1, Math.min(w, columns - x + 1));
  for (let y = Math.max(1, at.y); ; y++) {
    if (!grid.fits(x, y, 1, 1)) continue;
    // cut in width first, or in height first: the larger (a tie keeps the height)
    const grow = (first: 'w' | 'h'): Box => {
      let fw = 1;
      let fh = 1;
      const widen = () => {
        while (fw < maxW && grid.fits(x, y, fw + 1, fh)) fw++;
      };
      const deepen = () => {
        while (fh < h && grid.fits(x, y, fw, fh + 1)) fh++;
      };
      if (first === 'w') (widen(), deepen());
      else (deepen(), widen());
      return { x, y, w: fw, h: fh };
    };
    const wide = grow('w');
    const tall = grow('h');
    return wide.w * wide.h > tall.w * tall.h ? wide : tall;
  }
}

/** Pairs of boxes that share a cell, as indices (a section holds widgets: its own are no overlap). */
export function overlapping(boxes: readonly (Box & { section?: boolean })[]): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (a.section || b.section) continue;
      if (overlaps(a, b)) out.add(i).add(j);
    }
  return out;
}
