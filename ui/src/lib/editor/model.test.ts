import { describe, expect, it } from 'vitest';
import type { Screen } from '../screen';
import { placeAll, firstFree } from './layout';
import { addWidgets, align, byId, canvasSpot, deleteWidgets, describeChanges, fromScreen, idsIn, isCanvas, moveLimits, moveWidgets, patchSpecs, resizeBy, restack, setBox, setOption, snap, toScreen } from './model';
import { band, click, prune } from './selection';
import { copyText, parseClipboard, placePasted } from './clipboard';

const size = (t: string): [number, number] => (t === 'text' ? [12, 1] : [2, 2]);
const screen = (widgets: Screen['widgets'], columns = 12): Screen => ({ title: 't', layout: { columns }, widgets });

describe('layout: the viewer grid as explicit cells', () => {
  it('auto-flows rows like CSS grid and wraps at the last column', () => {
    const boxes = placeAll([{ type: 'text' }, { type: 'label' }, { type: 'label', w: 6 }, { type: 'label', w: 6 }], 12, size);
    expect(boxes).toEqual([
      { x: 1, y: 1, w: 12, h: 1 },
      { x: 1, y: 2, w: 2, h: 2 },
      { x: 3, y: 2, w: 6, h: 2 },
      { x: 1, y: 4, w: 6, h: 2 },
    ]);
  });

  it('places explicit widgets first and flows the others around them', () => {
    const boxes = placeAll([{ type: 'label' }, { type: 'label', x: 1, y: 1, w: 4, h: 1 }, { type: 'label', x: 3 }], 12, size);
    expect(boxes[1]).toEqual({ x: 1, y: 1, w: 4, h: 1 });
    expect(boxes[0]).toEqual({ x: 5, y: 1, w: 2, h: 2 });
    expect(boxes[2]).toEqual({ x: 3, y: 2, w: 2, h: 2 });
  });

  it('finds the first free cell', () => {
    expect(firstFree([{ x: 1, y: 1, w: 12, h: 1 }, { x: 1, y: 2, w: 10, h: 2 }], 12, 2, 2)).toEqual({ x: 11, y: 2, w: 2, h: 2 });
  });
});

describe('document operations', () => {
  const base = fromScreen(screen([{ type: 'label', channels: ['ca://A'] }, { type: 'led', channels: ['ca://B'], x: 5, y: 3, w: 3, h: 2 }]), size);

  it('round-trips a screen with explicit boxes and ids', () => {
    expect(base.widgets.map((w) => w.id)).toEqual(['w1', 'w2']);
    expect(toScreen(base).widgets[0]).toEqual({ type: 'label', channels: ['ca://A'], x: 1, y: 1, w: 2, h: 2 });
    expect(toScreen(base).title).toBe('t');
  });

  it('adds widgets with fresh ids, clamped to the grid', () => {
    const { doc, ids } = addWidgets(base, [{ type: 'gauge', x: 12, y: 0, w: 4, h: 3 }]);
    expect(ids).toEqual(['w3']);
    expect(doc.widgets[2].spec).toMatchObject({ x: 9, y: 1, w: 4, h: 3 });
    expect(base.widgets).toHaveLength(2); // the old document is untouched
  });

  it('moves a group by one delta that keeps all of it on the grid', () => {
    const moved = moveWidgets(base, ['w1', 'w2'], -3, 1);
    expect(moved.widgets.map((w) => [w.spec.x, w.spec.y])).toEqual([[1, 2], [5, 4]]); // w1 is at column 1 already
    const right = moveWidgets(base, ['w1', 'w2'], 20, 0);
    expect(right.widgets[1].spec.x + right.widgets[1].spec.w - 1).toBe(12);
    expect(moveWidgets(base, ['w1'], -5, -5)).toBe(base); // nowhere to go: no step
  });

  it('a section carries the widgets inside it', () => {
    const { doc } = addWidgets(base, [{ type: 'section' as never, x: 4, y: 2, w: 6, h: 5 }]);
    const moved = moveWidgets(doc, ['w3'], 0, 2);
    expect(moved.widgets.find((w) => w.id === 'w2')!.spec.y).toBe(5);
    expect(moved.widgets.find((w) => w.id === 'w1')!.spec.y).toBe(1);
  });

  it('resizes by cells within the grid, never below one cell', () => {
    const d = resizeBy(base, ['w2'], 20, -5);
    expect(d.widgets[1].spec).toMatchObject({ x: 5, w: 8, h: 1 });
    expect(resizeBy(base, ['w1'], -3, 0).widgets[0].spec.w).toBe(1);
    const narrow = resizeBy(base, ['w1'], -1, 0);
    expect(resizeBy(narrow, ['w1'], -1, 0)).toBe(narrow); // already one cell: no step
  });

  it('resizes, patches and sets options; undefined removes', () => {
    const d1 = setBox(base, 'w1', { x: 1, y: 1, w: 40, h: 3 });
    expect(d1.widgets[0].spec.w).toBe(12);
    const d2 = patchSpecs(d1, ['w1'], { title: 'Sine', channels: ['ca://S'] });
    expect(d2.widgets[0].spec).toMatchObject({ title: 'Sine', channels: ['ca://S'] });
    expect(patchSpecs(d2, ['w1'], { title: undefined }).widgets[0].spec).not.toHaveProperty('title');
    const d3 = setOption(d2, ['w1', 'w2'], 'prec', 3);
    expect(d3.widgets.map((w) => w.spec.options)).toEqual([{ prec: 3 }, { prec: 3 }]);
    expect(setOption(d3, ['w1'], 'prec', undefined).widgets[0].spec).not.toHaveProperty('options');
  });

  it('aligns on the selection’s bounding box', () => {
    const ids = ['w1', 'w2'];
    expect(align(base, ids, 'left').widgets.map((w) => w.spec.x)).toEqual([1, 1]);
    expect(align(base, ids, 'right').widgets.map((w) => w.spec.x + w.spec.w)).toEqual([8, 8]);
    expect(align(base, ids, 'top').widgets.map((w) => w.spec.y)).toEqual([1, 1]);
    expect(align(base, ids, 'bottom').widgets.map((w) => w.spec.y + w.spec.h)).toEqual([5, 5]);
    expect(align(base, ids, 'hcenter').widgets.map((w) => w.spec.x)).toEqual([4, 3]);
    expect(align(base, ids, 'width').widgets.map((w) => w.spec.w)).toEqual([2, 2]);
    expect(align(base, ['w1'], 'left')).toBe(base); // one widget: nothing to align on
  });

  it('deletes, restacks and finds widgets in a rectangle', () => {
    expect(deleteWidgets(base, ['w1']).widgets.map((w) => w.id)).toEqual(['w2']);
    expect(restack(base, ['w1'], 'front').widgets.map((w) => w.id)).toEqual(['w2', 'w1']);
    expect(idsIn(base, { x: 2, y: 2, w: 4, h: 2 })).toEqual(['w1', 'w2']);
    expect(idsIn(base, { x: 9, y: 1, w: 2, h: 9 })).toEqual([]);
  });
});

