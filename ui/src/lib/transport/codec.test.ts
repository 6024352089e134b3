import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Encoder, ExtData } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { decodeFrame, decodeJsonFrame, decodeNdArray, encodeFrame, warmDecoder } from './codec';
import type { UpdFrame } from './protocol';

/** The ext payload layout of ndarray.py, built by hand. */
function payload(code: number, shape: number[], bytes: Uint8Array): Uint8Array {
  const head = new Uint8Array(2 + 4 * shape.length);
  head[0] = code;
  head[1] = shape.length;
  const view = new DataView(head.buffer);
  shape.forEach((d, i) => view.setUint32(2 + 4 * i, d, true));
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}

describe('typed arrays (ext type 1)', () => {
  it('wraps float64 bytes in a Float64Array over its own aligned buffer', () => {
    const values = new Float64Array([1.5, -2, 3e300]);
    const frame = new Encoder().encode({
      op: 'upd', sid: 1, i: [0],
      val: [{ v: new ExtData(1, payload(10, [3], new Uint8Array(values.buffer))), t: 1, sev: 0, c: true }],
    });
    const decoded = decodeFrame(frame) as UpdFrame;
    const arr = decoded.val[0].v as { data: Float64Array; shape: number[] };
    expect(arr.data).toBeInstanceOf(Float64Array);
    expect(Array.from(arr.data)).toEqual([1.5, -2, 3e300]);
    expect(arr.shape).toEqual([3]);
    expect(arr.data.byteOffset).toBe(0);
    expect(arr.data.buffer.byteLength).toBe(24);
  });

  it('keeps the shape of images and maps every dtype code', () => {
    const img = decodeNdArray(payload(4, [2, 3], new Uint8Array(new Uint16Array([1, 2, 3, 4, 5, 6]).buffer)));
    expect(img.data).toBeInstanceOf(Uint16Array);
    expect(img.shape).toEqual([2, 3]);
    expect(decodeNdArray(payload(7, [1], new Uint8Array(8))).data).toBeInstanceOf(BigInt64Array);
    expect(decodeNdArray(payload(11, [2], new Uint8Array([1, 0]))).data).toBeInstanceOf(Uint8Array);
    expect(decodeNdArray(payload(9, [1], new Uint8Array(4))).data).toBeInstanceOf(Float32Array);
  });

  it('rejects malformed payloads', () => {
    expect(() => decodeNdArray(new Uint8Array([10]))).toThrow(/truncated/);
    expect(() => decodeNdArray(payload(99, [1], new Uint8Array(8)))).toThrow(/dtype code/);
    expect(() => decodeNdArray(payload(10, [2], new Uint8Array(8)))).toThrow(/data bytes/);
  });

  it('decodes what the Python codec encodes (the wire contract)', () => {
    const root = resolve(__dirname, '../../../..');
    const script = [
      'import sys, numpy as np',
      'from synoptic_schemas.codec import encode',
      "msg = {'op': 'upd', 'sid': 2, 'i': [0, 1], 'val': [",
      "  {'ver': 1, 'v': np.arange(5, dtype='<f8') * 0.5, 't': 1700000000000000000, 'sev': 2, 'st': 'HIHI', 'seq': 7, 'ep': 1, 'c': True},",
      "  {'ver': 1, 'v': np.arange(6, dtype='<i4').reshape(2, 3), 't': 1, 'sev': 0, 'st': '', 'seq': 1, 'ep': 1, 'c': True}]}",
      'sys.stdout.buffer.write(encode(msg))',
    ].join('\n');
    const bytes = execFileSync(resolve(root, '.venv/bin/python'), ['-c', script]);
    const frame = decodeFrame(new Uint8Array(bytes)) as UpdFrame;
    const a = frame.val[0].v as { data: Float64Array; shape: number[] };
    const b = frame.val[1].v as { data: Int32Array; shape: number[] };
    expect(Array.from(a.data)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(frame.val[0].sev).toBe(2);
    expect(b.data).toBeInstanceOf(Int32Array);
    expect(b.shape).toEqual([2, 3]);
    expect(Array.from(b.data)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('64-bit integers', () => {
  it('are numbers while exact and bigints beyond 2^53 (a uint64 counter stays exact)', () => {
    const root = resolve(__dirname, '../../../..');
    const script = [
      'import sys',
      'from synoptic_schemas.codec import encode',
      "vals = [2**64 - 1, 2**53 - 1, 2**53 + 1, -2**63, 2**40, -5]",
      "msg = {'op': 'upd', 'sid': 2, 'i': list(range(len(vals))), 'val': [",
      "  {'ver': 1, 'v': v, 't': 1700000000123456789, 'sev': 0, 'st': '', 'seq': 1, 'ep': 1, 'c': True} for v in vals]}",
      'sys.stdout.buffer.write(encode(msg))',
    ].join('\n');
    const frame = decodeFrame(new Uint8Array(execFileSync(resolve(root, '.venv/bin/python'), ['-c', script]))) as UpdFrame;
    expect(frame.val.map((m) => m.v)).toEqual([18446744073709551615n, 9007199254740991, 9007199254740993n, -9223372036854775808n, 2 ** 40, -5]);
  });
});

describe('frames', () => {
  it('round-trips a client frame through msgpack', () => {
    const bytes = encodeFrame({ op: 'sub', id: 3, ch: ['ca://A'] });
    expect(decodeFrame(bytes)).toEqual({ op: 'sub', id: 3, ch: ['ca://A'] });
  });

  it('refuses a frame that is not a map with an op', () => {
    expect(() => decodeFrame(new Encoder().encode([1, 2]))).toThrow(/op/);
  });

  it('turns JSON-mode typed arrays into typed arrays', () => {
    const b64 = btoa(String.fromCharCode(...new Uint8Array(new Float64Array([1, 2]).buffer)));
    const frame = decodeJsonFrame(JSON.stringify({ op: 'upd', sid: 1, i: [0], val: [{ v: { dtype: 'f8', shape: [2], b64 }, t: 0, sev: 0, c: true }] })) as UpdFrame;
    const arr = frame.val[0].v as { data: Float64Array };
    expect(Array.from(arr.data)).toEqual([1, 2]);
  });
});

describe('decoder warm-up', () => {
  it('leaves the decoder as it was: frames decode the same after it, 64-bit integers included', () => {
    const bytes = new Encoder({ useBigInt64: true }).encode({ op: 'upd', sid: 1, i: [0, 1], val: [{ v: 18446744073709551615n, t: 1700000000000000000n, sev: 0, c: true }, { v: 1.5, t: 5, sev: 1, c: true }] });
    const before = decodeFrame(bytes);
    warmDecoder(16, 2);
    expect(decodeFrame(bytes)).toEqual(before);
    expect((before as UpdFrame).val[0].v).toBe(18446744073709551615n);
  });
});
