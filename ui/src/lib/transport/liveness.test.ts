import { describe, expect, it } from 'vitest';
import { Gateway } from './gateway.svelte';
import type { ValueMsg } from './protocol';

const val = (v: unknown, seq = 1, ep = 1): ValueMsg => ({ v, t: 1e18, sev: 0, c: true, seq, ep });

/** A live gateway with one subscription of `uris` (group order = sorted), frames run by hand. */
function live(uris: string[]) {
  const frames: (() => void)[] = [];
  const gw = new Gateway({ schedule: (cb) => frames.push(cb) });
  gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
  const sub = gw.subscribe(uris);
  const frame = () => frames.splice(0).forEach((cb) => cb());
  const stale = () => uris.filter((u) => gw.channel(u).stale);
  return { gw, sub, frame, stale };
}

describe('liveness frames (src, snap.stale)', () => {
  it('marks the channels a snapshot lists as stale, the others live', () => {
    const { gw, sub, frame, stale } = live(['ca://A', 'ca://B', 'ca://C']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A', 'ca://B', 'ca://C'], val: [val(1), val(2), val(3)], meta: [null, null, null], stale: [1] });
    frame();
    expect(stale()).toEqual(['ca://B']);
    expect(gw.channel('ca://B').sourceDown).toBe(true);
  });

  it('src up:false makes channels stale until an update carries a value for them', () => {
    const { gw, sub, frame, stale } = live(['ca://A', 'ca://B']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A', 'ca://B'], val: [val(1), val(2)], meta: [null, null] });
    frame();
    expect(stale()).toEqual([]);
    gw.handle({ op: 'src', sid: 1, i: [0, 1], up: false });
    frame();
    expect(stale()).toEqual(['ca://A', 'ca://B']);
    // a restarted adapter: values with a new epoch clear the mark, channel by channel
    gw.handle({ op: 'upd', sid: 1, i: [1], val: [val(7, 1, 2)] });
    frame();
    expect(stale()).toEqual(['ca://A']);
    expect(gw.channel('ca://B').value?.v).toBe(7);
  });

  it('src up:true clears the mark without a value (a hung adapter resumed)', () => {
    const { gw, sub, frame, stale } = live(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(1)], meta: [null], stale: [0] });
    frame();
    expect(stale()).toEqual(['ca://A']);
    gw.handle({ op: 'src', sid: 1, i: [0], up: true });
    frame();
    expect(stale()).toEqual([]);
  });

  it('a src frame is painted in the next animation frame, like values', () => {
    const { gw, sub, frame } = live(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(1)], meta: [null] });
    frame();
    const seen: boolean[] = [];
    gw.channel('ca://A').watch((ch) => seen.push(ch.isStale));
    gw.handle({ op: 'src', sid: 1, i: [0], up: false });
    expect(seen).toEqual([false]);
    frame();
    expect(seen).toEqual([false, true]);
  });

  it('a new snapshot without the channel in `stale` clears the mark; src of an unknown group is ignored', () => {
    const { gw, sub, frame, stale } = live(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(1)], meta: [null], stale: [0] });
    gw.handle({ op: 'src', sid: 99, i: [0], up: true });
    frame();
    expect(stale()).toEqual(['ca://A']);
    gw.handle({ op: 'snap', id: null, sid: 1, ch: ['ca://A'], val: [val(1)], meta: [null] });
    frame();
    expect(stale()).toEqual([]);
  });

  it('stays stale while the connection is down even when the source is up', () => {
    const { gw, sub, frame, stale } = live(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(1)], meta: [null] });
    frame();
    gw.handle({ op: 'bus', up: false });
    gw.handle({ op: 'src', sid: 1, i: [0], up: true });
    frame();
    expect(stale()).toEqual(['ca://A']);
  });
});

describe('commit budget', () => {
  it('spreads a burst of updates over frames, oldest first, within frameBudgetMs; a snapshot shows at once', () => {
    const frames: (() => void)[] = [];
    const gw = new Gateway({ schedule: (cb) => frames.push(cb), frameBudgetMs: 0.000001 });
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const uris = Array.from({ length: 200 }, (_, k) => `ca://R${String(k).padStart(3, '0')}`);
    const sub = gw.subscribe(uris);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: uris, val: uris.map(() => val(0)), meta: uris.map(() => null) });
    frames.splice(0).forEach((cb) => cb());
    expect(uris.every((u) => gw.channel(u).value?.v === 0)).toBe(true); // a snapshot is shown at once
    gw.handle({ op: 'upd', sid: 1, i: uris.map((_, k) => k), val: uris.map(() => val(1)) });
    frames.splice(0).forEach((cb) => cb());
    // the clock is read every 64 channels: one slice per frame
    expect(uris.filter((u) => gw.channel(u).value?.v === 1)).toEqual(uris.slice(0, 64)); // in arrival order
    let rounds = 1;
    while (frames.length) {
      frames.splice(0).forEach((cb) => cb());
      rounds++;
    }
    expect(rounds).toBe(4);
    expect(uris.every((u) => gw.channel(u).value?.v === 1)).toBe(true);
  });
});
