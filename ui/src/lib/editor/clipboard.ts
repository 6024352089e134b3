/**
 * Copy and paste of widgets as text (the system clipboard and a page-local copy):
 * a small JSON envelope so that pasting any other text is refused cleanly.
 */
import type { WidgetSpec } from '../screen';
import type { Box } from './layout';
import type { EditorDoc } from './model';

const KIND = 'synoptic/widgets';

/** The selected widgets' specs (document order) as clipboard text. */
export function copyText(doc: EditorDoc, ids: readonly string[]): string | null {
  const set = new Set(ids);
  const widgets = doc.widgets.filter((w) => set.has(w.id)).map((w) => w.spec);
  return widgets.length ? JSON.stringify({ kind: KIND, widgets }) : null;
}

/** Widgets from clipboard text, or null when the text is not a copy of widgets. */
export function parseClipboard(text: string): (WidgetSpec & Box)[] | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const b = body as { kind?: unknown; widgets?: unknown };
  if (!b || b.kind !== KIND || !Array.isArray(b.widgets)) return null;
  const ok = b.widgets.every((w) => w && typeof w === 'object' && typeof (w as WidgetSpec).type === 'string');
  if (!ok) return null;
  return (b.widgets as WidgetSpec[]).map((w) => ({ ...w, x: w.x ?? 1, y: w.y ?? 1, w: w.w ?? 2, h: w.h ?? 2 }));
}

/**
 * The pasted widgets placed with their top-left corner at `at` (their relative
 * layout kept), or one step (a cell, or canvas pixels) down and right of where they were copied from.
 */
export function placePasted(specs: readonly (WidgetSpec & Box)[], at?: { x: number; y: number }, step = 1): (WidgetSpec & Box)[] {
  if (!specs.length) return [];
  const minX = Math.min(...specs.map((s) => s.x));
  const minY = Math.min(...specs.map((s) => s.y));
  const dx = at ? at.x - minX : step;
  const dy = at ? at.y - minY : step;
  return specs.map((s) => ({ ...s, x: s.x + dx, y: s.y + dy }));
}
