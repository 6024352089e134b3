import { describe, expect, it } from 'vitest';
import { type Asked, sameRange, takeBatches } from './histbatch';

const hour = 3_600_000;
const asked = (uris: string[], t0: number, t1: number, px = 800): Asked => ({ uris, t0, t1, px });

describe('sameRange', () => {
  it('joins ranges asked a moment apart and keeps others apart', () => {
    expect(sameRange(asked(['a'], 0, hour), asked(['b'], 5, hour + 5))).toBe(true);
    expect(sameRange(asked(['a'], 0, hour), asked(['b'], hour / 2, hour))).toBe(false); // half the window
    expect(sameRange(asked(['a'], 0, 60_000), asked(['b'], 3_000, 63_000))).toBe(false); // 3 s off a minute
    expect(sameRange(asked(['a'], 10, 0), asked(['b'], 10, 0))).toBe(false); // a bad range goes alone
  });
});

describe('takeBatches', () => {
  it('spreads one range over the free slots, in order, each frame its own channels once', () => {
    const waiting = Array.from({ length: 5 }, (_, k) => asked([`c${k}`, 'shared'], k, hour + k, 400 + k));
    const batches = takeBatches(waiting, 2, 100);
    expect(waiting).toEqual([]);
    expect(batches.map((b) => b.uris)).toEqual([
      ['c0', 'shared', 'c1', 'c2'],
      ['c3', 'shared', 'c4'],
    ]);
    expect(batches.map((b) => [b.t0, b.t1, b.px])).toEqual([
      [0, hour + 2, 402],
      [3, hour + 4, 404],
    ]);
  });

  it('leaves other ranges waiting in order and keeps under the channel limit', () => {
    const other = asked(['x'], 5 * hour, 6 * hour);
    const waiting = [asked(['a', 'b'], 0, hour), other, asked(['c', 'd'], 1, hour + 1), asked(['e'], 2, hour + 2)];
    const batches = takeBatches(waiting, 1, 3);
    expect(batches.map((b) => b.uris)).toEqual([['a', 'b']]); // c and d would make four
    expect(waiting.map((a) => a.uris[0])).toEqual(['x', 'c', 'e']);
    expect(takeBatches(waiting, 3, 3).map((b) => b.uris)).toEqual([['x'], ['c', 'd'], ['e']]); // the free slots read in parallel
    expect(waiting).toEqual([]);
  });

  it('takes nothing without a free slot', () => {
    const waiting = [asked(['a'], 0, hour)];
    expect(takeBatches(waiting, 0, 100)).toEqual([]);
    expect(waiting).toHaveLength(1);
  });
});
