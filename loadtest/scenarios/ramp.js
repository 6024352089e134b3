// Ramp to the breaking point: viewers of one shared screen are added linearly from
// 1 to V over the run; each stays until the end. The orchestrator finds the first
// time window where delivery or latency fails and reports the viewer count then.
// Wire format: JSON (plan "format", default json for this scenario): JSON.parse runs
// in Go inside k6 and costs the generator less per frame than the JS msgpack
// decoder, so the gateway, not k6, is what breaks first.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { viewer } from '../lib/viewer.js';
import { gatewayFor, loadPlan, scenarioStart, summaryTrendStats } from '../lib/plan.js';

export { handleSummary } from '../lib/plan.js';

const plan = loadPlan();
const rampMs = plan.duration_s * 1000;

export const options = {
  summaryTrendStats,
  scenarios: {
    ramp: {
      executor: 'ramping-vus',
      startVUs: 1,
      stages: [{ duration: `${plan.duration_s}s`, target: plan.vus }],
      gracefulRampDown: '0s',
      gracefulStop: '10s',
    },
  },
  thresholds: {
    // the ramp is meant to fail at the end: these say where the contract held
    updates: ['count>0'],
    protocol_errors: ['count==0'],
    update_latency_ms: ['p(95)<1000'],
  },
};

export default function () {
  const startedAt = scenarioStart();
  const left = rampMs - (Date.now() - startedAt);
  if (left < 500 || exec.vu.iterationInScenario > 0) {
    // a VU runs one viewer; a later iteration only idles until the ramp ends
    if (left > 0) sleep(left / 1000);
    return;
  }
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens: [plan.screens[0]],
    holdMs: left,
    churnMs: 0,
    startedAt,
    windowMs: plan.window_ms,
  });
}
