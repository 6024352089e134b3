import { describe, expect, it, vi } from 'vitest';
import { Gateway, splitBrowserSide } from '../gateway.svelte';
import type { ValueMsg } from '../protocol';
import { evaluate, FormulaError, formulaInputs, parseFormula, type Operand } from './formula';
import { isBrowserSide, quotedInputs } from './kinds';
import { coerce, parseLocal, parseSim, splitArgs } from './values';
import { Socket } from '../../testing/socket';

const calc = (text: string, values: Record<string, Operand> = {}) => evaluate(parseFormula(text), (u) => values[u] ?? null);

describe('formulas', () => {
  it('follow Phoebus precedence and operators', () => {
    expect(calc('3+4')!.v).toBe(7);
    expect(calc('2 + 3 * 4 ^ 2')!.v).toBe(50);
    expect(calc('-2 ** 2')!.v).toBe(-4);
    expect(calc('(1 + 2) * 3 % 4')!.v).toBe(1);
    expect(calc('1 < 2 && 3 >= 3 || 0')!.v).toBe(1);
    expect(calc('not 1 or 0')!.v).toBe(0);
    expect(calc('!0 == 1')!.v).toBe(1);
    expect(calc('5 > 1 ? 10 : -10')!.v).toBe(10);
    expect(calc('0 ? 1 : 0 ? 2 : 3')!.v).toBe(3);
    expect(calc('"a" + 1')!.v).toBe('a1');
    expect(calc('"x" == "x"')!.v).toBe(1);
  });

  it('call the math functions and the alarm ones', () => {
    expect(calc('abs(-2.5) + round(2.5) + floor(1.9) + ceil(1.1) + sqrt(16) + max(1, 7, 3) + min(4, 2)')!.v).toBe(2.5 + 3 + 1 + 2 + 4 + 7 + 2);
    expect(calc('atan2(1, 1) * 4')!.v).toBeCloseTo(Math.PI);
    expect(calc('toDegrees(pi)')!.v).toBeCloseTo(180);
    const r = calc('rnd(10)')!.v as number;
    expect(r).toBeGreaterThanOrEqual(0);
    expect(r).toBeLessThan(10);
    const vals = { 'ca://A': { v: 1, sev: 1 }, 'loc://b': { v: 2, sev: 2 } };
    expect(calc('highestSeverity(`ca://A`, `loc://b`)', vals)).toEqual({ v: 2, sev: 2 });
    expect(calc('majorAlarm(`ca://A` > 0, 42)', vals)).toEqual({ v: 42, sev: 2 });
    expect(calc('indexOf(highestSeverity(`ca://A`, `loc://b`))', vals)).toEqual({ v: 2, sev: 2 }); // Phoebus's enum index
    expect(calc('minorAlarm(0, 42)', vals)).toEqual({ v: 42, sev: 0 });
    expect(calc('if(`ca://A`, 5, 6)', vals)!.v).toBe(5);
  });

  it('read channels in backquotes (bare names are Channel Access) and carry their severity', () => {
    const tree = parseFormula("10 + 5*`sim://sine` - 'DEMO:X' + `loc://a`");
    expect(formulaInputs(tree)).toEqual(['sim://sine', 'ca://DEMO:X', 'loc://a']);
    expect(quotedInputs("=10 + 5*`sim://sine` - 'DEMO:X'")).toEqual(['sim://sine', 'ca://DEMO:X']);
    expect(evaluate(tree, (u) => ({ 'sim://sine': { v: 2, sev: 0 }, 'ca://DEMO:X': { v: 1, sev: 1 }, 'loc://a': { v: 3, sev: 0 } })[u] ?? null)).toEqual({ v: 22, sev: 1 });
    expect(evaluate(tree, () => null)).toBeNull(); // no value until every input has one
  });

  it('refuse bad syntax with a reason, never run code', () => {
    for (const bad of ['1 +', '(1', '`unclosed', 'alert(1)', '1 ; 2', '"x', 'a.b()', '1 ? 2']) expect(() => parseFormula(bad), bad).toThrow(FormulaError);
    expect(() => parseFormula('('.repeat(100) + '1' + ')'.repeat(100))).toThrow(/deep/);
    expect(() => parseFormula('constructor(1)')).toThrow(/unknown function/);
  });
});

