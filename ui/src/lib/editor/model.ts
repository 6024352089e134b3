/**
 * The document the editor changes: a screen whose widgets carry an editor-only id
 * and explicit grid boxes. Every operation is a pure function returning a new
 * document (unchanged parts shared), so History keeps steps cheaply.
 */
import type { Screen, WidgetSpec } from '../screen';
import { placeAll, inside, overlaps, type Box } from './layout';

export interface EditorWidget {
  readonly id: string;
  /** x, y, w, h always set */
  readonly spec: WidgetSpec & Box;
}

export interface EditorDoc {
  /** everything of the screen but its widgets */
  readonly head: Omit<Screen, 'widgets'>;
  readonly widgets: readonly EditorWidget[];
  /** the next widget id's number */
  readonly seq: number;
}

export const DEFAULT_COLUMNS = 12;

export function columnsOf(doc: EditorDoc): number {
  return doc.head.layout?.columns ?? DEFAULT_COLUMNS;
}

/** Whether the document is a canvas screen: boxes in canvas pixels instead of grid cells. */
export function isCanvas(doc: EditorDoc): boolean {
  return doc.head.layout?.type === 'canvas';
}

/** A canvas box's limits in the schema (px in the canvas's coordinate space). */
const CANVAS_MIN = -20000;
const CANVAS_MAX = 100000;

/** The box a widget of no `box` gets on a canvas (as the viewer draws it). */
const CANVAS_DEFAULT: Box = { x: 0, y: 0, w: 100, h: 20 };

/** A screen as an editor document: ids and explicit boxes for every widget. */
export function fromScreen(screen: Screen, size: (type: string) => [number, number]): EditorDoc {
  const { widgets, ...head } = screen;
  const list = Array.isArray(widgets) ? widgets : [];
  if (head.layout?.type === 'canvas') {
    // the canvas box is the editor's x/y/w/h (pixels); grid cells are ignored there
    const spec = (s: WidgetSpec): WidgetSpec & Box => {
      const { x: _x, y: _y, w: _w, h: _h, box, ...rest } = s;
      return { ...rest, ...CANVAS_DEFAULT, ...box };
    };
    return { head, widgets: list.map((s, i) => ({ id: `w${i + 1}`, spec: spec(s) })), seq: list.length + 1 };
  }
  const boxes = placeAll(list, head.layout?.columns ?? DEFAULT_COLUMNS, size);
  return { head, widgets: list.map((spec, i) => ({ id: `w${i + 1}`, spec: { ...spec, ...boxes[i] } })), seq: list.length + 1 };
}

/** The screen file of a document (widgets in document order, explicit boxes). */
export function toScreen(doc: EditorDoc): Screen {
  if (isCanvas(doc)) {
    const widgets = doc.widgets.map(({ spec: { x, y, w, h, ...rest } }) => ({ ...rest, box: { x, y, w, h } }));
    return { ...doc.head, widgets };
  }
  return { ...doc.head, widgets: doc.widgets.map((w) => w.spec) };
}

export function byId(doc: EditorDoc, id: string): EditorWidget | undefined {
  return doc.widgets.find((w) => w.id === id);
}

function clampGrid(b: Box, columns: number): Box {
  const w = Math.min(columns, Math.max(1, Math.round(b.w)));
  const h = Math.min(200, Math.max(1, Math.round(b.h)));
  const x = Math.min(columns - w + 1, Math.max(1, Math.round(b.x)));
  const y = Math.max(1, Math.round(b.y));
  return { x, y, w, h };
}

function clampCanvas(b: Box): Box {
  const size = (v: number) => Math.min(CANVAS_MAX, Math.max(0, Math.round(v)));
  const at = (v: number) => Math.min(CANVAS_MAX, Math.max(CANVAS_MIN, Math.round(v)));
  return { x: at(b.x), y: at(b.y), w: size(b.w), h: size(b.h) };
}

/** The document's box clamp: grid cells within the columns, or canvas pixels within the schema's range. */
function clampOf(doc: EditorDoc): (b: Box) => Box {
  if (isCanvas(doc)) return clampCanvas;
  const columns = columnsOf(doc);
  return (b) => clampGrid(b, columns);
}

/**
 * How far a group of boxes may move: [min dx, max dx, min dy]. On a grid, within
 * the columns and below the first row; on a canvas, not off its left, top or
 * right edge (a widget already outside stays where it is on that side).
 */
