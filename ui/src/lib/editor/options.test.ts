import { describe, expect, it } from 'vitest';
import { channelRange, optionFields, parseValue, requiredOptions, WIDGET_TYPES } from './options';
import { WIDGETS } from '../widgets/registry';

describe('property fields from the screen schema', () => {
  it('every schema widget type has a viewer component', () => {
    for (const t of WIDGET_TYPES) expect(WIDGETS, t).toHaveProperty(t);
  });

  it('reads options with kinds, limits and defaults through $refs', () => {
    const label = optionFields('label');
    expect(label.map((f) => f.key)).toEqual(['prec', 'notation', 'unit', 'compact', 'long_string']);
    expect(label[0]).toMatchObject({ kind: 'integer', min: 0, max: 17 });
    expect(label[1]).toMatchObject({ kind: 'enum', choices: ['fixed', 'exp', 'eng'] });
    expect(optionFields('input').find((f) => f.key === 'confirm')).toMatchObject({ kind: 'boolean', default: true });
    expect(optionFields('button').find((f) => f.key === 'value')!.kind).toBe('value');
    expect(requiredOptions('button')).toEqual(['value']);
  });

  it('knows how many channels each type takes', () => {
    expect(channelRange('text')).toEqual([0, 0]);
    expect(channelRange('label')).toEqual([1, 1]);
    expect(channelRange('trend')).toEqual([1, Infinity]);
  });

  it('parses typed values', () => {
    expect(parseValue('3.5')).toBe(3.5);
    expect(parseValue('true')).toBe(true);
    expect(parseValue('On')).toBe('On');
  });
});

describe('palette', () => {
  it('offers every widget type but the importer’s placeholder and shapes, each with a hint', async () => {
    const { PALETTE, NOT_IN_PALETTE } = await import('./palette');
    const types = PALETTE.map((p) => p.type);
    expect(types).toContain('section');
    expect(types).not.toContain('placeholder');
    expect(types).not.toContain('shape');
    expect(types.length).toBe(WIDGET_TYPES.filter((t) => !NOT_IN_PALETTE.has(t)).length);
    for (const p of PALETTE) expect(p.hint, p.type).not.toBe('');
  });
});
