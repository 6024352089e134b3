// Soak (bounded): V viewers on a few distinct screens for `duration_s`. k6 checks
// delivery; the orchestrator checks that the RSS of the gateways and adapters stays
// flat (slope over the second half of the run, see loadtest/kit/report.py).
// Wire format: JSON, to keep the generator's CPU low over a long run.
import exec from 'k6/execution';
import { loadPlan } from '../lib/plan.js';
import { deliveryThresholds, perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('soak', plan, {
  ...deliveryThresholds(plan),
  update_latency_ms: ['p(95)<250', 'p(99)<1000'],
});

export default function () {
  watch(plan, [plan.screens[(exec.vu.idInTest - 1) % plan.screens.length]]);
}
