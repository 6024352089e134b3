/** Turning channel values into text and colours: precision, units, enums, severities. */
import { isNdArray } from './transport/codec';
import type { MetaMsg, ValueMsg } from './transport/protocol';

export interface FormatOptions {
  prec?: number;
  notation?: 'fixed' | 'exp' | 'eng';
  unit?: string;
  /** a char array shown as text (EPICS long strings) */
  long_string?: boolean;
  /** the text of index = the value (a text symbol) */
  symbols?: string[];
}

/** A char array's text (bytes up to the first NUL, UTF-8), or null when `v` is not one. */
export function charText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  let bytes: ArrayLike<number> | null = null;
  if (isNdArray(v) && (v.data instanceof Uint8Array || v.data instanceof Int8Array)) bytes = v.data;
  else if (Array.isArray(v) && v.every((x) => typeof x === 'number')) bytes = v as number[];
  if (!bytes) return null;
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (; n < bytes.length && bytes[n] !== 0; n++) out[n] = bytes[n] & 0xff;
  return new TextDecoder().decode(out.subarray(0, n));
}

/** Engineering notation: exponent a multiple of 3. */
function engineering(x: number, prec: number): string {
  if (x === 0 || !Number.isFinite(x)) return x.toFixed(prec);
  const exp = Math.floor(Math.log10(Math.abs(x)) / 3) * 3;
  return `${(x / 10 ** exp).toFixed(prec)}e${exp >= 0 ? '+' : ''}${exp}`;
}

/** A number with `prec` decimals in the requested notation. */
export function formatNumber(x: number, prec = 3, notation: FormatOptions['notation'] = 'fixed'): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (notation === 'exp') return x.toExponential(prec);
  if (notation === 'eng') return engineering(x, prec);
  const abs = Math.abs(x);
  if (abs !== 0 && (abs >= 1e12 || abs < 10 ** -Math.max(prec, 1) / 2)) {
    // fixed would show 0.000 or 20 digits: say it in exponent form instead
    return x.toExponential(Math.max(prec, 1));
  }
  return x.toFixed(prec);
}

/** True when the channel carries enum or DevState indices. */
export function isEnum(meta: MetaMsg | null): boolean {
  return !!meta && (meta.dt === 'enum' || meta.dt === 'state') && Array.isArray(meta.labels);
}

/** The value as text (no unit). */
export function formatValue(value: ValueMsg | null, meta: MetaMsg | null, opts: FormatOptions = {}): string {
  if (value === null) return '—';
  const v = value.v;
  if (v === null || v === undefined) return value.c === false ? 'disconnected' : '—';
  if (opts.long_string) {
    const text = charText(v);
    if (text !== null) return text;
  }
  if (opts.symbols?.length) {
    const k = typeof v === 'number' ? Math.round(v) : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : typeof v === 'boolean' ? Number(v) : -1;
    if (k >= 0 && k < opts.symbols.length) return opts.symbols[k];
  }
  if (typeof v === 'number') {
    if (isEnum(meta)) return meta!.labels![v] ?? `#${v}`;
    if (meta?.dt && meta.dt[0] !== 'f' && Number.isInteger(v) && opts.prec === undefined) return String(v);
    return formatNumber(v, opts.prec ?? meta?.prec ?? 3, opts.notation);
  }
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return v;
  if (isNdArray(v)) return `[${v.shape.join('×')}] ${meta?.dt ?? ''}`.trim();
  if (Array.isArray(v)) return `[${v.length}]`;
  return String(v);
}

/** The unit to show after the value. */
export function unitOf(meta: MetaMsg | null, opts: FormatOptions = {}): string {
  return opts.unit ?? meta?.unit ?? '';
}

/** CSS class for the alarm state: minor, major, invalid and disconnected look distinct. */
export function severityClass(value: ValueMsg | null): string {
  if (value === null) return 'sev-none';
  if (value.c === false) return 'sev-disconnected';
  return ['sev-ok', 'sev-minor', 'sev-major', 'sev-invalid'][value.sev] ?? 'sev-invalid';
}

/** Words for the alarm state (tooltips and screen readers). */
export function severityText(value: ValueMsg | null): string {
  if (value === null) return 'no value yet';
  if (value.c === false) return `disconnected${value.st ? `: ${value.st}` : ''}`;
  const name = ['no alarm', 'minor alarm', 'major alarm', 'invalid'][value.sev] ?? 'invalid';
  return value.st && value.sev > 0 ? `${name}: ${value.st}` : name;
}

/** Tango DevState colours (the Taurus palette). */
export const DEVSTATE_COLOURS: Record<string, string> = {
  ON: '#00e000',
  OFF: '#f0f0f0',
  CLOSE: '#f0f0f0',
  OPEN: '#00e000',
  INSERT: '#f0f0f0',
  EXTRACT: '#00e000',
  MOVING: '#80a0ff',
  STANDBY: '#ffff00',
  FAULT: '#ff0000',
  INIT: '#cccc7a',
  RUNNING: '#80a0ff',
  ALARM: '#ff8c00',
  DISABLE: '#ff00ff',
  UNKNOWN: '#808080',
};

/** The scalar as a number (booleans 0/1, bigint converted), or null. */
export function numeric(value: ValueMsg | null): number | null {
  const v = value?.v;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  return null;
}

/** The lamp colour of each alarm severity above none (the theme's, as the alarm classes use). */
const ALARM_COLOURS: Record<number, string> = { 1: 'var(--minor)', 2: 'var(--major)', 3: 'var(--invalid)' };

/** Whether an LED is lit, and its colour, for a value (in alarm: the alarm's colour; a DevState: Tango's). */
export function ledState(
  value: ValueMsg | null,
  meta: MetaMsg | null,
  opts: { bit?: number; invert?: boolean; on_color?: string; off_color?: string } = {},
): { colour: string; text: string; on: boolean } {
  if (meta?.dt === 'state' && meta.labels && typeof value?.v === 'number') {
    const label = meta.labels[value.v] ?? 'UNKNOWN';
    return { colour: DEVSTATE_COLOURS[label] ?? '#808080', text: label, on: true };
  }
  const v = value?.v;
  const n = numeric(value);
  let on: boolean;
  if (typeof v === 'bigint') on = opts.bit !== undefined ? ((v >> BigInt(opts.bit)) & 1n) === 1n : v !== 0n; // exact beyond 2^53
  else on = n !== null && (opts.bit !== undefined ? Math.floor(n / 2 ** opts.bit) % 2 !== 0 : n !== 0);
  if (opts.invert) on = !on;
  const text = isEnum(meta) && typeof value?.v === 'number' ? (meta!.labels![value.v] ?? '') : on ? 'on' : 'off';
  // a value in alarm lights the lamp in the alarm's colour, as every widget shows it (never a green "Fault")
  const alarm = value && value.c !== false ? ALARM_COLOURS[value.sev] : undefined;
  return { colour: alarm ?? (on ? (opts.on_color ?? '#19d35a') : (opts.off_color ?? '#2b3a2f')), text, on };
}

/** Display range: options first, then display limits, then control limits, then [0, 100]. */
export function rangeOf(meta: MetaMsg | null, opts: { min?: number; max?: number } = {}): [number, number] {
  const lim = meta?.disp && meta.disp[0] < meta.disp[1] ? meta.disp : meta?.ctrl && meta.ctrl[0] < meta.ctrl[1] ? meta.ctrl : [0, 100];
  return [opts.min ?? lim[0], opts.max ?? lim[1]];
}
