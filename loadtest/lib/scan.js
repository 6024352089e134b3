// A fast path for the one frame that matters for throughput: `upd`. k6's JavaScript
// engine is an interpreter, and the general msgpack decoder costs ~100 µs per value
// map there; this scanner walks the bytes once, keeps only what the viewer measures
// (sid, i, and t/seq/ep of each value) and skips the rest by length. Any other op,
// or anything unexpected, returns null and the caller falls back to the full decoder.

const K_OP = 0x6f70; // "op"
const K_SID = 0x736964; // "sid"
const K_I = 0x69; // "i"
const K_VAL = 0x76616c; // "val"
const K_T = 0x74; // "t"
const K_SEQ = 0x736571; // "seq"
const K_EP = 0x6570; // "ep"
const UPD = 0x757064; // "upd"

/** Scanner state over one frame (reused: one per viewer). */
export class UpdScanner {
  constructor() {
    this.b = null;
    this.p = 0;
  }

  /** `{sid, i: [..], t: [..], seq: [..], ep: [..]}` of an `upd` frame, else null. */
  scan(buffer) {
    this.b = new Uint8Array(buffer);
    this.p = 0;
    const n = this.mapHeader();
    if (n < 0) return null;
    const out = { sid: -1, i: null, t: null, seq: null, ep: null };
    let isUpd = false;
    for (let k = 0; k < n; k++) {
      const key = this.keyCode();
      if (key === K_OP) {
        if (this.keyCode() !== UPD) return null;
        isUpd = true;
      } else if (key === K_SID) {
        out.sid = this.num();
      } else if (key === K_I) {
        const len = this.arrayHeader();
        if (len < 0) return null;
        const idx = new Array(len);
        for (let j = 0; j < len; j++) idx[j] = this.num();
        out.i = idx;
      } else if (key === K_VAL) {
        if (!this.values(out)) return null;
      } else {
        this.skip();
      }
    }
    return isUpd && out.i && out.t ? out : null;
  }

  values(out) {
    const len = this.arrayHeader();
    if (len < 0) return false;
    out.t = new Array(len);
    out.seq = new Array(len);
    out.ep = new Array(len);
    for (let j = 0; j < len; j++) {
      const n = this.mapHeader();
      if (n < 0) {
        this.skip(); // null or not a map: no value to account
        out.t[j] = null;
        continue;
      }
      for (let k = 0; k < n; k++) {
        const key = this.keyCode();
        if (key === K_T) out.t[j] = this.num();
        else if (key === K_SEQ) out.seq[j] = this.num();
        else if (key === K_EP) out.ep[j] = this.num();
        else this.skip();
      }
    }
    return true;
  }

  mapHeader() {
    const c = this.b[this.p];
    if (c >= 0x80 && c <= 0x8f) {
      this.p++;
      return c & 0x0f;
    }
    if (c === 0xde) {
      this.p += 3;
      return (this.b[this.p - 2] << 8) | this.b[this.p - 1];
    }
    if (c === 0xdf) {
      this.p += 5;
      return this.u32(this.p - 4);
    }
    return -1;
  }

  arrayHeader() {
    const c = this.b[this.p];
    if (c >= 0x90 && c <= 0x9f) {
      this.p++;
      return c & 0x0f;
    }
    if (c === 0xdc) {
      this.p += 3;
      return (this.b[this.p - 2] << 8) | this.b[this.p - 1];
    }
    if (c === 0xdd) {
      this.p += 5;
      return this.u32(this.p - 4);
    }
    return -1;
  }

  /** A short string as a number (its bytes, big-endian); longer strings: -1. */
  keyCode() {
    const b = this.b;
    const c = b[this.p];
    let len;
    if (c >= 0xa0 && c <= 0xbf) {
      len = c & 0x1f;
      this.p++;
    } else {
      this.skip();
      return -1;
    }
    let code = -1;
    if (len <= 3) {
      code = 0;
      for (let k = 0; k < len; k++) code = (code << 8) | b[this.p + k];
    }
    this.p += len;
    return code;
  }