export function moveLimits(doc: EditorDoc, boxes: readonly Box[]): [number, number, number] {
  const minX = Math.min(...boxes.map((b) => b.x));
  const minY = Math.min(...boxes.map((b) => b.y));
  if (isCanvas(doc)) {
    const width = (doc.head.layout as { width?: number }).width ?? CANVAS_MAX;
    const right = Math.max(...boxes.map((b) => b.x + b.w));
    return [Math.min(0, -minX), Math.max(0, width - right), Math.min(0, -minY)];
  }
  const maxX = Math.max(...boxes.map((b) => b.x + b.w - 1));
  return [1 - minX, columnsOf(doc) - maxX, 1 - minY];
}

/** `v` to the nearest multiple of `step` (unchanged for a step ≤ 1). */
export function snap(v: number, step: number): number {
  return step > 1 ? Math.round(v / step) * step : Math.round(v);
}

/** Pixels per grid cell when a palette widget's default span becomes a canvas box. */
export const CANVAS_CELL: readonly [number, number] = [60, 24];

/**
 * Where a new w × h widget goes on a canvas when it is not dropped at a point:
 * at the left margin under the lowest widget, kept on the canvas.
 */
export function canvasSpot(doc: EditorDoc, w: number, h: number, margin = 10): Box {
  const height = (doc.head.layout as { height?: number }).height ?? CANVAS_MAX;
  const bottom = doc.widgets.reduce((m, x) => Math.max(m, x.spec.y + x.spec.h), 0);
  const y = Math.max(0, Math.min(bottom + margin, height - h));
  return { x: margin, y, w, h };
}

function mapSelected(doc: EditorDoc, ids: Iterable<string>, f: (w: EditorWidget) => EditorWidget['spec']): EditorDoc {
  const set = new Set(ids);
  let changed = false;
  const widgets = doc.widgets.map((w) => {
    if (!set.has(w.id)) return w;
    const spec = f(w);
    if (spec === w.spec) return w;
    changed = true;
    return { id: w.id, spec };
  });
  return changed ? { ...doc, widgets } : doc;
}

/** Add widgets (specs with boxes, clamped to the grid); returns the document and their new ids. */
export function addWidgets(doc: EditorDoc, specs: readonly (WidgetSpec & Box)[]): { doc: EditorDoc; ids: string[] } {
  const clamp = clampOf(doc);
  let seq = doc.seq;
  const added = specs.map((s) => {
    const { box: _box, ...rest } = s;
    return { id: `w${seq++}`, spec: { ...rest, ...clamp(s) } };
  });
  return { doc: { ...doc, widgets: [...doc.widgets, ...added], seq }, ids: added.map((w) => w.id) };
}

/** Widgets of `ids` and the widgets that lie inside a selected section (they move with it). */
export function withContents(doc: EditorDoc, ids: Iterable<string>): Set<string> {
  const out = new Set(ids);
  for (const s of doc.widgets) {
    if (!out.has(s.id) || s.spec.type !== 'section') continue;
    for (const w of doc.widgets) if (w !== s && w.spec.type !== 'section' && inside(w.spec, s.spec)) out.add(w.id);
  }
  return out;
}

/**
 * Move widgets by (dx, dy) cells (canvas: pixels) as one group: the delta is
 * limited so that none leaves the grid (canvas: its left, top and right edges). A section carries the widgets inside it.
 */
export function moveWidgets(doc: EditorDoc, ids: Iterable<string>, dx: number, dy: number): EditorDoc {
  const set = withContents(doc, ids);
  const moving = doc.widgets.filter((w) => set.has(w.id));
  if (!moving.length) return doc;
  const [minDx, maxDx, minDy] = moveLimits(doc, moving.map((w) => w.spec));
  const ddx = Math.max(minDx, Math.min(maxDx, Math.round(dx)));
  const ddy = Math.max(minDy, Math.round(dy));
  if (!ddx && !ddy) return doc;
  return mapSelected(doc, set, (w) => ({ ...w.spec, x: w.spec.x + ddx, y: w.spec.y + ddy }));
}

/** Give one widget a new box (clamped to the grid). */
export function setBox(doc: EditorDoc, id: string, box: Box): EditorDoc {
  const b = clampOf(doc)(box);
  return mapSelected(doc, [id], (w) => (w.spec.x === b.x && w.spec.y === b.y && w.spec.w === b.w && w.spec.h === b.h ? w.spec : { ...w.spec, ...b }));
}

