import { describe, expect, it } from 'vitest';
import { symbolIndex } from './symbol';

describe('symbol index', () => {
  it('is the value (rounded), a numeric string, a boolean, or an array element; -1 out of range', () => {
    expect(symbolIndex(1.4, 3)).toBe(1);
    expect(symbolIndex('2', 3)).toBe(2);
    expect(symbolIndex(true, 2)).toBe(1);
    expect(symbolIndex({ data: new Float64Array([0, 2, 1]), shape: [3] }, 3, 1)).toBe(2);
    expect(symbolIndex([5, 0], 3, 1)).toBe(0);
    expect(symbolIndex(3, 3)).toBe(-1);
    expect(symbolIndex('x', 3)).toBe(-1);
    expect(symbolIndex(null, 3)).toBe(-1);
  });
});