describe('local and simulated channel forms', () => {
  it('parse Phoebus local channels with their types', () => {
    expect(parseLocal('loc://example')).toMatchObject({ name: 'example', value: 0, meta: { dt: 'f8', w: true } });
    expect(parseLocal('loc://a_number(42.2)').value).toBe(42.2);
    expect(parseLocal('loc://an_array(3.8, 2.5, 7.4)')).toMatchObject({ value: [3.8, 2.5, 7.4], meta: { shape: [3] } });
    expect(parseLocal('loc://a_text("Hello, you")')).toMatchObject({ value: 'Hello, you', meta: { dt: 'str' } });
    expect(parseLocal('loc://large<VLong>(42)')).toMatchObject({ value: 42, meta: { dt: 'i8' } });
    const e = parseLocal('loc://options<VEnum>(2, "A", "Initial", "B", "C")');
    expect(e).toMatchObject({ name: 'options', value: 2, meta: { dt: 'enum', labels: ['A', 'Initial', 'B', 'C'] } });
    expect(coerce(e.meta, 'B')).toBe(2);
    expect(coerce(parseLocal('loc://n<VLong>(1)').meta, '7.9')).toBe(7);
    expect(() => coerce(parseLocal('loc://n(1)').meta, 'abc')).toThrow(/not a number/);
    expect(() => parseLocal('loc://2nd')).toThrow();
    expect(() => parseLocal('loc://x<VWhat>(1)')).toThrow(/unknown local type/);
    expect(splitArgs('1, "a, b", c')).toEqual([1, 'a, b', 'c']);
  });

  it('simulate with Phoebus parameters', () => {
    const sine = parseSim('sim://sine(0, 10, 0.5)');
    expect(sine.periodMs).toBe(500);
    expect([0, 1, 2, 3, 4, 5].map((k) => Math.round(sine.next(k) as number))).toEqual([5, 8, 10, 10, 8, 5]);
    const ramp = parseSim('sim://ramp(0, 100, -1, 2)');
    expect([0, 1, 2].map(ramp.next)).toEqual([100, 99, 98]);
    expect(parseSim('sim://ramp(1, 3, 0.2)').next(3)).toBe(1); // 1, 2, 3, 1 …
    const noise = parseSim('sim://noise(-10, 10, 0.2)');
    expect(noise.periodMs).toBe(200);
    for (let k = 0; k < 50; k++) expect(Math.abs(noise.next(k) as number)).toBeLessThanOrEqual(10);
    expect((parseSim('sim://noisewave(0, 1, 0.1)').next(0) as number[]).length).toBe(10);
    expect([0, 1, 2].map(parseSim('sim://flipflop(0.5)').next)).toEqual([0, 1, 0]);
    expect([0, 1].map(parseSim('sim://intermittent').next)).toEqual([0, null]);
    expect(parseSim('sim://strings').next(3)).toBe('Text 3');
    expect(parseSim('sim://const("Fred")').next(0)).toBe('Fred');
    expect((parseSim('sim://sawtooth(1, 10, 20, 0.1)').next(0) as number[]).length).toBe(20);
    expect(parseSim('sim://sine(0, 1, 0.001)').periodMs).toBe(50); // bounded
    expect(() => parseSim('sim://bogus')).toThrow(/unknown/);
  });

  it('tell browser-side channels from the bus ones', () => {
    for (const u of ['loc://x', '=1+2', 'eq://3', 'sim://sine', 'sim://noise(1, 2, 3)', 'sim://noiseWaveform']) expect(isBrowserSide(u), u).toBe(true);
    for (const u of ['ca://X', 'sim://BENCH:SCALAR:00001', 'sim://lt:c00001', 'pva://sine', 'tango://h:1/a/b/c/d']) expect(isBrowserSide(u), u).toBe(false);
    expect(splitBrowserSide(['ca://A', 'loc://x', '=`ca://B` + `loc://y` + `ca://A`', 'sim://sine'])).toEqual([
      ['ca://A', 'ca://B'],
      ['loc://x', '=`ca://B` + `loc://y` + `ca://A`', 'sim://sine'],
    ]);
  });
});


