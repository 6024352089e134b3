// Waveform viewers: V viewers watch a screen of array channels (the synthetic
// publisher's f8 waveforms, `waveform_points` each) at R Hz, asking for at most
// `pts` points each (sub.pts: the gateway sends a min/max envelope), or the full
// arrays with pts 0. The report gives the bytes per second per viewer
// (`bytes_per_s_per_viewer`, from k6's data_received): run it with --pts 0 and
// --pts 1024 to compare (docs/benchmarks.md, "Load tests").
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats, snapshotGapThresholds } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();

export const options = {
  summaryTrendStats,
  scenarios: {
    waveform: {
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
    pts: plan.pts,
  });
}