/** Grow (or shrink) each widget by (dw, dh) cells (canvas: pixels), at least one, within the grid. */
export function resizeBy(doc: EditorDoc, ids: Iterable<string>, dw: number, dh: number): EditorDoc {
  const clamp = clampOf(doc);
  const maxW = (s: Box) => (isCanvas(doc) ? Infinity : columnsOf(doc) - s.x + 1);
  return mapSelected(doc, ids, ({ spec: s }) => {
    const b = clamp({ x: s.x, y: s.y, w: Math.min(maxW(s), Math.max(1, s.w + dw)), h: Math.max(1, s.h + dh) });
    return b.w === s.w && b.h === s.h && b.x === s.x ? s : { ...s, ...b };
  });
}

/** Merge `patch` into each widget's spec; an `undefined` member removes it. */
export function patchSpecs(doc: EditorDoc, ids: Iterable<string>, patch: Partial<WidgetSpec>): EditorDoc {
  return patchEach(doc, ids, () => patch);
}

/**
 * Merge into each widget's spec the patch `f` makes of it (a rule or channel
 * edited in each widget's own list); an `undefined` member removes it.
 */
export function patchEach(doc: EditorDoc, ids: Iterable<string>, f: (spec: EditorWidget['spec']) => Partial<WidgetSpec>): EditorDoc {
  const clamp = clampOf(doc);
  return mapSelected(doc, ids, (w) => {
    const spec: Record<string, unknown> = { ...w.spec };
    for (const [k, v] of Object.entries(f(w.spec))) {
      if (v === undefined) delete spec[k];
      else spec[k] = v;
    }
    return { ...(spec as unknown as WidgetSpec), ...clamp(spec as unknown as Box) };
  });
}

type Obj = Record<string, unknown>;

/** `obj` with the member at `path` set (or with `undefined`/'' removed); emptied objects on the way are dropped. */
function setPath(obj: Obj, path: readonly string[], value: unknown): Obj | undefined {
  const [head, ...rest] = path;
  const out: Obj = { ...obj };
  const v = rest.length ? setPath((obj[head] as Obj | undefined) ?? {}, rest, value) : value;
  if (v === undefined || v === '') delete out[head];
  else out[head] = v;
  return Object.keys(out).length ? out : undefined;
}

/**
 * Set (or with `undefined`, remove) one member of each widget's `group` object
 * (`options`, `style`); a dotted key reaches into a nested object (`border.width`).
 * Objects left empty are dropped.
 */
export function setMember(doc: EditorDoc, ids: Iterable<string>, group: 'options' | 'style', key: string, value: unknown): EditorDoc {
  return mapSelected(doc, ids, (w) => {
    const inner = setPath((w.spec[group] as Obj | undefined) ?? {}, key.split('.'), value);
    const spec = { ...w.spec, [group]: inner };
    if (!inner) delete (spec as Obj)[group];
    return spec;
  });
}

/** Set (or with `undefined`, remove) one option of each widget; an empty options object is dropped. */
export function setOption(doc: EditorDoc, ids: Iterable<string>, key: string, value: unknown): EditorDoc {
  return setMember(doc, ids, 'options', key, value);
}

export function deleteWidgets(doc: EditorDoc, ids: Iterable<string>): EditorDoc {
  const set = new Set(ids);
  const widgets = doc.widgets.filter((w) => !set.has(w.id));
  return widgets.length === doc.widgets.length ? doc : { ...doc, widgets };
}

/** Change the screen's head (title, description, layout). */
export function patchHead(doc: EditorDoc, patch: Partial<EditorDoc['head']>): EditorDoc {
  return { ...doc, head: { ...doc.head, ...patch } };
}

export type Edge = 'left' | 'right' | 'top' | 'bottom' | 'hcenter' | 'vcenter' | 'width' | 'height';

/**
 * Align the widgets on the selection's bounding box: its left, right, top or
 * bottom edge, its horizontal or vertical centre line; `width`/`height` give all
 * the first widget's span.
 */