describe('selection', () => {
  it('click replaces, shift/ctrl-click toggles, a band adds', () => {
    expect(click([], 'a', false)).toEqual(['a']);
    expect(click(['a', 'b'], 'c', false)).toEqual(['c']);
    expect(click(['a'], 'b', true)).toEqual(['a', 'b']);
    expect(click(['a', 'b'], 'a', true)).toEqual(['b']);
    expect(band(['a'], ['b', 'a'], true)).toEqual(['a', 'b']);
    expect(band(['a'], ['b'], false)).toEqual(['b']);
    expect(prune(['a', 'b'], (id) => id === 'b')).toEqual(['b']);
  });
});

describe('clipboard', () => {
  const doc = fromScreen(screen([{ type: 'label', channels: ['ca://A'] }, { type: 'led', channels: ['ca://B'], x: 5, y: 3, w: 3, h: 2 }]), size);

  it('copies the selection and pastes it one cell down and right, or at a cell', () => {
    const text = copyText(doc, ['w2', 'w1'])!;
    const specs = parseClipboard(text)!;
    expect(specs.map((s) => s.type)).toEqual(['label', 'led']); // document order
    expect(placePasted(specs).map((s) => [s.x, s.y])).toEqual([[2, 2], [6, 4]]);
    expect(placePasted(specs, { x: 3, y: 10 }).map((s) => [s.x, s.y])).toEqual([[3, 10], [7, 12]]);
    const { doc: pasted, ids } = addWidgets(doc, placePasted(specs));
    expect(ids).toEqual(['w3', 'w4']);
    expect(pasted.widgets).toHaveLength(4);
  });

  it('refuses text that is not a copy of widgets', () => {
    expect(copyText(doc, [])).toBeNull();
    expect(parseClipboard('hello')).toBeNull();
    expect(parseClipboard('{"kind":"synoptic/widgets","widgets":[{"no":"type"}]}')).toBeNull();
    expect(parseClipboard('[1,2]')).toBeNull();
  });
});

describe('describeChanges (a save’s default summary)', () => {
  const base = fromScreen(screen([{ type: 'label', channels: ['ca://A'] }, { type: 'led', channels: ['ca://B'] }, { type: 'led', channels: ['ca://C'] }]), size);

  it('names what was added, removed, changed, moved and resized', () => {
    let d = addWidgets(base, [{ type: 'gauge', channels: ['ca://G'], x: 1, y: 9, w: 3, h: 3 }]).doc;
    d = deleteWidgets(d, ['w2']);
    d = moveWidgets(d, ['w1'], 1, 0);
    d = setBox(d, 'w3', { x: 1, y: 5, w: 4, h: 2 });
    d = setOption(d, ['w1'], 'prec', 2);
    expect(describeChanges(base, d)).toBe('added 1 gauge; removed 1 LED; changed 1 label; moved 2 widgets; resized 1 widget');
    const three = addWidgets(base, [1, 2, 3].map((k) => ({ type: 'label' as const, x: k * 2, y: 9, w: 2, h: 2 }))).doc;
    expect(describeChanges(base, three)).toBe('added 3 labels');
    expect(describeChanges(base, base)).toBe('');
    expect(describeChanges(null, base)).toBe('new screen of 3 widgets');
  });
});

