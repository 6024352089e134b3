import { describe, expect, it } from 'vitest';
import { gaugeSplits, tickLabel } from './ticks';

describe('gauge ticks', () => {
  it('gives a small gauge fewer labels, round intervals, 2 to 10', () => {
    expect(gaugeSplits(20)).toBe(2);
    expect(gaugeSplits(60)).toBe(5);
    expect(gaugeSplits(80)).toBe(5);
    expect(gaugeSplits(120)).toBe(10);
    expect(gaugeSplits(400)).toBe(10);
    // neighbouring labels stay ~30 px apart along the dial
    for (const r of [40, 70, 100, 130]) {
      const n = gaugeSplits(r);
      expect((1.5 * Math.PI * 0.75 * r) / (n + 1)).toBeGreaterThanOrEqual(26);
    }
  });

  it('labels with at most 3 significant digits', () => {
    expect(tickLabel(1.4285714285714)).toBe('1.43');
    expect(tickLabel(-10)).toBe('-10');
    expect(tickLabel(0.25)).toBe('0.25');
    expect(tickLabel(12345)).toBe('12300');
  });
});
