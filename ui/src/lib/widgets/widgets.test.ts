import { render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { describe, expect, it, vi } from 'vitest';
import Host from '../testing/Host.svelte';
import { Gateway } from '../transport/gateway.svelte';
import { Socket } from '../testing/socket';
import type { MetaMsg, ValueMsg } from '../transport/protocol';
import type { WidgetSpec } from '../screen';

echarts.use([SVGRenderer]); // canvas does not exist in jsdom

const val = (v: unknown, sev = 0, t = Date.now() * 1e6): ValueMsg => ({ v, t, sev, c: true, st: '' });

/** A gateway fed by hand; `frame()` runs the pending animation frame. */
function setup(uris: string[], write = false) {
  const pending: (() => void)[] = [];
  const gw = new Gateway({ schedule: (cb) => pending.push(cb) });
  gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write });
  const sub = gw.subscribe(uris);
  const frame = () => pending.splice(0).forEach((cb) => cb());
  const snap = (vals: (ValueMsg | null)[], metas: (MetaMsg | null)[], stale?: number[]) => {
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: sub.uris, val: vals, meta: metas, stale });
    frame();
  };
  const upd = (i: number, v: ValueMsg) => gw.handle({ op: 'upd', sid: 1, i: [i], val: [v] });
  return { gw, frame, snap, upd };
}

const show = (gw: Gateway, spec: WidgetSpec) => render(Host, { props: { gateway: gw, spec } });

describe('label widget', () => {
  it('shows value, unit and alarm colour, and updates once per frame', () => {
    const { gw, frame, snap, upd } = setup(['ca://SIM:SINE']);
    const { container } = show(gw, { type: 'label', channels: ['ca://SIM:SINE'] });
    snap([val(1.23456)], [{ dt: 'f8', shape: [], w: false, unit: 'mm', prec: 2 }]);
    const box = container.querySelector('[data-role=value]')!;
    expect(box.textContent).toContain('1.23');
    expect(box.textContent).toContain('mm');
    expect(box.getAttribute('data-stale')).toBe('false');
    upd(0, val(9.5, 2));
    expect(box.textContent).toContain('1.23'); // not before the frame
    frame();
    expect(box.textContent).toContain('9.50');
    expect(box.classList.contains('sev-major')).toBe(true);
  });

  it('is marked stale when the bus is down', () => {
    const { gw, snap } = setup(['ca://A']);
    const { container } = show(gw, { type: 'label', channels: ['ca://A'] });
    snap([val(1)], [null]);
    gw.handle({ op: 'bus', up: false });
    flushSync();
    expect(container.querySelector('[data-role=value]')!.getAttribute('data-stale')).toBe('true');
  });
});

describe('stale marker from liveness', () => {
  it('a label whose adapter stopped shows the stale marker until a value arrives', () => {
    const { gw, frame, snap, upd } = setup(['ca://A']);
    const { container } = show(gw, { type: 'label', channels: ['ca://A'] });
    snap([val(1)], [{ dt: 'i4', shape: [], w: false }]);
    const box = container.querySelector('[data-role=value]') as HTMLElement;
    const text = box.firstChild;
    expect(text).toBeInstanceOf(Text);
    expect(box.getAttribute('data-stale')).toBe('false');
    gw.handle({ op: 'src', sid: 1, i: [0], up: false });
    frame();
    expect(box.getAttribute('data-stale')).toBe('true');
    expect(box.classList.contains('stale')).toBe(true);
    box.dispatchEvent(new Event('pointerenter'));
    expect(box.title).toContain('no live source');
    upd(0, val(2));
    frame();
    expect(box.getAttribute('data-stale')).toBe('false');
    expect(box.textContent).toContain('2');
    expect(box.firstChild).toBe(text); // painted in place, not re-rendered
  });

  it('an LED in a snapshot listed as stale is stale', () => {
    const { gw, snap } = setup(['ca://A']);
    const { container } = show(gw, { type: 'led', channels: ['ca://A'] });
    snap([val(1)], [null], [0]);
    expect(container.querySelector('[data-role=value]')!.getAttribute('data-stale')).toBe('true');
    expect(container.querySelector('[data-role=value]')!.getAttribute('data-on')).toBe('true');
  });
});