const val = (v: unknown, sev = 0): ValueMsg => ({ v, t: Date.now() * 1e6, sev, c: true });

describe('browser-side channels in the gateway client', () => {
  function open() {
    const frames: (() => void)[] = [];
    const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: Socket as unknown as typeof WebSocket, pingMs: 0, schedule: (cb) => frames.push(cb) });
    gw.start();
    Socket.last.onopen?.();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    return { gw, frame: () => frames.splice(0).forEach((cb) => cb()) };
  }
  const settle = () => new Promise((r) => setTimeout(r, 0));

  it('serves local, simulated and formula channels itself; only the formula\'s bus inputs go to the gateway', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const { gw, frame } = open();
      const formula = '=`ca://A` * 2 + `loc://k(1)`';
      const sub = gw.subscribe(['loc://mode<VEnum>(1, "Off", "On")', 'sim://ramp(0, 10, 1, 1)', formula, 'ca://B']);
      const subs = Socket.last.sent.filter((f) => f.op === 'sub');
      expect(subs.map((f) => f.ch)).toEqual([['ca://A', 'ca://B']]);
      await vi.dynamicImportSettled();
      await settle();
      frame();
      const mode = gw.channel('loc://mode<VEnum>(1, "Off", "On")');
      expect(mode.current?.v).toBe(1);
      expect(mode.currentMeta?.labels).toEqual(['Off', 'On']);
      expect(mode.isStale).toBe(false); // live without any gateway value
      const ramp = gw.channel('sim://ramp(0, 10, 1, 1)');
      expect(ramp.current?.v).toBe(0);
      vi.advanceTimersByTime(2000);
      frame();
      expect(ramp.current?.v).toBe(2);
      // the formula waits for its bus input, then follows it
      const f = gw.channel(formula);
      expect(f.current).toBeNull();
      gw.handle({ op: 'snap', id: subs[0].id, sid: 3, ch: ['ca://A', 'ca://B'], val: [val(5, 1), val(0)], meta: [null, null] });
      await settle();
      frame();
      expect(f.current).toMatchObject({ v: 11, sev: 1 });
      expect(f.isStale).toBe(false);
      gw.handle({ op: 'upd', sid: 3, i: [0], val: [val(7)] });
      frame();
      await settle();
      frame();
      expect(f.current).toMatchObject({ v: 15, sev: 0 });
      // a local value is writable without a write grant, and the formula reading it follows
      expect(await gw.put('loc://k', 3)).toEqual({ ok: true });
      frame();
      await settle();
      frame();
      expect(f.current?.v).toBe(17);
      expect(await gw.put('sim://ramp(0, 10, 1, 1)', 3)).toMatchObject({ ok: false, err: 'read_only' });
      expect(await gw.put('loc://mode<VEnum>(1, "Off", "On")', 'Off')).toEqual({ ok: true });
      frame();
      expect(mode.current?.v).toBe(0);
      // the gateway going away leaves the browser's own channels live
      Socket.last.onclose?.({ code: 1006, reason: 'gone' });
      expect(mode.isStale).toBe(false);
      expect(f.isStale).toBe(true); // its bus input is not live any more
      gw.unsubscribe(sub);
      await settle();
      vi.advanceTimersByTime(5000);
      frame();
      expect(ramp.current?.v).toBe(2); // stopped with its last user
      // a local value outlives the screen: the next one to name it finds what was written
      gw.subscribe(['loc://mode<VEnum>(1, "Off", "On")']);
      await settle();
      frame();
      expect(gw.channel('loc://mode<VEnum>(1, "Off", "On")').current?.v).toBe(0);
      gw.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows a malformed browser-side channel as disconnected with the reason', async () => {
    const { gw, frame } = open();
    gw.subscribe(['=1 +', 'loc://x<Bad>(1)']);
    await vi.dynamicImportSettled();
    await settle();
    frame();
    expect(gw.channel('=1 +').current).toMatchObject({ c: false, sev: 3 });
    expect(gw.channel('=1 +').currentMeta?.desc).toMatch(/unexpected end/);
    expect(gw.channel('loc://x<Bad>(1)').currentMeta?.desc).toMatch(/unknown local type/);
    gw.close();
  });
});
