import { describe, expect, it } from 'vitest';
import { formatNumber, formatValue, ledState, rangeOf, severityClass, severityText } from './format';
import type { MetaMsg, ValueMsg } from './transport/protocol';

const val = (v: unknown, sev = 0, c = true): ValueMsg => ({ v, t: 0, sev, c, st: sev ? 'HIHI' : '' });
const meta = (m: Partial<MetaMsg>): MetaMsg => ({ dt: 'f8', shape: [], w: false, ...m });

describe('formatting', () => {
  it('shows 64-bit integers beyond 2^53 exactly (bigint), and LED bits of them', () => {
    expect(formatValue(val(18446744073709551615n), meta({ dt: 'u8' }))).toBe('18446744073709551615');
    expect(formatValue(val(-9223372036854775807n), meta({ dt: 'i8' }))).toBe('-9223372036854775807');
    expect(ledState(val(2n ** 63n), meta({ dt: 'u8' }), { bit: 63 }).on).toBe(true);
    expect(ledState(val(2n ** 63n), meta({ dt: 'u8' }), { bit: 0 }).on).toBe(false);
    expect(ledState(val(2 ** 40), meta({ dt: 'u8' }), { bit: 40 }).on).toBe(true);
  });
  it('uses the channel precision unless the widget overrides it', () => {
    expect(formatValue(val(3.14159), meta({ prec: 2 }))).toBe('3.14');
    expect(formatValue(val(3.14159), meta({ prec: 2 }), { prec: 4 })).toBe('3.1416');
    expect(formatValue(val(3.14159), null)).toBe('3.142');
  });
  it('writes integers as integers and enums by label', () => {
    expect(formatValue(val(42), meta({ dt: 'i4' }))).toBe('42');
    expect(formatValue(val(1), meta({ dt: 'enum', labels: ['Off', 'On'] }))).toBe('On');
    expect(formatValue(val(7), meta({ dt: 'enum', labels: ['Off', 'On'] }))).toBe('#7');
  });
  it('handles notations and extremes', () => {
    expect(formatNumber(12345.678, 2, 'exp')).toBe('1.23e+4');
    expect(formatNumber(12345.678, 2, 'eng')).toBe('12.35e+3');
    expect(formatNumber(1e-9, 3)).toBe('1.000e-9');
    expect(formatNumber(Number.NaN)).toBe('NaN');
    expect(formatNumber(-Infinity)).toBe('-Inf');
  });
  it('shows strings, arrays, missing and disconnected values', () => {
    expect(formatValue(val('hello'), meta({ dt: 'str' }))).toBe('hello');
    expect(formatValue(val({ data: new Float64Array(3), shape: [3] }), meta({ dt: 'f8' }))).toBe('[3] f8');
    expect(formatValue(null, null)).toBe('—');
    expect(formatValue(val(null, 3, false), null)).toBe('disconnected');
  });
});

describe('alarm states', () => {
  it('gives minor, major, invalid and disconnected distinct classes', () => {
    const classes = [val(1, 1), val(1, 2), val(1, 3), val(null, 3, false)].map(severityClass);
    expect(classes).toEqual(['sev-minor', 'sev-major', 'sev-invalid', 'sev-disconnected']);
    expect(severityClass(val(1))).toBe('sev-ok');
    expect(severityText(val(1, 2))).toBe('major alarm: HIHI');
  });
  it('colours Tango DevStates and lights LEDs by value or bit', () => {
    const state = meta({ dt: 'state', labels: ['ON', 'OFF', 'CLOSE', 'OPEN', 'INSERT', 'EXTRACT', 'MOVING', 'STANDBY', 'FAULT'] });
    expect(ledState(val(8), state)).toMatchObject({ text: 'FAULT', colour: '#ff0000' });
    expect(ledState(val(0), state).text).toBe('ON');
    expect(ledState(val(0), meta({ dt: 'i4' })).on).toBe(false);
    expect(ledState(val(4), meta({ dt: 'i4' }), { bit: 2 }).on).toBe(true);
    expect(ledState(val(4), meta({ dt: 'i4' }), { bit: 1 }).on).toBe(false);
    expect(ledState(val(true), meta({ dt: 'bool' }), { invert: true }).on).toBe(false);
  });
  it('lights an LED in its alarm colour when its value is in alarm (an enum state with its severity)', () => {
    const state = meta({ dt: 'enum', labels: ['Idle', 'Running', 'Fault'] });
    expect(ledState(val(2, 2), state)).toMatchObject({ text: 'Fault', colour: 'var(--major)', on: true });
    expect(ledState(val(1, 1), state).colour).toBe('var(--minor)');
    expect(ledState(val(0, 3), meta({ dt: 'i4' })).colour).toBe('var(--invalid)'); // off, but invalid
    expect(ledState(val(1), state, { on_color: '#00ff00' }).colour).toBe('#00ff00'); // no alarm: the widget's own colours
  });
  it('takes ranges from options, display limits, then control limits', () => {
    expect(rangeOf(meta({ disp: [-10, 10] }))).toEqual([-10, 10]);
    expect(rangeOf(meta({ disp: [0, 0], ctrl: [0, 5] }))).toEqual([0, 5]);
    expect(rangeOf(meta({ disp: [-10, 10] }), { max: 3 })).toEqual([-10, 3]);
    expect(rangeOf(null)).toEqual([0, 100]);
  });
});

describe('imported displays: long strings and text symbols', () => {
  it('shows a char array as text (up to its NUL) and picks a text symbol by value', async () => {
    const { charText } = await import('./format');
    const bytes = new Uint8Array([0x2f, 0x64, 0xc3, 0xa9, 0, 0x41]);
    const nd = { data: bytes, shape: [6] };
    expect(charText(nd)).toBe('/dé');
    expect(charText([72, 105])).toBe('Hi');
    expect(charText(3)).toBeNull();
    expect(formatValue(val(nd), meta({ dt: 'u1', shape: [6] }), { long_string: true })).toBe('/dé');
    expect(formatValue(val(1), meta({}), { symbols: ['☺', '☻'] })).toBe('☻');
    expect(formatValue(val('0'), meta({ dt: 'str' }), { symbols: ['☺', '☻'] })).toBe('☺');
    expect(formatValue(val(7), meta({ dt: 'i4' }), { symbols: ['☺', '☻'] })).toBe('7'); // out of range: the value
  });
});