  u32(at) {
    const b = this.b;
    return ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);
  }

  /** A number (int of any width or float); anything else is skipped → NaN. */
  num() {
    const b = this.b;
    const c = b[this.p];
    if (c <= 0x7f) {
      this.p++;
      return c;
    }
    if (c >= 0xe0) {
      this.p++;
      return c - 0x100;
    }
    const at = this.p + 1;
    switch (c) {
      case 0xcc:
        this.p += 2;
        return b[at];
      case 0xcd:
        this.p += 3;
        return (b[at] << 8) | b[at + 1];
      case 0xce:
        this.p += 5;
        return this.u32(at);
      case 0xcf:
        this.p += 9;
        return this.u32(at) * 4294967296 + this.u32(at + 4);
      case 0xd0:
        this.p += 2;
        return (b[at] << 24) >> 24;
      case 0xd1:
        this.p += 3;
        return (((b[at] << 8) | b[at + 1]) << 16) >> 16;
      case 0xd2:
        this.p += 5;
        return this.u32(at) | 0;
      case 0xd3:
        this.p += 9;
        return (this.u32(at) | 0) * 4294967296 + this.u32(at + 4);
      case 0xca:
      case 0xcb: {
        const size = c === 0xca ? 4 : 8;
        const view = new DataView(b.buffer, b.byteOffset + at, size);
        this.p += 1 + size;
        return size === 4 ? view.getFloat32(0) : view.getFloat64(0);
      }
      default:
        this.skip();
        return NaN;
    }
  }

  /** Skip one value of any type. */
  skip() {
    const b = this.b;
    const c = b[this.p];
    if (c <= 0x7f || c >= 0xe0 || c === 0xc0 || c === 0xc2 || c === 0xc3) {
      this.p++;
    } else if (c >= 0xa0 && c <= 0xbf) {
      this.p += 1 + (c & 0x1f);
    } else if (c >= 0x80 && c <= 0x8f) {
      this.p++;
      for (let k = 0; k < 2 * (c & 0x0f); k++) this.skip();
    } else if (c >= 0x90 && c <= 0x9f) {
      this.p++;
      for (let k = 0; k < (c & 0x0f); k++) this.skip();
    } else {
      const at = this.p + 1;
      const u16 = () => (b[at] << 8) | b[at + 1];
      switch (c) {
        case 0xcc: case 0xd0: this.p += 2; break; // prettier-ignore
        case 0xcd: case 0xd1: this.p += 3; break; // prettier-ignore
        case 0xce: case 0xd2: case 0xca: this.p += 5; break; // prettier-ignore
        case 0xcf: case 0xd3: case 0xcb: this.p += 9; break; // prettier-ignore
        case 0xd9: case 0xc4: this.p += 2 + b[at]; break; // prettier-ignore
        case 0xda: case 0xc5: this.p += 3 + u16(); break; // prettier-ignore
        case 0xdb: case 0xc6: this.p += 5 + this.u32(at); break; // prettier-ignore
        case 0xd4: this.p += 3; break; // fixext 1
        case 0xd5: this.p += 4; break;
        case 0xd6: this.p += 6; break;
        case 0xd7: this.p += 10; break;
        case 0xd8: this.p += 18; break;
        case 0xc7: this.p += 3 + b[at]; break; // ext 8
        case 0xc8: this.p += 4 + u16(); break; // ext 16
        case 0xc9: this.p += 6 + this.u32(at); break; // ext 32
        case 0xdc: {
          const n = u16();
          this.p += 3;
          for (let k = 0; k < n; k++) this.skip();
          break;
        }
        case 0xdd: {
          const n = this.u32(at);
          this.p += 5;
          for (let k = 0; k < n; k++) this.skip();
          break;
        }
        case 0xde: {
          const n = u16();
          this.p += 3;
          for (let k = 0; k < 2 * n; k++) this.skip();
          break;
        }
        case 0xdf: {
          const n = this.u32(at);
          this.p += 5;
          for (let k = 0; k < 2 * n; k++) this.skip();
          break;
        }
        default:
          throw new Error(`msgpack: bad byte 0x${c.toString(16)} at ${this.p}`);
      }
    }
  }
}
