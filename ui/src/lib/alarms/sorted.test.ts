import { describe, expect, it } from 'vitest';
import { Gateway } from '../transport/gateway.svelte';
import type { AlarmState } from '../transport/protocol';
import { SortedList } from './sorted';
import { AlarmStore, compareAlarms, inArea } from './store.svelte';

/** A small deterministic generator (the same cases on every run). */
function random(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const AREAS = ['Plant', 'Plant/Power', 'Plant/Power/North', 'Plant/Vacuum', 'Lab'];

function state(rnd: () => number, ch: string, n: number): AlarmState {
  const lat = Math.floor(rnd() * 4);
  const shelved = rnd() < 0.1;
  return {
    ch, n, area: AREAS[Math.floor(rnd() * AREAS.length)], ev: 'sev', sev: lat, st: 'HIGH', c: true, lat,
    ackd: rnd() < 0.3, since: Math.floor(rnd() * 50), t: n, at: n,
    ...(shelved ? { shelf: { by: 'bob', why: 'work', t: 1, until: 2 } } : {}),
  };
}

describe('sorted list', () => {
  it('stays sorted through single changes and large batches, as a full sort would order it', () => {
    const rnd = random(7);
    const cmp = (a: number, b: number) => a - b;
    const list = new SortedList<number>(cmp);
    let held: number[] = [];
    list.reset([5, 1, 3]);
    held = [1, 3, 5];
    expect(list.items).toEqual(held);
    let next = 10;
    for (const size of [1, 3, 8, 9, 50, 400, 2, 1000]) {
      const removed = held.filter(() => rnd() < Math.min(1, size / (held.length + 1)));
      const added = Array.from({ length: size }, () => next++ * 7919 % 100_003);
      list.update(removed, added);
      held = held.filter((x) => !removed.includes(x)).concat(added).sort(cmp);
      expect(list.items).toEqual(held);
    }
    expect(list.partition((x) => x < 50_000)).toBe(held.filter((x) => x < 50_000).length);
  });

  it('keeps order, slices and views through thousands of changes in chunks, none copied whole', () => {
    const rnd = random(3);
    const cmp = (a: number, b: number) => a - b;
    const list = new SortedList<number>(cmp);
    list.reset(Array.from({ length: 5000 }, (_, i) => i * 10));
    let held = list.items.slice();
    for (let round = 0; round < 12; round++) {
      // a storm's frame: many in, some out anywhere (chunks split and merge)
      const gone = new Set(held.filter(() => rnd() < 0.05));
      const have = new Set(held);
      const added = [...new Set(Array.from({ length: 700 }, () => Math.floor(rnd() * 1e7) * 10 + 1 + round))].filter((x) => !have.has(x));
      list.update([...gone], added);
      held = held.filter((x) => !gone.has(x)).concat(added).sort(cmp);
      expect(list.length).toBe(held.length);
      expect([...list]).toEqual(held);
      expect(list.slice(100, 140)).toEqual(held.slice(100, 140));
      const view = list.view(37, held.length - 5);
      expect(view.length).toBe(held.length - 42);
      expect(view.slice(3, 10)).toEqual(held.slice(40, 47));
      expect(view.slice()).toEqual(held.slice(37, held.length - 5));
      expect(list.partition((x) => x < 5_000_000)).toBe(held.filter((x) => x < 5_000_000).length);
    }
    list.update(held, []);
    expect(list.length).toBe(0);
    expect(list.items).toEqual([]);
    list.update([], [3, 1, 2]);
    expect(list.items).toEqual([1, 2, 3]);
  });

  it('ignores items it does not hold and finds items whose order moved', () => {
    const list = new SortedList<{ k: number }>((a, b) => a.k - b.k);
    const a = { k: 1 };
    const b = { k: 2 };
    const c = { k: 3 };
    list.reset([c, a, b]);
    b.k = 10; // changed in place: found by identity all the same
    list.update([b, { k: 99 }], []);
    expect(list.items).toEqual([a, c]);
  });
});

describe('alarm store, incrementally', () => {
  it('holds what a full sort and count of the latest states give, changes applied once per frame', () => {
    const rnd = random(11);
    const frames: (() => void)[] = [];
    const gw = new Gateway({ schedule: (cb) => frames.push(cb) });
    const store = new AlarmStore(gw);
    const release = store.useList();
    const latest = new Map<string, AlarmState>();
    const all = Array.from({ length: 500 }, (_, i) => state(rnd, `ca://C${i}`, 1));
    for (const s of all) latest.set(s.ch, s);
    const counts = { unack: 0, act: 0, shelved: 0, svc: true };
    gw.handle({ op: 'alarms', id: 1, ...counts, all });
    let revision = 1;
    for (let round = 0; round < 30; round++) {
      const version = store.version;
      // several socket frames before the page draws: one bump for them all
      for (let f = 0; f < 3; f++) {
        const up = Array.from({ length: 1 + Math.floor(rnd() * (round % 5 === 0 ? 300 : 6)) }, () =>
          state(rnd, `ca://C${Math.floor(rnd() * 600)}`, ++revision),
        );
        for (const s of up) latest.set(s.ch, s);
        gw.handle({ op: 'alarms', ...counts, up });
      }
      expect(frames.length).toBeLessThanOrEqual(1);
      // a frame places what its budget allows; the rest, the next frames
      for (let drawn = 0; frames.length; drawn++) {
        expect(drawn).toBeLessThan(100);
        for (const cb of frames.splice(0)) cb();
      }
      expect(store.version).toBeGreaterThan(version);
      const listed = [...latest.values()].filter((s) => s.lat > 0 || s.shelf !== undefined);
      const expected = [...listed].sort(compareAlarms).map((s) => s.ch);
      expect(store.sorted().map((s) => s.ch)).toEqual(expected);
      expect(store.filtered('', '', true).slice().map((s) => s.ch)).toEqual(expected.filter((ch) => latest.get(ch)!.shelf));
      expect(store.filtered('Plant/Power', '', false).slice().map((s) => s.ch)).toEqual(
        expected.filter((ch) => !latest.get(ch)!.shelf && inArea(latest.get(ch)!.area, 'Plant/Power')),
      );
      const active = listed.filter((s) => s.lat > 0 && s.shelf === undefined);
      for (const area of ['', 'Plant', 'Plant/Power', 'Lab']) {
        const under = active.filter((s) => inArea(s.area, area));
        const want = under.length
          ? { unack: under.filter((s) => !s.ackd).length, active: under.length, worst: Math.max(...under.map((s) => s.lat)) }
          : undefined;
        expect(store.countOf(area)).toEqual(want);
        if (area) expect(store.countsByArea().get(area)).toEqual(want);
      }
      expect(store.countsByArea().has('')).toBe(false);
      expect(store.worst('Plant', 3).map((s) => s.ch)).toEqual(
        expected.filter((ch) => { const s = latest.get(ch)!; return !s.shelf && s.lat > 0 && inArea(s.area, 'Plant'); }).slice(0, 3),
      );
    }
    release();
    expect(store.sorted()).toEqual([]);
    expect(store.countOf('')).toBeUndefined();
  });
});
