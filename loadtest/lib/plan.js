// The run plan written by the orchestrator (loadtest/kit): gateway URLs, screens,
// durations. k6 reads it once per VU in the init context.
import exec from 'k6/execution';

/** The plan file named by $LT_PLAN (an absolute path). */
export function loadPlan() {
  if (!__ENV.LT_PLAN) throw new Error('LT_PLAN is not set: run through `make loadtest`');
  return JSON.parse(open(__ENV.LT_PLAN));
}

/** Gateway base URL for this VU: VUs are spread round-robin over the gateways. */
export function gatewayFor(plan) {
  return plan.gateways[(exec.vu.idInTest - 1) % plan.gateways.length];
}

/**
 * Threshold on gaps on a channel's first live update after its snapshot: none, on
 * one NATS node and on a cluster. The gateway's store barrier closes that window on
 * one node; on a cluster its settle read (a second store read a route hop after
 * the snapshot, ADR 0009 amendment) closes the route-propagation window too.
 */
export function snapshotGapThresholds(_plan) {
  return ['count==0'];
}

/** The options every scenario shares: trend stats and no remote summary. */
export const summaryTrendStats = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

/** Write the end-of-test summary where the orchestrator wants it. */
export function handleSummary(data) {
  const out = {};
  out[__ENV.LT_SUMMARY || 'summary.json'] = JSON.stringify(data);
  return out;
}

/** Milliseconds since the scenario started (for latency windows). */
export function scenarioStart() {
  return exec.scenario.startTime;
}
