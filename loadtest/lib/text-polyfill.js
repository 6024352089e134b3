// Minimal UTF-8 TextEncoder/TextDecoder for k6, whose JavaScript runtime has neither.
// @msgpack/msgpack creates a shared TextEncoder and TextDecoder when its module is
// evaluated, so this file must be imported before it (see msgpack-entry.js).

function encodeUtf8(str) {
  const out = [];
  for (let i = 0; i < str.length; i++) {
    let code = str.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < str.length) {
      const low = str.charCodeAt(i + 1);
      if ((low & 0xfc00) === 0xdc00) {
        code = ((code & 0x3ff) << 10) + (low & 0x3ff) + 0x10000;
        i++;
      }
    }
    if (code < 0x80) {
      out.push(code);
    } else if (code < 0x800) {
      out.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      out.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 0x3f),
        0x80 | ((code >> 6) & 0x3f),
        0x80 | (code & 0x3f),
      );
    }
  }
  return new Uint8Array(out);
}

function decodeUtf8(bytes) {
  let result = '';
  let i = 0;
  while (i < bytes.length) {
    const b1 = bytes[i++];
    let code;
    if (b1 < 0x80) {
      code = b1;
    } else if ((b1 & 0xe0) === 0xc0) {
      code = ((b1 & 0x1f) << 6) | (bytes[i++] & 0x3f);
    } else if ((b1 & 0xf0) === 0xe0) {
      code = ((b1 & 0x0f) << 12) | ((bytes[i++] & 0x3f) << 6) | (bytes[i++] & 0x3f);
    } else {
      code =
        ((b1 & 0x07) << 18) |
        ((bytes[i++] & 0x3f) << 12) |
        ((bytes[i++] & 0x3f) << 6) |
        (bytes[i++] & 0x3f);
    }
    if (code > 0xffff) {
      code -= 0x10000;
      result += String.fromCharCode(0xd800 + (code >> 10), 0xdc00 + (code & 0x3ff));
    } else {
      result += String.fromCharCode(code);
    }
  }
  return result;
}

class Utf8Encoder {
  get encoding() {
    return 'utf-8';
  }
  encode(str) {
    return encodeUtf8(String(str === undefined ? '' : str));
  }
  encodeInto(str, dest) {
    const bytes = encodeUtf8(String(str));
    const written = Math.min(bytes.length, dest.length);
    dest.set(bytes.subarray(0, written));
    return { read: str.length, written };
  }
}

class Utf8Decoder {
  get encoding() {
    return 'utf-8';
  }
  decode(input) {
    if (input === undefined) return '';
    const bytes =
      input instanceof Uint8Array
        ? input
        : ArrayBuffer.isView(input)
          ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
          : new Uint8Array(input);
    return decodeUtf8(bytes);
  }
}

if (typeof globalThis.TextEncoder === 'undefined') globalThis.TextEncoder = Utf8Encoder;
if (typeof globalThis.TextDecoder === 'undefined') globalThis.TextDecoder = Utf8Decoder;
