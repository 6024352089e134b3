// Slow consumers mixed with healthy ones: the orchestrator starts `slow` sockets
// (loadtest/kit/slowclient.py: real sockets behind slow links that take only
// `slow_read_bps` bytes/s, so TCP back-pressure reaches the gateway — k6 itself always reads
// at once and queues internally, so it cannot play a slow consumer), on the same
// screen as the V healthy k6 viewers. Contract: the healthy viewers see no gap and
// no added latency; what happened to the slow ones (conflation stats, close codes)
// is in the report.
// Wire format: msgpack, as a browser.
import { loadPlan } from '../lib/plan.js';
import { deliveryThresholds, perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('healthy', plan, {
  ...deliveryThresholds(plan, '{role:healthy}'),
  'update_latency_ms{role:healthy}': ['p(95)<250', 'p(99)<1000'],
});

export default function () {
  watch(plan, [plan.screens[0]], { role: 'healthy' });
}
