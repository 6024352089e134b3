import { describe, expect, it } from 'vitest';
import { axisLabels, legendPlace } from './axes';

describe('axis labels', () => {
  it('keeps the end labels clear of the shared corner and the edges', () => {
    expect(axisLabels('#000', 'x')).toMatchObject({ hideOverlap: true, alignMinLabel: 'left', alignMaxLabel: 'right' });
    expect(axisLabels('#000', 'y')).toMatchObject({ hideOverlap: true, verticalAlignMinLabel: 'bottom', verticalAlignMaxLabel: 'top' });
  });
});

describe('legend place', () => {
  const measure = (text: string) => text.length * 6;

  it('sits beside the controls when every name fits there', () => {
    // 2 × (9 × 6 + 40) = 188 px of names in 382 − 150 − 4
    expect(legendPlace(['DEMO:SINE', 'DEMO:WALK'], 382, 150, measure)).toEqual({ top: 0, left: 150, gridTop: 22 });
  });

  it('goes below them, names cut to share the width, when they do not fit', () => {
    const at = legendPlace(['sine(0, 10, 0.5)', 'noise(0, 10, 0.5)'], 230, 150, measure);
    expect(at).toEqual({ top: 16, left: 4, textWidth: 71, gridTop: 38 });
    // the cut names and their samples fit the chart
    expect(2 * (at.textWidth! + 40)).toBeLessThanOrEqual(230 - 8 + 1);
    expect(legendPlace(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 230, 150, measure).textWidth).toBe(24);
  });
});
