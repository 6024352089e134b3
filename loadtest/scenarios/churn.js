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
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    churn: {
      executor: 'per-vu-iterations',
      vus: plan.vus,
      iterations: 1,
      maxDuration: `${plan.duration_s + 30}s`,
      gracefulStop: '10s',
    },
  },
  thresholds: {
    screens_opened: [`count>=${plan.vus * 2}`],
    screens_closed: ['count>0'],
    screen_open_ms: ['p(95)<1000'],
    update_gaps: ['count==0'],
    snapshot_gaps: snapshotGapThresholds(plan),
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
  },
};

export default function () {
  // each VU walks the screen pool from its own offset
  const n = plan.screens.length;
  const offset = (exec.vu.idInTest - 1) % n;
  const screens = [];
  for (let k = 0; k < n; k++) screens.push(plan.screens[(offset + k) % n]);
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens,
    holdMs: plan.duration_s * 1000,
    churnMs: plan.churn_ms,
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
  });
}
