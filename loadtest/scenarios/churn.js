// Churn: every viewer keeps one socket and continuously swaps screens: it opens a
// screen, waits `churn_ms` after its last channel got a value, unsubscribes and
// opens the next one (screens drawn from a pool, so groups are created and dropped
// all the time on the gateway). Contract: screens keep opening fast, no errors, no
// gaps on the screens that are open.
// Wire format: JSON. Every churn step decodes a snapshot, which the msgpack library
// does in interpreted JavaScript (~7 ms for 50 channels): with msgpack, k6 fell
// behind and the screen-open times measured its queue (p95 25 s) instead of the
// gateway (p95 70 ms with JSON on the same machine).
import exec from 'k6/execution';
import { loadPlan, snapshotGapThresholds } from '../lib/plan.js';
import { perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('churn', plan, {
  screens_opened: [`count>=${plan.vus * 2}`],
  screens_closed: ['count>0'],
  screen_open_ms: ['p(95)<1000'],
  update_gaps: ['count==0'],
  snapshot_gaps: snapshotGapThresholds(plan),
  protocol_errors: ['count==0'],
  unexpected_closes: ['count==0'],
});

export default function () {
  // each VU walks the screen pool from its own offset
  const n = plan.screens.length;
  const offset = (exec.vu.idInTest - 1) % n;
  const screens = [];
  for (let k = 0; k < n; k++) screens.push(plan.screens[(offset + k) % n]);
  watch(plan, screens, { churnMs: plan.churn_ms });
}
