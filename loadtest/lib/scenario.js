// What the one-viewer-per-VU scenarios share: their k6 options (one iteration per
// VU for the run), the delivery contract, and one viewer holding its screens.
import { viewer } from './viewer.js';
import { gatewayFor, scenarioStart, snapshotGapThresholds, summaryTrendStats } from './plan.js';

/**
 * k6 options for a scenario named `name`: `plan.vus` VUs run one viewer each for
 * `plan.duration_s` (plus `extraS` seconds, e.g. a storm's spread), under `thresholds`.
 */
export function perViewerOptions(name, plan, thresholds, extraS = 0) {
  return {
    summaryTrendStats,
    scenarios: {
      [name]: {
        executor: 'per-vu-iterations',
        vus: plan.vus,
        iterations: 1,
        maxDuration: `${extraS + plan.duration_s + 30}s`,
        gracefulStop: '10s',
      },
    },
    thresholds,
  };
}

/**
 * The delivery contract: updates arrive, with no gap (live or after the snapshot),
 * no protocol error and no unexpected close. `tag` (e.g. '{role:healthy}') narrows
 * the per-viewer metrics to one kind of viewer.
 */
export function deliveryThresholds(plan, tag = '') {
  return {
    [`updates${tag}`]: ['count>0'],
    [`update_gaps${tag}`]: ['count==0'],
    [`snapshot_gaps${tag}`]: snapshotGapThresholds(plan),
    protocol_errors: ['count==0'],
    unexpected_closes: ['count==0'],
  };
}

/** One viewer on this VU's gateway holding `screens` for the run; `extra` adds or overrides viewer options. */
export function watch(plan, screens, extra = {}) {
  viewer({
    url: gatewayFor(plan),
    format: plan.format,
    screens,
    holdMs: plan.duration_s * 1000,
    churnMs: 0,
    startedAt: scenarioStart(),
    windowMs: plan.window_ms,
    ...extra,
  });
}
