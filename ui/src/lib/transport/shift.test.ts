import { describe, expect, it } from 'vitest';
import { Gateway, RESYNC_MS } from './gateway.svelte';
import type { NdArray } from './codec';
import type { ValueMsg } from './protocol';
import { isNewer, unshift } from './shift';
import { gateway as startedGateway } from '../testing/canvas';
import { Socket } from '../testing/socket';

const nd = (a: unknown) => (ArrayBuffer.isView(a) ? { data: a, shape: [(a as Float64Array).length] } : a);
const full = (v: unknown, seq: number, ep = 7): ValueMsg => ({ v: nd(v), t: 1e18 + seq, sev: 0, c: true, seq, ep });
const shifted = (sh: number, tail: unknown, base: number, seq: number, ep = 7): ValueMsg => ({ v: undefined, sh, tail: nd(tail), base, t: 1e18 + seq, sev: 1, c: true, seq, ep });

function gatewayWithFrames() {
  const frames: (() => void)[] = [];
  const gw = new Gateway({ schedule: (cb) => frames.push(cb) });
  const runFrame = () => frames.splice(0).forEach((cb) => cb());
  return { gw, runFrame };
}

describe('shift-form updates (sub.shift)', () => {
  it('asks the shift form in every subscription', () => {
    const gw = startedGateway();
    gw.subscribe(['ca://WF']);
    gw.subscribe(['ca://WF2'], { 'ca://WF2': 800 });
    const subs = Socket.last.sent.filter((f) => f.op === 'sub');
    expect(subs).toHaveLength(2);
    expect(subs.every((f) => (f as { shift?: boolean }).shift === true)).toBe(true);
  });

  it('builds the new array from the held one: the suffix, then the tail, same type', () => {
    const out = unshift(full(new Float64Array([1, 2, 3, 4]), 1), shifted(1, new Float64Array([5]), 1, 2));
    expect((out?.v as NdArray).data).toBeInstanceOf(Float64Array);
    expect((out?.v as NdArray).shape).toEqual([4]);
    expect(Array.from((out!.v as NdArray).data as Float64Array)).toEqual([2, 3, 4, 5]);
    expect(out).toMatchObject({ seq: 2, ep: 7, sev: 1 });
    expect(out).not.toHaveProperty('sh');
    expect(out).not.toHaveProperty('tail');
    expect(out).not.toHaveProperty('base');
    const ints = unshift(full(new Int32Array([9, 8, 7]), 4), shifted(2, new Int32Array([6, 5]), 4, 5));
    expect((ints?.v as NdArray).data).toEqual(new Int32Array([7, 6, 5]));
  });

  it('grows a buffer that is filling (sh 0)', () => {
    const out = unshift(full(new Float32Array([1, 2]), 1), shifted(0, new Float32Array([3]), 1, 2));
    expect((out?.v as NdArray).data).toEqual(new Float32Array([1, 2, 3]));
  });

  it('refuses a base it does not hold: another seq, another ep, a reduced array, another type', () => {
    const held = full(new Float64Array([1, 2, 3]), 3);
    expect(unshift(held, shifted(1, new Float64Array([4]), 2, 4))).toBeNull();
    expect(unshift(held, shifted(1, new Float64Array([4]), 3, 4, 8))).toBeNull();
    expect(unshift({ ...held, x: new Uint32Array([0, 1, 2]) }, shifted(1, new Float64Array([4]), 3, 4))).toBeNull();
    expect(unshift(held, shifted(1, new Float32Array([4]), 3, 4))).toBeNull();
    expect(unshift(null, shifted(1, new Float64Array([4]), 3, 4))).toBeNull();
    expect(isNewer(held, full(null, 3))).toBe(false);
    expect(isNewer(held, full(null, 1, 8))).toBe(true);
  });

  it('asks shift, applies shift updates, ignores old ones and resubscribes (bounded) on a base mismatch', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['ca://WF']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 2, ch: ['ca://WF'], val: [full(new Float64Array([1, 2, 3, 4]), 10)], meta: [null] });
    runFrame();
    gw.handle({ op: 'upd', sid: 2, i: [0, 0], val: [shifted(1, new Float64Array([5]), 10, 11), shifted(2, new Float64Array([6, 7]), 11, 12)] });
    runFrame();
    expect((gw.channel('ca://WF').value?.v as NdArray).data).toEqual(new Float64Array([4, 5, 6, 7]));
    expect(gw.channel('ca://WF').value?.seq).toBe(12);
    // a repeat of an update already applied: ignored, not a miss
    gw.handle({ op: 'upd', sid: 2, i: [0], val: [shifted(1, new Float64Array([9]), 11, 12)] });
    expect(gw.stats.shiftMisses).toBe(0);
    // a base it does not hold: dropped, counted, a fresh snapshot asked once
    const requestBefore = sub.requestId;
    gw.handle({ op: 'upd', sid: 2, i: [0], val: [shifted(1, new Float64Array([9]), 40, 41)] });
    gw.handle({ op: 'upd', sid: 2, i: [0], val: [shifted(1, new Float64Array([9]), 41, 42)] });
    runFrame();
    expect(gw.channel('ca://WF').value?.seq).toBe(12);
    expect(gw.stats.shiftMisses).toBe(2);
    expect(sub.requestId).not.toBe(requestBefore); // asked again
    const asked = sub.requestId;
    gw.handle({ op: 'upd', sid: 2, i: [0], val: [shifted(1, new Float64Array([9]), 50, 51)] });
    expect(sub.requestId).toBe(asked); // not before RESYNC_MS
    expect(RESYNC_MS).toBeGreaterThanOrEqual(1000);
    // the fresh snapshot: full again, shifts apply on it
    gw.handle({ op: 'snap', id: asked, sid: 2, ch: ['ca://WF'], val: [full(new Float64Array([7, 8]), 60)], meta: [null] });
    gw.handle({ op: 'upd', sid: 2, i: [0], val: [shifted(0, new Float64Array([9]), 60, 61)] });
    runFrame();
    expect((gw.channel('ca://WF').value?.v as NdArray).data).toEqual(new Float64Array([7, 8, 9]));
  });
});
