/**
 * msgpack decoding of gateway frames. Typed arrays (ext type 1, see
 * schemas/synoptic_schemas/ndarray.py) become a typed array over one sliced
 * buffer: `u8 dtype | u8 ndim | ndim × u32 LE dims | raw LE elements`.
 */
import { Decoder, Encoder, ExtensionCodec } from '@msgpack/msgpack';
import type { ClientFrame, ServerFrame } from './protocol';

export const EXT_NDARRAY = 1;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

type TypedArrayCtor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

/** Wire dtype code → typed array constructor (codes are part of the contract). */
export const DTYPE_CTORS: Record<number, TypedArrayCtor> = {
  1: Int8Array,
  2: Uint8Array,
  3: Int16Array,
  4: Uint16Array,
  5: Int32Array,
  6: Uint32Array,
  7: BigInt64Array,
  8: BigUint64Array,
  9: Float32Array,
  10: Float64Array,
  11: Uint8Array, // bool: one byte per element
};

/** A decoded wire array: a typed array plus its shape (rows first). */
export interface NdArray {
  data: ArrayLike<number | bigint> & { length: number; buffer: ArrayBufferLike };
  shape: number[];
}

/** The typed arrays JSON mode sends: `{"dtype": "f8", "shape": [n], "b64": "…"}`. */
const DTYPE_NAMES: Record<string, number> = {
  i1: 1, u1: 2, i2: 3, u2: 4, i4: 5, u4: 6, i8: 7, u8: 8, f4: 9, f8: 10, bool: 11,
};

/** Decode the ext payload into a typed array; throws on a malformed payload. */
export function decodeNdArray(payload: Uint8Array): NdArray {
  if (payload.byteLength < 2) throw new Error('typed array: truncated header');
  const ctor = DTYPE_CTORS[payload[0]];
  const ndim = payload[1];
  if (!ctor) throw new Error(`typed array: unknown dtype code ${payload[0]}`);
  if (ndim < 1 || ndim > 4) throw new Error(`typed array: bad dimension count ${ndim}`);
  const offset = 2 + 4 * ndim;
  if (payload.byteLength < offset) throw new Error('typed array: truncated shape');
  const view = new DataView(payload.buffer, payload.byteOffset, offset);
  const shape: number[] = [];
  let count = 1;
  for (let d = 0; d < ndim; d++) {
    const dim = view.getUint32(2 + 4 * d, true);
    shape.push(dim);
    count *= dim;
  }
  const nbytes = count * ctor.BYTES_PER_ELEMENT;
  if (payload.byteLength - offset !== nbytes) {
    throw new Error(`typed array: ${payload.byteLength - offset} data bytes for shape [${shape}]`);
  }
  const start = payload.byteOffset + offset;
  // One slice copies the bytes into an aligned buffer of their own; no element loop.
  const buffer = payload.buffer.slice(start, start + nbytes) as ArrayBuffer;
  return { data: new ctor(buffer), shape };
}

const extensionCodec = new ExtensionCodec();
extensionCodec.register({
  type: EXT_NDARRAY,
  encode: () => null,
  decode: (data: Uint8Array) => decodeNdArray(data),
});

const decoder = new Decoder({ extensionCodec });
const encoder = new Encoder();

/**
 * 64-bit integers: msgpack's uint64/int64 decode as a number while it is exact
 * (|x| <= 2^53 - 1) and as a bigint beyond, so a uint64 counter is shown exactly.
 * (@msgpack/msgpack offers all-or-nothing `useBigInt64`, which would turn every
 * nanosecond timestamp into a bigint.)
 */
type Int64Reader = { view: DataView; pos: number; readU64(): number | bigint; readI64(): number | bigint };
const reader = decoder as unknown as Int64Reader;
reader.readU64 = function (this: Int64Reader) {
  const big = this.view.getBigUint64(this.pos);
  this.pos += 8;
  return big <= MAX_SAFE ? Number(big) : big;
};
reader.readI64 = function (this: Int64Reader) {
  const big = this.view.getBigInt64(this.pos);
  this.pos += 8;
  return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(big) : big;
};

/**
 * `v.t` as a number: a nanosecond timestamp decodes as a bigint (beyond 2^53), and
 * `ValueMsg.t` is a number (~256 ns resolution is plenty) wherever a value is read.
 */
export function settleTime<T extends { t: number | bigint } | null | undefined>(v: T): T {
  if (v && typeof v.t === 'bigint') v.t = Number(v.t);
  return v;
}

/** Decode one binary frame from the gateway. */
export function decodeFrame(data: ArrayBuffer | Uint8Array): ServerFrame {
  const frame = decoder.decode(data instanceof Uint8Array ? data : new Uint8Array(data));
  if (frame === null || typeof frame !== 'object' || !('op' in frame)) {
    throw new Error('frame is not a map with an op');
  }
  return frame as ServerFrame;
}

/** Decode one JSON text frame (`/ws?format=json`), turning `{dtype, shape, b64}` into typed arrays. */
export function decodeJsonFrame(text: string): ServerFrame {
  return JSON.parse(text, (_key, value) => {
    if (value && typeof value === 'object' && typeof value.b64 === 'string' && 'dtype' in value) {
      const code = DTYPE_NAMES[value.dtype as string];
      const raw = Uint8Array.from(atob(value.b64), (c) => c.charCodeAt(0));
      const ctor = DTYPE_CTORS[code];
      if (!ctor) throw new Error(`typed array: unknown dtype ${value.dtype}`);
      return { data: new ctor(raw.buffer), shape: value.shape } satisfies NdArray;
    }
    return value;
  }) as ServerFrame;
}

/** Encode one client frame as msgpack. */
export function encodeFrame(frame: ClientFrame): Uint8Array {
  return encoder.encode(frame);
}

/** True when a value is a decoded wire array. */
export function isNdArray(value: unknown): value is NdArray {
  return (
    typeof value === 'object' &&
    value !== null &&
    'shape' in value &&
    'data' in value &&
    ArrayBuffer.isView((value as NdArray).data)
  );
}

/**
 * Runs the decoder over a small made-up snapshot, so that the first real one (a
 * screen of 1000 values, ~130 KB) is decoded by compiled code rather than by the
 * interpreter: the page does this while it waits for the gateway anyway.
 */
export function warmDecoder(values = 128, rounds = 3): void {
  const ch: string[] = [];
  const val: unknown[] = [];
  const meta: unknown[] = [];
  for (let i = 0; i < values; i++) {
    ch.push(`ca://WARM:${i}`);
    val.push({ ver: 1, v: i + 0.5, t: 1.7e18 + i * 1e6, sev: i & 3, st: '', seq: i, ep: 2 ** 40 + i, c: true });
    meta.push({ ver: 1, dt: 'f8', shape: [], w: false, t: 1.7e18, ep: 2 ** 40, unit: 'V', prec: 2, disp: [0, 10] });
  }
  const bytes = encoder.encode({ op: 'snap', id: 0, sid: 0, ch, val, meta });
  for (let r = 0; r < rounds; r++) decoder.decode(bytes);
}

