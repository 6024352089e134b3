// One counter per close code, so the end-of-test summary (which has no per-tag
// breakdown) still tells which codes closed sockets unexpectedly.
import { Counter } from 'k6/metrics';

const KNOWN = [1000, 1001, 1006, 1008, 1009, 1011, 1012, 1013];
for (let code = 4000; code < 4010; code++) KNOWN.push(code);
KNOWN.push(4401, 4500);

const counters = {};
for (const code of KNOWN) counters[code] = new Counter(`closes_${code}`);
const other = new Counter('closes_other');

/** The counter of unexpected closes with this code. */
export function closeCounter(code) {
  return counters[code] || other;
}
