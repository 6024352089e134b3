/**
 * Local (`loc://`) and simulated (`sim://`) channel values, Phoebus's forms:
 * `loc://name`, `loc://name(42.2)`, `loc://name(3.8, 2.5)`, `loc://name("Hello")`,
 * `loc://name<VLong>(42)`, `loc://name<VEnum>(2, "A", "B", "C")`; `sim://sine(min,
 * max, update_s)` (or `(min, max, steps, update_s)`), `ramp`, `noise`, `noisewave`,
 * `flipflop`, `sawtooth`, `sinewave`, `intermittent`, `strings`, `const`,
 * `gaussianNoise`, `gaussianWave`.
 */
import type { MetaMsg } from '../protocol';

export type LocValue = number | string | number[] | string[];

export interface LocalSpec {
  name: string;
  value: LocValue;
  meta: MetaMsg;
}

/** Split `a, "b, c", 3` into its items (quoted strings unquoted). */
export function splitArgs(text: string): (number | string)[] {
  const out: (number | string)[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,]+?))\s*(?:,|$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && m[0] !== '') {
    if (m[1] !== undefined) out.push(m[1].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c)));
    else {
      const raw = m[2].trim();
      const n = Number(raw);
      out.push(raw !== '' && !Number.isNaN(n) ? n : raw);
    }
    if (re.lastIndex >= text.length) break;
  }
  return out;
}

/** A local channel's name, type and initial value; Error for a malformed one. */
export function parseLocal(uri: string): LocalSpec {
  const m = /^loc:\/\/([A-Za-z][A-Za-z0-9_:.\-]*)(?:<(\w+)>)?(?:\((.*)\))?$/.exec(uri);
  if (!m) throw new Error(`not a local channel: ${uri}`);
  const [, name, type, init] = m;
  const args = init === undefined ? [] : splitArgs(init);
  const meta = (dt: string, extra: Partial<MetaMsg> = {}): MetaMsg => ({ dt, shape: [], w: true, native: type ?? 'VDouble', ...extra });
  switch (type) {
    case 'VEnum': {
      const labels = args.slice(1).map(String);
      return { name, value: Number(args[0] ?? 0), meta: meta('enum', { labels }) };
    }
    case 'VLong':
      return { name, value: Math.trunc(Number(args[0] ?? 0)), meta: meta('i8') };
    case 'VString':
      return { name, value: String(args[0] ?? ''), meta: meta('str') };
    case 'VDoubleArray':
      return { name, value: args.map(Number), meta: meta('f8', { shape: [args.length] }) };
    case 'VStringArray':
      return { name, value: args.map(String), meta: meta('str', { shape: [args.length] }) };
    case undefined:
    case 'VDouble':
      break;
    default:
      throw new Error(`unknown local type <${type}> in ${uri}`);
  }
  if (args.length > 1) {
    if (args.every((a) => typeof a === 'number')) return { name, value: args as number[], meta: meta('f8', { shape: [args.length] }) };
    return { name, value: args.map(String), meta: meta('str', { shape: [args.length] }) };
  }
  const first = args[0] ?? 0;
  if (typeof first === 'string') return { name, value: first, meta: meta('str', { native: 'VString' }) };
  return { name, value: first, meta: meta('f8') };
}

/** A written value in the type of the local channel (numbers stay numbers, enums by label or index). */
export function coerce(meta: MetaMsg, v: unknown): LocValue {
  if (meta.dt === 'enum' && typeof v === 'string') {
    const k = meta.labels?.indexOf(v) ?? -1;
    return k >= 0 ? k : Number(v);
  }
  if (meta.dt === 'str' && meta.shape.length === 0) return String(v);
  if (meta.shape.length) return Array.isArray(v) ? (v as number[]) : [Number(v)];
  if (typeof v === 'boolean') return Number(v);
  const n = Number(v);
  if (Number.isNaN(n)) throw new Error(`not a number: ${String(v)}`);
  return meta.dt === 'i8' ? Math.trunc(n) : n;
}

/** One simulated channel: its period (ms), metadata and the function giving value k. */
export interface SimSpec {
  periodMs: number;
  meta: MetaMsg;
  /** the k-th value; `null` marks a disconnection (intermittent) */
  next: (k: number) => LocValue | null;
}

const MIN_PERIOD_MS = 50;
const MAX_SIZE = 100_000;

