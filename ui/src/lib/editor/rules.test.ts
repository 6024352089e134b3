import { describe, expect, it } from 'vitest';
import type { Screen } from '../screen';
import { fromScreen, setMember, toScreen } from './model';
import { CANVAS_FIELDS, NAMED_COLOUR_CHOICES, NAMED_FONT_CHOICES, RULE_FIELDS, STYLE_FIELDS } from './options';
import { addRule, editRule, removeRule } from './rules';
import { widgetIndexOf } from './api';

const size = (): [number, number] => [2, 2];

describe('style, visibility and rules fields from the schema', () => {
  it('offers the style members, a colour or font kind for their references, a nested border', () => {
    const byKey = Object.fromEntries(STYLE_FIELDS.map((f) => [f.key, f]));
    expect(byKey.fg.kind).toBe('colour');
    expect(byKey.bg.kind).toBe('colour');
    expect(byKey.font.kind).toBe('font');
    expect(byKey.align).toMatchObject({ kind: 'enum', choices: ['left', 'center', 'right'] });
    expect(byKey['border.width']).toMatchObject({ kind: 'integer', min: 0, max: 50 });
    expect(byKey['border.color'].kind).toBe('colour');
    expect(byKey.transparent.kind).toBe('boolean');
    expect(NAMED_COLOUR_CHOICES).toContain('Read_Background');
    expect(NAMED_COLOUR_CHOICES).toContain('MAJOR');
    expect(NAMED_FONT_CHOICES).toEqual(['Default', 'Default Bold', 'Header 1', 'Header 2', 'Header 3', 'Comment', 'Fine', 'Oddball']);
  });

  it('reads a rule as its comparison and its effects', () => {
    expect(RULE_FIELDS.test.map((f) => f.key)).toEqual(['channel', 'on', 'op', 'value']);
    expect(RULE_FIELDS.test[2]).toMatchObject({ kind: 'enum', default: '!=' });
    expect(CANVAS_FIELDS.map((f) => [f.key, f.kind])).toEqual([['width', 'integer'], ['height', 'integer'], ['scale', 'enum'], ['background', 'colour']]);
    expect(RULE_FIELDS.set.map((f) => [f.key, f.kind])).toEqual([['visible', 'boolean'], ['fg', 'colour'], ['bg', 'colour'], ['text', 'string']]);
  });
});

describe('editing style and rules', () => {
  const doc = fromScreen({ title: 't', widgets: [{ type: 'label', channels: ['ca://A'], style: { fg: 'Text', border: { width: 1, color: 'Grid' } } }] } as Screen, size);

  it('sets and removes style members, nested ones too, dropping emptied objects', () => {
    let d = setMember(doc, ['w1'], 'style', 'bg', 'Read_Background');
    expect(toScreen(d).widgets[0].style).toEqual({ fg: 'Text', bg: 'Read_Background', border: { width: 1, color: 'Grid' } });
    d = setMember(d, ['w1'], 'style', 'border.width', 3);
    expect(toScreen(d).widgets[0].style!.border).toEqual({ width: 3, color: 'Grid' });
    d = setMember(d, ['w1'], 'style', 'border.width', undefined);
    d = setMember(d, ['w1'], 'style', 'border.color', '');
    expect(toScreen(d).widgets[0].style).toEqual({ fg: 'Text', bg: 'Read_Background' });
    d = setMember(setMember(d, ['w1'], 'style', 'fg', undefined), ['w1'], 'style', 'bg', undefined);
    expect(toScreen(d).widgets[0]).not.toHaveProperty('style');
  });

  it('adds, edits and removes rules, each always setting something', () => {
    let rules = addRule(undefined);
    expect(rules).toEqual([{ op: '!=', value: 0, set: { visible: true } }]);
    rules = editRule(rules, 0, 'channel', 'loc://mode');
    rules = editRule(rules, 0, 'op', '>=');
    rules = editRule(rules, 0, 'value', '5');
    expect(rules[0]).toMatchObject({ channel: 'loc://mode', op: '>=', value: 5 });
    rules = editRule(rules, 0, 'on', 'severity');
    expect(rules[0]).toMatchObject({ on: 'severity', value: 'minor' });
    rules = editRule(rules, 0, 'value', 'major');
    rules = editRule(rules, 0, 'set.bg', 'MAJOR');
    rules = editRule(rules, 0, 'set.visible', '');
    expect(rules[0].set).toEqual({ bg: 'MAJOR' });
    expect(editRule(rules, 0, 'set.bg', '')[0].set).toEqual({ bg: 'MAJOR' }); // the last effect stays
    rules = editRule(rules, 0, 'set.visible', 'false');
    expect(rules[0].set).toEqual({ bg: 'MAJOR', visible: false });
    rules = addRule(rules);
    expect(removeRule(rules, 0)).toEqual([{ op: '!=', value: 0, set: { visible: true } }]);
    expect(removeRule([rules[0]], 0)).toBeUndefined();
  });

  it('a refusal inside a rule or a style still names the widget', () => {
    expect(widgetIndexOf('/widgets/3/rules/0/set/bg')).toBe(3);
    expect(widgetIndexOf('/widgets/12/style/border/color')).toBe(12);
  });
});
