/** Symbols: the picture (or text) of index = a channel's value (Phoebus's symbol and text symbol widgets). */
import { isNdArray } from '../transport/codec';

/** The index a value selects among `count` symbols (an array's element `element`); -1 when none. */
export function symbolIndex(v: unknown, count: number, element = 0): number {
  let x: unknown = v;
  if (isNdArray(x)) x = x.data[element];
  else if (Array.isArray(x)) x = x[element];
  let k: number;
  if (typeof x === 'number') k = Math.round(x);
  else if (typeof x === 'boolean') k = x ? 1 : 0;
  else if (typeof x === 'bigint') k = Number(x);
  else if (typeof x === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(x)) k = Math.round(Number(x));
  else return -1;
  return k >= 0 && k < count ? k : -1;
}
