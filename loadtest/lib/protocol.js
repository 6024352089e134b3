// The gateway ⇄ browser protocol as the load generator speaks it (docs/protocol.md):
// frame builders for client → server ops and one decoder per wire format.
// Binary msgpack is the default; `?format=json` gives JSON text frames, cheaper to
// decode in k6 (see docs/decisions/0008-load-test-kit.md for when each is used).
import { Decoder, Encoder } from '../bin/msgpack.js';

const decoder = new Decoder();
const encoder = new Encoder();

export const FORMATS = ['msgpack', 'json'];

/** The WebSocket URL of a gateway base URL for a wire format. */
export function wsUrl(base, format) {
  const url = base.replace(/^http/, 'ws').replace(/\/+$/, '');
  const path = url.endsWith('/ws') ? url : `${url}/ws`;
  return format === 'json' ? `${path}?format=json` : path;
}

/** A codec: `encode(frame)` gives what `ws.send` takes, `decode(data)` the frame. */
export function codec(format) {
  if (format === 'json') {
    return {
      encode: (frame) => JSON.stringify(frame),
      decode: (data) => JSON.parse(typeof data === 'string' ? data : String(data)),
    };
  }
  return {
    encode: (frame) => {
      const bytes = encoder.encode(frame);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
    decode: (data) => decoder.decode(new Uint8Array(data)),
  };
}

/** A `sub`; `pts` > 0 asks for every channel's arrays at most that many points (sub.pts). */
export const sub = (id, channels, pts = 0) =>
  pts > 0 ? { op: 'sub', id, ch: channels, pts: Object.fromEntries(channels.map((u) => [u, pts])) } : { op: 'sub', id, ch: channels };
export const unsub = (id, sid) => ({ op: 'unsub', id, sid });
export const ping = (id) => ({ op: 'ping', id });
