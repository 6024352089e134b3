import { describe, expect, it } from 'vitest';
import { blankScreen, DEFAULT_CANVAS, DEFAULT_GRID, limits, nameFor, sizeError } from './newscreen';
import { NAME_RE } from './api';
import { fromScreen, isCanvas, toScreen } from './model';

describe('a new screen', () => {
  it('is a grid of the chosen columns or a canvas of the chosen size', () => {
    expect(blankScreen('Vacuum', { type: 'grid', columns: 6 })).toEqual({ version: 1, title: 'Vacuum', layout: { type: 'grid', columns: 6, row_height: 30, gap: 4 }, widgets: [] });
    const canvas = blankScreen('  ', { type: 'canvas', width: 1000, height: 600 });
    expect(canvas).toEqual({ version: 1, title: 'New screen', layout: { type: 'canvas', width: 1000, height: 600 }, widgets: [] });
    const doc = fromScreen(canvas, () => [2, 2]);
    expect(isCanvas(doc)).toBe(true);
    expect(toScreen(doc)).toEqual(canvas);
  });

  it('takes its size limits from the schema and names a refused size', () => {
    expect(limits('grid', 'columns')).toEqual([1, 96]);
    expect(limits('canvas', 'width')).toEqual([1, 20000]);
    expect(sizeError(DEFAULT_GRID)).toBe('');
    expect(sizeError(DEFAULT_CANVAS)).toBe('');
    expect(sizeError({ type: 'grid', columns: 97 })).toBe('columns is a whole number from 1 to 96');
    expect(sizeError({ type: 'canvas', width: 800, height: 0 })).toBe('height is a whole number from 1 to 20000');
    expect(sizeError({ type: 'canvas', width: 12.5, height: 10 })).toMatch(/^width/);
    expect(() => blankScreen('x', { type: 'canvas', width: Number.NaN, height: 10 })).toThrow(RangeError);
  });
});

describe('the name a title suggests', () => {
  it('is the title in lower case, words joined by "-", a valid screen name', () => {
    expect(nameFor('Vacuum, sector 3')).toBe('vacuum-sector-3');
    expect(nameFor('  Über Kühlung  ')).toBe('uber-kuhlung');
    expect(nameFor('New screen')).toBe('new-screen');
    expect(nameFor('***')).toBe('');
    for (const t of ['Vacuum, sector 3', 'x'.repeat(300), '-a-']) expect(NAME_RE.test(nameFor(t))).toBe(true);
  });
});
