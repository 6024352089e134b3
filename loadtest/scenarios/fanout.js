// Fan-out, shared screen: V viewers watch ONE screen of C channels updating at R Hz.
// All sockets fall into one gateway group, so each batch is encoded once and sent V
// times: this measures the gateway's per-socket send cost.
// Wire format: msgpack (what browsers use). The decode cost in k6 is budgeted in
// docs/capacity.md; use FORMAT=json (LT plan "format") where k6 becomes the limit.
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    fanout: {
      executor: 'per-vu-iterations',
      vus: plan.vus,
      iterations: 1,
      maxDuration: `${plan.duration_s + 30}s`,
      gracefulStop: '10s',
    },
  },
  thresholds: {
    // pass/fail contract: every viewer sees every update, promptly, without errors
    updates: ['count>0'],
    update_gaps: ['count==0'],
    snapshot_gaps: snapshotGapThresholds(plan),
    update_regressions: ['count==0'],
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
    update_latency_ms: ['p(95)<250', 'p(99)<1000'],
    screen_open_ms: ['p(95)<2000'],
    screens_opened: [`count>=${plan.vus}`],
  },
};

export default function () {
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens: [plan.screens[0]],
    holdMs: plan.duration_s * 1000,
    churnMs: 0,
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
  });
}
