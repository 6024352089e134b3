// Waveform viewers: V viewers watch a screen of array channels (the synthetic
// publisher's f8 waveforms, `waveform_points` each) at R Hz, asking for at most
// `pts` points each (sub.pts: the gateway sends a min/max envelope), or the full
// arrays with pts 0. The report gives the bytes per second per viewer
// (`bytes_per_s_per_viewer`, from k6's data_received): run it with --pts 0 and
// --pts 1024 to compare (docs/benchmarks.md, "Load tests").
import { loadPlan } from '../lib/plan.js';
import { deliveryThresholds, perViewerOptions, watch } from '../lib/scenario.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = perViewerOptions('waveform', plan, {
  ...deliveryThresholds(plan),
  update_regressions: ['count==0'],
  screens_opened: [`count>=${plan.vus}`],
});

export default function () {
  watch(plan, [plan.screens[0]], { pts: plan.pts });
}
