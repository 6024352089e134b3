// Fan-out, distinct screens: V viewers each watch their OWN screen of C channels at
// R Hz (the screens overlap in channels but no two are the same set), so every
// socket is its own gateway group: this measures per-group encode + send cost.
// Wire format: msgpack (what browsers use), see fanout.js.
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';
import exec from 'k6/execution';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    fanout_distinct: {
      executor: 'per-vu-iterations',
      vus: plan.vus,
      iterations: 1,
      maxDuration: `${plan.duration_s + 30}s`,
      gracefulStop: '10s',
    },
  },
  thresholds: {
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
  const screen = plan.screens[(exec.vu.idInTest - 1) % plan.screens.length];
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens: [screen],
    holdMs: plan.duration_s * 1000,
    churnMs: 0,
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
  });
}
