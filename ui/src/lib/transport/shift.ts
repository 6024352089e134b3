/**
 * Array updates in the shift form (`sub.shift`, docs/protocol.md): a circular
 * buffer's update carries only its new samples (`tail`), the number of samples
 * dropped from the front (`sh`) and the seq of the value it follows (`base`).
 */
import { isNdArray, type NdArray } from './codec';
import type { ValueMsg } from './protocol';

/** A typed array of any element type (the `data` of what the codec decodes arrays to). */
type Typed = (Float64Array | Float32Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | BigInt64Array | BigUint64Array) & {
  constructor: new (n: number) => Typed;
};

/** Whether `v` is newer in (ep, seq) than `held` (a value without ep/seq always is). */
export function isNewer(held: ValueMsg | null, v: ValueMsg): boolean {
  if (!held || held.ep === undefined || held.seq === undefined || v.ep === undefined || v.seq === undefined) return true;
  return v.ep > held.ep || (v.ep === held.ep && v.seq > held.seq);
}

/**
 * The full value of the shift-form update `v`, built on `held` (the value of the
 * same channel and subscription the client holds): `held.v` without its first
 * `sh` elements, then `tail`, in a new typed array of the same type. Null when
 * `held` is not its base (other ep or seq, reduced, not a 1-D array of that type).
 */
export function unshift(held: ValueMsg | null, v: ValueMsg): ValueMsg | null {
  if (!held || held.ep !== v.ep || held.seq !== v.base || held.x !== undefined || held.bin !== undefined) return null;
  if (!isNdArray(held.v) || !isNdArray(v.tail) || held.v.shape.length !== 1) return null;
  const prev = held.v.data as Typed;
  const tail = v.tail.data as Typed;
  const k = v.sh;
  if (prev.constructor !== tail.constructor || typeof k !== 'number' || k < 0 || k > prev.length) return null;
  const keep = prev.length - k;
  const out = new prev.constructor(keep + tail.length);
  out.set(prev.subarray(k) as never);
  out.set(tail as never, keep);
  const { sh: _sh, tail: _tail, base: _base, ...rest } = v;
  return { ...rest, v: { data: out, shape: [out.length] } satisfies NdArray };
}
