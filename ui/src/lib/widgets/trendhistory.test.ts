import { describe, expect, it } from 'vitest';
import { joinPast, toCsv } from './trendhistory';

describe('trend history', () => {
  it('joins loaded points older than the first live sample with the live samples', () => {
    const past = { t: [1, 2, 3, 4], v: [10, 20, 30, 40] };
    const [buf, n] = joinPast(past, [[3, 31], [5, 50]], new Float64Array(2));
    expect(n).toBe(4);
    expect([...buf.subarray(0, 2 * n)]).toEqual([1, 10, 2, 20, 3, 31, 5, 50]);
    const [, onlyPast] = joinPast(past, [], new Float64Array(0));
    expect(onlyPast).toBe(4);
    expect(joinPast(null, [[7, 1]], new Float64Array(8))[1]).toBe(1);
  });

  it('exports what is in the range as CSV, one row per point', () => {
    const csv = toCsv(['ca://A', 'x,y'], [
      { data: [0, 1, 1000, 2, 2000, NaN], n: 3 },
      { data: [1000, 5], n: 1 },
    ], 1000, 2000);
    expect(csv.split('\n')).toEqual([
      'time,channel,value',
      '1970-01-01T00:00:01.000Z,ca://A,2',
      '1970-01-01T00:00:02.000Z,ca://A,',
      '1970-01-01T00:00:01.000Z,"x,y",5',
      '',
    ]);
  });
});
