import { describe, expect, it } from 'vitest';
import type { Screen, WidgetSpec } from '../screen';
import { ScreenEditor } from './editor.svelte';
import { fromScreen, patchEach, setMember } from './model';
import { common, commonChannels, commonFields, commonRange, commonRuleCount, MIXED } from './multi';
import { addRule, editRule } from './rules';

const size = (): [number, number] => [2, 2];
const label = (ch: string, extra: Partial<WidgetSpec> = {}): WidgetSpec => ({ type: 'label', channels: [ch], ...extra });

describe('several widgets in the property panel', () => {
  it('a value they share, MIXED where they differ (objects by their JSON), nothing for none', () => {
    expect(common([2, 2, 2])).toBe(2);
    expect(common([2, 3])).toBe(MIXED);
    expect(common([undefined, undefined])).toBeUndefined();
    expect(common([undefined, 1])).toBe(MIXED);
    expect(common([{ width: 1 }, { width: 1 }])).toEqual({ width: 1 });
    expect(common([])).toBeUndefined();
  });

  it('the options all their types have: precision and units of a label, gauge and bar; write confirmation of the write widgets', () => {
    expect(commonFields(['label', 'gauge', 'bar']).map((f) => f.key)).toEqual(['prec', 'unit']);
    expect(commonFields(['gauge', 'bar']).map((f) => f.key)).toEqual(['min', 'max', 'prec', 'unit', 'orientation']);
    expect(commonFields(['input', 'button', 'toggle', 'menu']).map((f) => f.key)).toEqual(['confirm']);
    expect(commonFields(['label', 'label']).map((f) => f.key)).toEqual(['prec', 'notation', 'unit', 'compact', 'long_string']);
    expect(commonFields(['label', 'section'])).toEqual([]);
  });

  it('channels: the count all types take; by position, shared or MIXED', () => {
    expect(commonRange(['label', 'trend'])).toEqual([1, 1]);
    expect(commonRange(['trend', 'xy'])).toEqual([1, Infinity]);
    expect(commonRange(['label', 'section'])).toEqual([1, 0]);
    expect(commonChannels([label('ca://A'), label('ca://A')])).toEqual({ channels: ['ca://A'], equalCount: true });
    expect(commonChannels([label('ca://A'), label('ca://B')])).toEqual({ channels: [MIXED], equalCount: true });
    expect(commonChannels([{ type: 'trend', channels: ['ca://A', 'ca://B'] }, label('ca://A')])).toEqual({ channels: ['ca://A'], equalCount: false });
    expect(commonChannels([{ type: 'trend' }, label('ca://A')])).toEqual({ channels: [], equalCount: false });
  });

  it('rules: the positions all have', () => {
    const r = addRule(undefined);
    expect(commonRuleCount([label('ca://A', { rules: r }), label('ca://B', { rules: [...r, ...r] })])).toEqual({ count: 1, equalCount: false });
    expect(commonRuleCount([label('ca://A'), label('ca://B')])).toEqual({ count: 0, equalCount: true });
  });
});

describe('one change to several widgets', () => {
  function editor() {
    const screen: Screen = {
      title: 'S',
      widgets: [
        label('ca://A', { title: 'a', rules: [{ op: '>', value: 1, set: { bg: 'MAJOR' } }] }),
        { type: 'gauge', title: 'b', channels: ['ca://B'], rules: [{ op: '>', value: 2, set: { bg: 'MINOR' } }] },
        { type: 'bar', title: 'c', channels: ['ca://C'], options: { prec: 3 } },
      ],
    };
    const ed = new ScreenEditor({ store: null as never, storage: null, size, draftDelayMs: 0 });
    ed.open('s', screen, 1);
    return ed;
  }

  it('an option set on all is one undo step; each keeps its label and the rest', () => {
    const ed = editor();
    const ids = ['w1', 'w2', 'w3'];
    ed.apply((d) => setMember(d, ids, 'options', 'prec', 2), 'prop:prec');
    expect(ed.doc.widgets.map((w) => w.spec.options?.prec)).toEqual([2, 2, 2]);
    expect(ed.doc.widgets.map((w) => w.spec.title)).toEqual(['a', 'b', 'c']);
    ed.undo();
    expect(ed.doc.widgets.map((w) => w.spec.options?.prec)).toEqual([undefined, undefined, 3]);
    expect(ed.canUndo).toBe(false);
  });

  it('a rule field edited in each widget’s own list, a channel replaced in each: one step each', () => {
    const ed = editor();
    const ids = ['w1', 'w2'];
    ed.apply((d) => patchEach(d, ids, (s) => ({ rules: editRule(s.rules ?? [], 0, 'set.fg', 'OK') })));
    expect(ed.doc.widgets.map((w) => w.spec.rules?.[0].set)).toEqual([{ bg: 'MAJOR', fg: 'OK' }, { bg: 'MINOR', fg: 'OK' }, undefined]);
    ed.apply((d) => patchEach(d, ['w1', 'w2', 'w3'], () => ({ channels: ['ca://Z'] })));
    expect(ed.doc.widgets.map((w) => w.spec.channels)).toEqual([['ca://Z'], ['ca://Z'], ['ca://Z']]);
    ed.undo();
    expect(ed.doc.widgets.map((w) => w.spec.channels?.[0])).toEqual(['ca://A', 'ca://B', 'ca://C']);
    ed.undo();
    expect(ed.doc.widgets[0].spec.rules?.[0].set).toEqual({ bg: 'MAJOR' });
  });

  it('a patch that removes a member and a box change stay within the grid', () => {
    const doc = fromScreen({ title: 't', widgets: [label('ca://A', { x: 11, w: 2 }), label('ca://B')] }, size);
    const out = patchEach(doc, ['w1', 'w2'], (s) => ({ w: s.w + 4, channels: undefined }));
    expect(out.widgets.map((w) => [w.spec.x, w.spec.w, 'channels' in w.spec])).toEqual([[7, 6, false], [1, 6, false]]) // pushed left to stay within 12 columns;
  });
});
