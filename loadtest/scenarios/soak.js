// Soak (bounded): V viewers on a few distinct screens for `duration_s`. k6 checks
// delivery; the orchestrator checks that the RSS of the gateways and adapters stays
// flat (slope over the second half of the run, see loadtest/kit/report.py).
// Wire format: JSON, to keep the generator's CPU low over a long run.
import exec from 'k6/execution';
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    soak: {
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
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
    update_latency_ms: ['p(95)<250', 'p(99)<1000'],
  },
};

export default function () {
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens: [plan.screens[(exec.vu.idInTest - 1) % plan.screens.length]],
    holdMs: plan.duration_s * 1000,
    churnMs: 0,
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
  });
}