describe('canvas screens: boxes in canvas pixels', () => {
  const canvasScreen = (widgets: Screen['widgets']): Screen => ({ title: 'c', layout: { type: 'canvas', width: 400, height: 300 }, widgets });
  const doc = fromScreen(
    canvasScreen([
      { type: 'section', title: 'S', box: { x: 10, y: 10, w: 200, h: 100 } },
      { type: 'label', channels: ['ca://A'], box: { x: 20, y: 40, w: 80, h: 20 }, style: { fg: 'Text' } },
      { type: 'led', channels: ['ca://B'], x: 3, y: 2, box: { x: 300, y: 200, w: 40, h: 20 } },
      { type: 'text', title: 'no box' },
    ]),
    size,
  );

  it('reads the box as the editable place and writes it back as `box`, without grid cells', () => {
    expect(isCanvas(doc)).toBe(true);
    expect(doc.widgets[2].spec).toMatchObject({ x: 300, y: 200, w: 40, h: 20 });
    const out = toScreen(doc);
    expect(out.widgets[1]).toEqual({ type: 'label', channels: ['ca://A'], box: { x: 20, y: 40, w: 80, h: 20 }, style: { fg: 'Text' } });
    expect(out.widgets[2]).toEqual({ type: 'led', channels: ['ca://B'], box: { x: 300, y: 200, w: 40, h: 20 } });
    expect(out.widgets[3].box).toEqual({ x: 0, y: 0, w: 100, h: 20 }); // as the viewer draws a box-less widget
    expect(out.layout).toEqual({ type: 'canvas', width: 400, height: 300 });
  });

  it('moves in pixels, a section with its contents, not off the left, top or right edge', () => {
    const moved = moveWidgets(doc, ['w1'], 15, 7);
    expect(toScreen(moved).widgets.slice(0, 2).map((w) => w.box)).toEqual([
      { x: 25, y: 17, w: 200, h: 100 },
      { x: 35, y: 47, w: 80, h: 20 },
    ]);
    expect(byId(moveWidgets(doc, ['w3'], 500, 0), 'w3')!.spec.x).toBe(360); // right edge at the canvas's width
    expect(byId(moveWidgets(doc, ['w2'], -500, -500), 'w2')!.spec).toMatchObject({ x: 0, y: 0 });
    expect(moveLimits(doc, [{ x: -5, y: 4, w: 10, h: 10 }])).toEqual([0, 395, -4]); // already outside: stays
  });

  it('resizes, aligns and sets boxes in pixels (no grid clamp)', () => {
    expect(byId(resizeBy(doc, ['w2'], 30, 5), 'w2')!.spec).toMatchObject({ w: 110, h: 25 });
    expect(byId(setBox(doc, 'w2', { x: 250, y: 5, w: 300, h: 40 }), 'w2')!.spec).toMatchObject({ x: 250, y: 5, w: 300, h: 40 });
    const aligned = align(doc, ['w2', 'w3'], 'right');
    expect(byId(aligned, 'w2')!.spec.x).toBe(260);
    expect(byId(patchSpecs(doc, ['w2'], { w: 333 }), 'w2')!.spec.w).toBe(333);
  });

  it('adds pasted and new widgets with pixel boxes, and finds a free spot below the lowest widget', () => {
    const copied = parseClipboard(copyText(doc, ['w2'])!)!;
    const { doc: d, ids } = addWidgets(doc, placePasted(copied, undefined, 10));
    expect(toScreen(d).widgets[4].box).toEqual({ x: 30, y: 50, w: 80, h: 20 });
    expect(ids).toEqual(['w5']);
    expect(canvasSpot(doc, 120, 48)).toEqual({ x: 10, y: 230, w: 120, h: 48 });
    expect(canvasSpot(doc, 120, 200)).toEqual({ x: 10, y: 100, w: 120, h: 200 }); // kept on the canvas
  });

  it('selects by a pixel rectangle and snaps to a pixel grid', () => {
    expect(idsIn(doc, { x: 290, y: 190, w: 20, h: 20 })).toEqual(['w3']);
    expect(snap(17, 10)).toBe(20);
    expect(snap(14, 10)).toBe(10);
    expect(snap(14.4, 1)).toBe(14);
  });
});

describe('live content of a screen with macros', () => {
  it('expands the screen macros for what a widget shows, the stored spec keeps them', async () => {
    const { expandSpec } = await import('./live');
    const spec = { type: 'label' as const, channels: ['ca://$(P)SINE'], title: '${P}sine' };
    expect(expandSpec(spec, { P: 'DEMO:' })).toMatchObject({ channels: ['ca://DEMO:SINE'], title: 'DEMO:sine' });
    expect(expandSpec(spec, undefined)).toBe(spec);
    expect(spec.channels[0]).toBe('ca://$(P)SINE');
  });
});
