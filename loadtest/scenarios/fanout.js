// Fan-out, shared screen: V viewers watch ONE screen of C channels updating at R Hz.
// All sockets fall into one gateway group, so each batch is encoded once and sent V
// times: this measures the gateway's per-socket send cost.
// Wire format: msgpack (what browsers use). The decode cost in k6 is budgeted in
// docs/capacity.md; use FORMAT=json (LT plan "format") where k6 becomes the limit.
import { loadPlan } from '../lib/plan.js';
import { deliveryThresholds, perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('fanout', plan, {
  // pass/fail contract: every viewer sees every update, promptly, without errors
  ...deliveryThresholds(plan),
  update_regressions: ['count==0'],
  update_latency_ms: ['p(95)<250', 'p(99)<1000'],
  screen_open_ms: ['p(95)<2000'],
  screens_opened: [`count>=${plan.vus}`],
});

export default function () {
  watch(plan, [plan.screens[0]]);
}
