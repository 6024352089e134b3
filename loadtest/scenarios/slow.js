// Slow consumers mixed with healthy ones: the orchestrator starts `slow` sockets
// (loadtest/kit/slowclient.py: real sockets behind slow links that take only
// `slow_read_bps` bytes/s, so TCP back-pressure reaches the gateway — k6 itself always reads
// at once and queues internally, so it cannot play a slow consumer), on the same
// screen as the V healthy k6 viewers. Contract: the healthy viewers see no gap and
// no added latency; what happened to the slow ones (conflation stats, close codes)
// is in the report.
// Wire format: msgpack, as a browser.
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    healthy: {
      executor: 'per-vu-iterations',
      vus: plan.vus,
      iterations: 1,
      maxDuration: `${plan.duration_s + 30}s`,
      gracefulStop: '10s',
    },
  },
  thresholds: {
    'updates{role:healthy}': ['count>0'],
    'update_gaps{role:healthy}': ['count==0'],
    'snapshot_gaps{role:healthy}': snapshotGapThresholds(plan),
    'update_latency_ms{role:healthy}': ['p(95)<250', 'p(99)<1000'],
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
  },
};

export default function () {
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens: [plan.screens[0]],
    holdMs: plan.duration_s * 1000,
    churnMs: 0,
    role: 'healthy',
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
  });
}