describe('form widget', () => {
  it('shows a row per channel with value, unit and alarm, painted once per frame', () => {
    const { gw, frame, snap, upd } = setup(['ca://A', 'ca://B']);
    const { container } = show(gw, { type: 'form', channels: ['ca://A', 'ca://B'] });
    snap([val(1.5), val(7)], [{ dt: 'f8', shape: [], w: false, unit: 'mm', prec: 1 }, { dt: 'i4', shape: [], w: false }]);
    const cell = (uri: string) => container.querySelector(`tr[data-channel="${uri}"] td.val`)!;
    expect(cell('ca://A').textContent).toBe('1.5');
    expect(cell('ca://A').nextElementSibling!.textContent).toBe('mm');
    expect(cell('ca://B').textContent).toBe('7');
    expect(cell('ca://A').getAttribute('data-stale')).toBe('false');
    upd(0, val(2.25, 1));
    expect(cell('ca://A').textContent).toBe('1.5');
    frame();
    expect(cell('ca://A').textContent).toBe('2.3');
    expect(cell('ca://A').classList.contains('sev-minor')).toBe(true);
    gw.handle({ op: 'src', sid: 1, i: [1], up: false });
    frame();
    expect(cell('ca://B').getAttribute('data-stale')).toBe('true');
    expect(cell('ca://A').getAttribute('data-stale')).toBe('false');
  });
});

describe('LED widget', () => {
  it('shows the Tango DevState label and colour', () => {
    const { gw, snap } = setup(['tango://h:10000/a/b/c/state']);
    const { container } = show(gw, { type: 'led', channels: ['tango://h:10000/a/b/c/state'] });
    snap([val(8)], [{ dt: 'state', shape: [], w: false, labels: ['ON', 'OFF', 'CLOSE', 'OPEN', 'INSERT', 'EXTRACT', 'MOVING', 'STANDBY', 'FAULT'] }]);
    expect(container.textContent).toContain('FAULT');
    const led = container.querySelector('[data-role=value]') as HTMLElement;
    expect(led.style.getPropertyValue('--lamp')).toMatch(/255, 0, 0|#ff0000/i);
  });
});

describe('write widgets', () => {
  const sp: MetaMsg = { dt: 'f8', shape: [], w: true, unit: 'A' };
  it('are disabled when the gateway grants no write', () => {
    const { gw, snap } = setup(['ca://SIM:SP'], false);
    const { container } = show(gw, { type: 'input', channels: ['ca://SIM:SP'] });
    snap([val(1)], [sp]);
    expect((container.querySelector('input') as HTMLInputElement).disabled).toBe(true);
    expect((container.querySelector('button') as HTMLButtonElement).disabled).toBe(true);
  });

  it('ask for confirmation before writing, then wait for the reply', async () => {
    const { gw, snap } = setup(['ca://SIM:SP'], true);
    const { container } = show(gw, { type: 'input', channels: ['ca://SIM:SP'] });
    snap([val(1)], [sp]);
    const input = container.querySelector('input') as HTMLInputElement;
    expect(input.disabled).toBe(false);
    input.value = '42';
    input.dispatchEvent(new Event('input'));
    flushSync();
    container.querySelector('form')!.requestSubmit();
    flushSync();
    expect(container.textContent).toContain('write 42?');
    const yes = container.querySelector('.confirm .yes') as HTMLButtonElement;
    yes.click();
    flushSync();
    expect(container.querySelector('[data-role=write-status]')!.textContent).toContain('…');
  });
});

describe('command widget', () => {
  const CMD = 'tango://h:1/sim/test/1/SetLevel';
  function live(write: boolean) {
    const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0, schedule: () => {} });
    gw.start();
    Socket.last.onopen?.();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write });
    return gw;
  }
  const cmds = () => Socket.last.sent.filter((f) => f.op === 'cmd') as unknown as { id: number; ch: string; v?: unknown }[];

  it('is disabled without a write grant, and subscribes nothing', () => {
    const gw = live(false);
    const { container } = show(gw, { type: 'command', options: { command: CMD, input: 'number' } });
    flushSync();
    expect((container.querySelector('[data-role=run]') as HTMLButtonElement).disabled).toBe(true);
    expect(Socket.last.sent.some((f) => f.op === 'sub')).toBe(false);
  });

  it('runs with the typed argument after confirmation and shows the output', async () => {
    const gw = live(true);
    const { container } = show(gw, { type: 'command', options: { command: CMD, input: 'number', confirm: true } });
    flushSync();
    expect(container.querySelector('[data-role=run]')!.textContent).toBe('SetLevel');
    const input = container.querySelector('[data-role=input]') as HTMLInputElement;
    input.value = '12.5';
    input.dispatchEvent(new Event('input'));
    flushSync();
    container.querySelector('form')!.requestSubmit();
    flushSync();
    expect(container.textContent).toContain('run SetLevel(12.5)?');
    expect(cmds()).toHaveLength(0);
    (container.querySelector('.confirm .yes') as HTMLButtonElement).click();
    flushSync();
    const [sent] = cmds();
    expect(sent).toMatchObject({ ch: 'tango://h:1/sim/test/1/setlevel', v: 12.5 });
    gw.handle({ op: 'cmd', id: sent.id, ok: true, v: 12.5 });
    await vi.waitFor(() => expect(container.querySelector('[data-role=write-status]')!.textContent).toBe('→ 12.5'));
  });

  it('runs a command without argument at once and shows a refusal', async () => {
    const gw = live(true);
    const { container } = show(gw, { type: 'command', title: 'Reset all', options: { command: 'tango://h:1/sim/test/1/Reset' } });
    flushSync();
    expect(container.querySelector('[data-role=input]')).toBeNull();
    (container.querySelector('[data-role=run]') as HTMLButtonElement).click();
    flushSync();
    const [sent] = cmds();
    expect('v' in sent).toBe(false);
    gw.handle({ op: 'cmd', id: sent.id, ok: false, err: 'access', msg: 'API_CommandNotAllowed: not in FAULT' });
    await vi.waitFor(() =>
      expect(container.querySelector('[data-role=write-status]')!.textContent).toBe('access: API_CommandNotAllowed: not in FAULT'),
    );
  });
});

