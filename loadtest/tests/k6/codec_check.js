// Run by test_loadtest_codec.py: checks, inside k6's own JavaScript engine, that
// the upd scanner agrees with the full msgpack decoder on frames the Python codec
// produced, that both wire formats round-trip, and that the UTF-8 polyfill is exact.
import { check } from 'k6';
import { UpdScanner } from '../../lib/scan.js';
import { codec } from '../../lib/protocol.js';

const cases = JSON.parse(open(__ENV.LT_CASES));
const frames = cases.map((c) => ({ name: c.name, bytes: open(c.path, 'b'), upd: c.upd }));

export const options = {
  vus: 1,
  iterations: 1,
  thresholds: { checks: ['rate==1'] },
};

function expected(frame) {
  const n = frame.i.length;
  const out = { sid: frame.sid, i: frame.i, t: [], seq: [], ep: [] };
  for (let j = 0; j < n; j++) {
    const v = frame.val[j];
    out.t.push(v ? v.t : null);
    out.seq.push(v ? v.seq : null);
    out.ep.push(v ? v.ep : null);
  }
  return out;
}

export default function () {
  const mp = codec('msgpack');
  const scanner = new UpdScanner();
  for (const f of frames) {
    const full = mp.decode(f.bytes);
    const scanned = scanner.scan(f.bytes);
    if (f.upd) {
      const want = JSON.stringify(expected(full));
      const got = JSON.stringify(scanned);
      check(got, { [`${f.name}: scanner = decoder`]: (g) => g === want });
      if (got !== want) console.error(`${f.name}\n got ${got}\nwant ${want}`);
    } else {
      check(scanned, { [`${f.name}: not an upd → null`]: (s) => s === null });
    }
  }
  const text = 'ca://SR:ÄÖ–µ-𝄞 "quoted" \u0001';
  for (const format of ['msgpack', 'json']) {
    const c = codec(format);
    const back = c.decode(c.encode({ op: 'sub', id: 7, ch: [text] }));
    check(back, { [`${format} round trip`]: (b) => b.op === 'sub' && b.ch[0] === text });
  }
  const bytes = new TextEncoder().encode(text);
  check(bytes, {
    // Ä Ö – µ 𝄞 as 2, 2, 3, 2 and 4 bytes (values from Python's str.encode)
    'polyfill: UTF-8 bytes': (b) =>
      b.length === 33 &&
      [195, 132, 195, 150, 226, 128, 147, 194, 181, 45, 240, 157, 132, 158].every(
        (x, k) => b[8 + k] === x,
      ),
    'polyfill: decode(encode(s)) = s': (b) => new TextDecoder().decode(b) === text,
  });
}
