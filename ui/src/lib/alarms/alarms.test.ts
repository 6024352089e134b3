import { render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import AlarmsHost from '../testing/AlarmsHost.svelte';
import { Gateway } from '../transport/gateway.svelte';
import type { AlarmState } from '../transport/protocol';
import { AlarmStore, compareAlarms, inArea } from './store.svelte';

const NOW = Date.now() * 1e6;

// jsdom has no layout: bind:clientHeight needs a ResizeObserver that never fires
globalThis.ResizeObserver ??= class {
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
};

function alarm(ch: string, over: Partial<AlarmState> = {}): AlarmState {
  return { ch, area: 'Plant/Power', n: 1, ev: 'sev', sev: 1, st: 'HIGH', c: true, lat: 1, ackd: false, since: NOW, t: NOW, at: NOW, ...over };
}

const counts = { unack: 1, act: 1, shelved: 0, svc: true };

describe('alarm store', () => {
  it('keeps the list from the whole list and the changes, newer revisions only', () => {
    const gw = new Gateway({ schedule: (cb) => cb() });
    const store = new AlarmStore(gw);
    store.start();
    const release = store.useList();
    gw.handle({ op: 'alarms', id: 1, ...counts, all: [alarm('ca://A'), alarm('ca://B', { lat: 0, sev: 0 })] });
    expect(store.loaded).toBe(true);
    expect(store.sorted().map((s) => s.ch)).toEqual(['ca://A']); // B is not active
    gw.handle({ op: 'alarms', ...counts, up: [alarm('ca://B', { n: 2, lat: 2, sev: 2 }), alarm('ca://A', { n: 1, lat: 3 })] });
    expect(store.sorted().map((s) => [s.ch, s.lat])).toEqual([['ca://B', 2], ['ca://A', 1]]); // A's old revision dropped
    gw.handle({ op: 'alarms', ...counts, up: [alarm('ca://B', { n: 3, gone: true })] });
    expect(store.size).toBe(1);
    release();
    expect(store.loaded).toBe(false);
    expect(store.size).toBe(0);
  });

  it('takes 64-bit times as msgpack gives them (BigInt)', () => {
    const gw = new Gateway({ schedule: (cb) => cb() });
    const store = new AlarmStore(gw);
    const release = store.useList();
    const ns = BigInt(NOW);
    const raw = { ...alarm('ca://A'), since: ns, t: ns, at: ns, v: 7n, ack: { by: 'a', t: ns } } as unknown as AlarmState;
    gw.handle({ op: 'alarms', id: 1, ...counts, all: [raw] });
    const s = store.get('ca://A')!;
    expect([typeof s.since, typeof s.t, typeof s.at, typeof s.v, typeof s.ack!.t]).toEqual(['number', 'number', 'number', 'number', 'number']);
    release();
  });

  it('sorts unacknowledged before acknowledged, severity, then newest; areas nest', () => {
    const list = [alarm('a', { ackd: true, lat: 3 }), alarm('b', { lat: 1 }), alarm('c', { lat: 2, since: 1 }), alarm('d', { lat: 2, since: 2 })];
    expect(list.sort(compareAlarms).map((s) => s.ch)).toEqual(['d', 'c', 'b', 'a']);
    expect(inArea('Plant/Power', 'Plant')).toBe(true);
    expect(inArea('Plant/Powerhouse', 'Plant/Power')).toBe(false);
    expect(inArea('X', '')).toBe(true);
  });
});

describe('alarm page', () => {
  it('lists the alarms of an area and follows changes; the header counts', () => {
    const gw = new Gateway({ schedule: (cb) => cb() });
    const { container, getByTestId } = render(AlarmsHost, { props: { gateway: gw, area: 'Plant/Power' } });
    gw.handle({ op: 'alarms', id: 1, unack: 0, act: 0, shelved: 0, svc: true, all: [] });
    flushSync();
    expect(getByTestId('alarm-rows').getAttribute('data-count')).toBe('0');
    gw.handle({ op: 'alarms', ...counts, up: [alarm('ca://DEMO:SP', { desc: 'setpoint' }), alarm('ca://OTHER', { area: 'Plant/Vacuum' })] });
    flushSync();
    expect(getByTestId('alarm-badge').getAttribute('data-unack')).toBe('1');
    expect(getByTestId('alarm-counts').textContent).toContain('1 unacknowledged');
    const rows = container.querySelectorAll('[data-testid=alarm-row]');
    expect([...rows].map((r) => r.getAttribute('data-ch'))).toEqual(['ca://DEMO:SP']);
    expect(rows[0].textContent).toContain('MINOR');
    expect(rows[0].textContent).toContain('setpoint');
    gw.handle({ op: 'alarms', ...counts, unack: 0, up: [alarm('ca://DEMO:SP', { n: 2, ackd: true, ack: { by: 'alice', t: NOW } })] });
    flushSync();
    expect(container.querySelector('[data-testid=alarm-row]')!.textContent).toContain('MINOR ✓');
    expect(container.querySelector('[data-testid=alarm-row]')!.textContent).toContain('alice');
    gw.handle({ op: 'alarms', ...counts, up: [alarm('ca://DEMO:SP', { n: 3, c: false, sev: 3, st: 'disconnected', ackd: true })] });
    flushSync();
    expect(container.querySelector('[data-testid=alarm-row]')!.textContent).toContain('no data');
  });
});