export function align(doc: EditorDoc, ids: readonly string[], edge: Edge): EditorDoc {
  const sel = ids.map((id) => byId(doc, id)).filter((w): w is EditorWidget => !!w);
  if (sel.length < 2) return doc;
  const left = Math.min(...sel.map((w) => w.spec.x));
  const right = Math.max(...sel.map((w) => w.spec.x + w.spec.w));
  const top = Math.min(...sel.map((w) => w.spec.y));
  const bottom = Math.max(...sel.map((w) => w.spec.y + w.spec.h));
  const first = sel[0].spec;
  const clamp = clampOf(doc);
  return mapSelected(doc, ids, ({ spec: s }) => {
    const b: Box = { x: s.x, y: s.y, w: s.w, h: s.h };
    if (edge === 'left') b.x = left;
    else if (edge === 'right') b.x = right - s.w;
    else if (edge === 'top') b.y = top;
    else if (edge === 'bottom') b.y = bottom - s.h;
    else if (edge === 'hcenter') b.x = Math.round((left + right - s.w) / 2);
    else if (edge === 'vcenter') b.y = Math.round((top + bottom - s.h) / 2);
    else if (edge === 'width') b.w = first.w;
    else if (edge === 'height') b.h = first.h;
    const c = clamp(b);
    return c.x === s.x && c.y === s.y && c.w === s.w && c.h === s.h ? s : { ...s, ...c };
  });
}

/** Move the widgets to the end of the document (drawn last: on top) or the start (behind). */
export function restack(doc: EditorDoc, ids: Iterable<string>, to: 'front' | 'back'): EditorDoc {
  const set = new Set(ids);
  const picked = doc.widgets.filter((w) => set.has(w.id));
  const rest = doc.widgets.filter((w) => !set.has(w.id));
  return { ...doc, widgets: to === 'front' ? [...rest, ...picked] : [...picked, ...rest] };
}

/** Ids of the widgets whose box meets `rect` (grid cells, or canvas pixels). */
export function idsIn(doc: EditorDoc, rect: Box): string[] {
  return doc.widgets.filter((w) => overlaps(w.spec, rect)).map((w) => w.id);
}

/** The last row any widget occupies (0 for none). */
export function lastRow(doc: EditorDoc): number {
  return doc.widgets.reduce((m, w) => Math.max(m, w.spec.y + w.spec.h - 1), 0);
}

/**
 * What changed from `before` to `after`, in words (a save's default summary):
 * widgets added, removed, moved, resized or changed (by type), and the screen's
 * own settings. '' when nothing did.
 */
export function describeChanges(before: EditorDoc | null, after: EditorDoc): string {
  if (!before) return `new screen of ${counted(after.widgets.length, 'widget')}`;
  const old = new Map(before.widgets.map((w) => [w.id, w.spec]));
  const now = new Set(after.widgets.map((w) => w.id));
  const counts = { added: new Map<string, number>(), removed: new Map<string, number>(), moved: 0, resized: 0, changed: new Map<string, number>() };
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const { id, spec } of after.widgets) {
    const was = old.get(id);
    if (!was) {
      bump(counts.added, spec.type);
      continue;
    }
    if (was === spec) continue;
    const { x, y, w, h, ...rest } = spec;
    const { x: ox, y: oy, w: ow, h: oh, ...oldRest } = was;
    if (x !== ox || y !== oy) counts.moved++;
    if (w !== ow || h !== oh) counts.resized++;
    if (JSON.stringify(rest) !== JSON.stringify(oldRest)) bump(counts.changed, spec.type);
  }
  for (const { id, spec } of before.widgets) if (!now.has(id)) bump(counts.removed, spec.type);
  const list = (m: Map<string, number>) => [...m].map(([t, n]) => counted(n, NOUNS[t] ?? t)).join(', ');
  const parts: string[] = [];
  if (counts.added.size) parts.push(`added ${list(counts.added)}`);
  if (counts.removed.size) parts.push(`removed ${list(counts.removed)}`);
  if (counts.changed.size) parts.push(`changed ${list(counts.changed)}`);
  if (counts.moved) parts.push(`moved ${counted(counts.moved, 'widget')}`);
  if (counts.resized) parts.push(`resized ${counted(counts.resized, 'widget')}`);
  if (JSON.stringify(before.head) !== JSON.stringify(after.head)) parts.push("changed the screen's settings");
  return parts.join('; ');
}

/** Widget types as a summary names them (the type itself when absent). */
const NOUNS: Record<string, string> = {
  text: 'text', led: 'LED', xy: 'XY plot', trend: 'trend', spectrum: 'spectrum plot', form: 'form', input: 'input',
  menu: 'menu', tabs: 'tab set', embed: 'embedded screen', table: 'table', image: 'image', link: 'link',
};

/** "1 label", "3 labels". */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : noun.endsWith('s') || noun.endsWith('x') ? 'es' : 's'}`;
}