/** The generator of a simulated channel; Error for an unknown function or bad parameters. */
export function parseSim(uri: string): SimSpec {
  const m = /^sim:\/\/([A-Za-z]+)(?:\((.*)\))?$/.exec(uri);
  if (!m) throw new Error(`not a simulated channel: ${uri}`);
  const fn = m[1];
  const p = (m[2] === undefined ? [] : splitArgs(m[2])).map((x) => (typeof x === 'number' ? x : Number.NaN));
  const at = (k: number, d: number) => (p[k] === undefined || Number.isNaN(p[k]) ? d : p[k]);
  const period = (s: number) => Math.max(MIN_PERIOD_MS, s * 1000);
  const scalar = (extra: Partial<MetaMsg> = {}): MetaMsg => ({ dt: 'f8', shape: [], w: false, native: `sim ${fn}`, ...extra });
  const array = (n: number): MetaMsg => ({ dt: 'f8', shape: [n], w: false, native: `sim ${fn}` });
  const size = (n: number) => Math.max(1, Math.min(MAX_SIZE, Math.round(n)));
  const gauss = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  switch (fn) {
    case 'sine': {
      const [min, max] = [at(0, -5), at(1, 5)];
      const steps = p.length >= 4 ? at(2, 10) : 10;
      const update = p.length >= 4 ? at(3, 0.1) : at(2, 0.1);
      const mid = (min + max) / 2;
      const amp = (max - min) / 2;
      return { periodMs: period(update), meta: scalar({ disp: [min, max] }), next: (k) => mid + amp * Math.sin((2 * Math.PI * k) / Math.max(1, steps)) };
    }
    case 'ramp': {
      const [min, max] = [at(0, -5), at(1, 5)];
      const step = p.length >= 4 ? at(2, 1) : 1;
      const update = p.length >= 4 ? at(3, 1) : at(2, 1);
      const span = max - min;
      return {
        periodMs: period(update),
        meta: scalar({ disp: [min, max] }),
        next: (k) => {
          if (span === 0 || step === 0) return min;
          const n = Math.floor(Math.abs(span / step)) + 1;
          const i = k % n;
          return step > 0 ? min + i * step : max + i * step;
        },
      };
    }
    case 'noise': {
      const [min, max, update] = [at(0, -5), at(1, 5), at(2, 1)];
      return { periodMs: period(update), meta: scalar({ disp: [min, max] }), next: () => min + Math.random() * (max - min) };
    }
    case 'gaussianNoise': {
      const [center, std, update] = [at(0, 0), at(1, 1), at(2, 0.1)];
      return { periodMs: period(update), meta: scalar(), next: () => center + std * gauss() };
    }
    case 'noisewave':
    case 'noiseWaveform': {
      const [min, max] = [at(0, -5), at(1, 5)];
      const n = p.length >= 4 ? size(at(2, 10)) : 10;
      const update = p.length >= 4 ? at(3, 1) : at(2, 1);
      return { periodMs: period(update), meta: array(n), next: () => Array.from({ length: n }, () => min + Math.random() * (max - min)) };
    }
    case 'sinewave':
    case 'sawtooth':
    case 'gaussianWave': {
      const periodS = at(0, 1);
      const wavelength = fn === 'gaussianWave' ? at(1, 10) : at(1, 10);
      const n = size(at(2, 50));
      const update = at(3, 0.1);
      const wave = (x: number) => {
        const phase = ((x % 1) + 1) % 1;
        if (fn === 'sinewave') return Math.sin(2 * Math.PI * phase);
        if (fn === 'sawtooth') return 2 * phase - 1;
        const d = (phase - 0.5) * 2; // gaussian: wavelength is the standard deviation in samples
        return Math.exp(-(d * d * n * n) / (2 * wavelength * wavelength));
      };
      return {
        periodMs: period(update),
        meta: array(n),
        next: (k) => {
          const shift = (k * update) / Math.max(1e-3, periodS);
          return Array.from({ length: n }, (_, i) => wave(i / Math.max(1, wavelength) - shift));
        },
      };
    }
    case 'flipflop':
      return { periodMs: period(at(0, 1)), meta: { dt: 'bool', shape: [], w: false, native: 'sim flipflop' }, next: (k) => k % 2 };
    case 'intermittent':
      return { periodMs: period(at(0, 1)), meta: scalar(), next: (k) => (k % 2 ? null : k / 2) };
    case 'strings':
      return { periodMs: period(at(0, 1)), meta: { dt: 'str', shape: [], w: false, native: 'sim strings' }, next: (k) => `Text ${k}` };
    case 'const': {
      const raw = m[2] === undefined ? [0] : splitArgs(m[2]);
      const v = raw[0] ?? 0;
      return { periodMs: 0, meta: typeof v === 'string' ? { dt: 'str', shape: [], w: false } : scalar(), next: () => v };
    }
  }
  throw new Error(`unknown simulated channel function '${fn}'`);
}