describe('chart widgets render with ECharts (SVG)', () => {
  it('trend draws a line of the history', async () => {
    const { gw, snap, upd, frame } = setup(['ca://SIM:SINE']);
    const { container } = show(gw, { type: 'trend', channels: ['ca://SIM:SINE'], options: { window_s: 10 } });
    await vi.waitFor(() => expect(container.querySelector('.chart')).not.toBeNull(), { timeout: 15_000 }); // loaded on demand
    snap([val(0)], [null]);
    for (let k = 1; k < 20; k++) upd(0, val(Math.sin(k), 0, (Date.now() - 2000 + k * 100) * 1e6));
    frame();
    expect(container.querySelector('svg')).not.toBeNull();
    // the line: a path with one segment per sample (the redraw runs right after the commit)
    await vi.waitFor(() => expect([...container.querySelectorAll('svg path')].some((p) => (p.getAttribute('d') ?? '').split('L').length >= 19)).toBe(true));
  });

  it('trend opens with the last minutes of history drawn, then appends live values', async () => {
    const { gw, snap, upd, frame } = setup(['ca://SIM:SINE']);
    const asked: [string[], number, number, number][] = [];
    const now = Date.now();
    gw.history = async (uris, t0, t1, px) => {
      asked.push([uris, t0, t1, px]);
      const t = Float64Array.from({ length: 50 }, (_, i) => now - 120_000 + i * 2000);
      return [{ t, v: t.map((x) => Math.sin(x)), sev: new Uint8Array(50), error: null, src: 'bus' }];
    };
    const { container } = show(gw, { type: 'trend', channels: ['ca://SIM:SINE'], options: { window_s: 60, history_s: 120 } });
    await vi.waitFor(() => expect(container.querySelector('.chart svg')).not.toBeNull(), { timeout: 15_000 });
    const box = container.querySelector('.w-trend') as HTMLElement;
    await vi.waitFor(() => expect(box.dataset.historyPoints).toBe('50'));
    expect(asked[0][0]).toEqual(['ca://SIM:SINE']);
    expect(asked[0][2] - asked[0][1]).toBeGreaterThanOrEqual(120_000);
    snap([val(0)], [null]);
    for (let k = 1; k < 10; k++) upd(0, val(k, 0, (Date.now() + k * 100) * 1e6));
    frame();
    // history and live in one line: 50 loaded points + the live samples
    await vi.waitFor(() => expect([...container.querySelectorAll('svg path')].some((p) => (p.getAttribute('d') ?? '').split('L').length >= 55)).toBe(true));
    // the range picker reloads history for the new window
    const select = container.querySelector('select[aria-label="time range"]') as HTMLSelectElement;
    select.value = '3600';
    select.dispatchEvent(new Event('change', { bubbles: true }));
    await vi.waitFor(() => expect(asked.length).toBe(2));
    expect(asked[1][2] - asked[1][1]).toBeGreaterThanOrEqual(3_600_000);
  });

  it('trend shows a history error but keeps drawing live values', async () => {
    const { gw, snap, upd, frame } = setup(['ca://SIM:SINE']);
    gw.history = async () => {
      throw new Error('rate_limited: too many');
    };
    const { container } = show(gw, { type: 'trend', channels: ['ca://SIM:SINE'], options: { window_s: 10 } });
    await vi.waitFor(() => expect(container.querySelector('.hist-error')?.textContent).toContain('rate_limited'), { timeout: 15_000 });
    snap([val(0)], [null]);
    for (let k = 1; k < 20; k++) upd(0, val(k, 0, (Date.now() - 2000 + k * 100) * 1e6));
    frame();
    await vi.waitFor(() => expect([...container.querySelectorAll('svg path')].some((p) => (p.getAttribute('d') ?? '').split('L').length >= 19)).toBe(true));
  });

  it('trend zooms and pans from the keyboard, and Home goes back to the live window', async () => {
    const { gw, snap, upd, frame } = setup(['ca://SIM:SINE']);
    const { container } = show(gw, { type: 'trend', channels: ['ca://SIM:SINE'], options: { window_s: 10 } });
    await vi.waitFor(() => expect(container.querySelector('.chart svg')).not.toBeNull(), { timeout: 15_000 });
    snap([val(0)], [null]);
    for (let k = 1; k < 20; k++) upd(0, val(k, 0, (Date.now() - 2000 + k * 100) * 1e6));
    frame();
    const chart = container.querySelector('.chart') as HTMLElement;
    const box = container.querySelector('.w-trend') as HTMLElement;
    expect(chart.tabIndex).toBe(0);
    expect(chart.getAttribute('aria-label')).toMatch(/zoom/);
    expect(box.dataset.follow).toBe('true');
    const key = (k: string) => chart.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
    expect(key('+')).toBe(false); // handled: default prevented
    flushSync();
    expect(box.dataset.follow).toBe('false'); // zoomed: the live window stops following
    expect(container.querySelector('button.follow')).not.toBeNull();
    key('ArrowLeft');
    key('ArrowUp');
    expect(key('x')).toBe(true); // not a chart key: left alone
    key('Home');
    flushSync();
    expect(box.dataset.follow).toBe('true');
    expect(container.querySelector('button.follow')).toBeNull();
  });

  it('gauge draws its dial and shows the value', async () => {
    const { gw, snap } = setup(['ca://G']);
    const { container } = show(gw, { type: 'gauge', channels: ['ca://G'] });
    await vi.waitFor(() => expect(container.querySelector('.chart svg')).not.toBeNull(), { timeout: 15_000 });
    snap([val(3)], [{ dt: 'f8', shape: [], w: false, unit: 'V', prec: 1, disp: [0, 10] }]);
    expect(container.querySelector('[data-role=value]')!.textContent).toMatch(/3\.0\s*V/);
    await vi.waitFor(() => expect(container.querySelectorAll('.chart svg path').length).toBeGreaterThan(3)); // scale, ticks, pointer
  });

  it('spectrum asks for its full arrays with the full option, without a width', async () => {
    const { gw } = setup(['ca://SIM:WF1K']);
    const asked: [string[], Record<string, number> | undefined][] = [];
    const subscribe = gw.subscribe.bind(gw);
    gw.subscribe = (uris, pts) => (asked.push([uris, pts]), subscribe(uris, pts));
    const { container } = show(gw, { type: 'spectrum', channels: ['ca://SIM:WF1K'], options: { full: true } });
    await vi.waitFor(() => expect(container.querySelector('.chart')).not.toBeNull(), { timeout: 15_000 });
    flushSync();
    expect(asked).toEqual([[['ca://SIM:WF1K'], undefined]]); // no sub.pts: the full array
  });

  it('spectrum takes a typed array', async () => {
    const { gw, snap } = setup(['ca://SIM:WF1K']);
    const { container } = show(gw, { type: 'spectrum', channels: ['ca://SIM:WF1K'] });
    await vi.waitFor(() => expect(container.querySelector('.chart')).not.toBeNull(), { timeout: 15_000 });
    snap([val({ data: new Float64Array([1, 3, 2, 5]), shape: [4] })], [{ dt: 'f8', shape: [4], w: false }]);
    expect(container.querySelector('svg')).not.toBeNull();
    await vi.waitFor(() => expect([...container.querySelectorAll('svg path')].some((p) => (p.getAttribute('d') ?? '').split('L').length === 4)).toBe(true));
  });
});
