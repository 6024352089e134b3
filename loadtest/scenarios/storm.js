// Connect storm: V viewers open the same screen within `storm_s` seconds (all VUs
// start at once and each waits a random fraction of storm_s), hold it briefly and
// leave. The contract is the screen-open time under storm (socket created →
// snapshot + a value for every channel), the seed's "a screen in < 2 s".
// Wire format: JSON. k6 decodes a 100-channel msgpack snapshot with the library in
// ~15 ms of interpreted JavaScript; 100 of them in a burst would make the generator,
// not the gateway, what the screen-open time measures (JSON.parse runs in Go).
// The source runs in phase at 1 Hz by default: the storm is about opening screens.
import { sleep } from 'k6';
import { loadPlan, snapshotGapThresholds } from '../lib/plan.js';
import { perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions(
  'storm',
  plan,
  {
    screen_open_ms: ['p(95)<2000', 'max<5000'],
    screens_opened: [`count>=${plan.vus}`],
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
    update_gaps: ['count==0'],
    snapshot_gaps: snapshotGapThresholds(plan),
  },
  plan.storm_s,
);

export default function () {
  sleep(Math.random() * plan.storm_s);
  watch(plan, [plan.screens[0]]);
}
