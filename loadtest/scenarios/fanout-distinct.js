// Fan-out, distinct screens: V viewers each watch their OWN screen of C channels at
// R Hz (the screens overlap in channels but no two are the same set), so every
// socket is its own gateway group: this measures per-group encode + send cost.
// Wire format: msgpack (what browsers use), see fanout.js.
import exec from 'k6/execution';
import { loadPlan } from '../lib/plan.js';
import { deliveryThresholds, perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('fanout_distinct', plan, {
  ...deliveryThresholds(plan),
  update_regressions: ['count==0'],
  update_latency_ms: ['p(95)<250', 'p(99)<1000'],
  screen_open_ms: ['p(95)<2000'],
  screens_opened: [`count>=${plan.vus}`],
});

export default function () {
  watch(plan, [plan.screens[(exec.vu.idInTest - 1) % plan.screens.length]]);
}
