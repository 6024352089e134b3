// Custom k6 metrics every scenario reports (names are the pass/fail vocabulary of
// the thresholds and of loadtest/kit/report.py). Counters are added once per frame,
// never per update, to keep k6's own CPU per frame low.
import { Counter, Trend } from 'k6/metrics';

/** Value updates delivered (entries of `upd` frames). */
export const updates = new Counter('updates');
/** `upd` frames received. */
export const frames = new Counter('upd_frames');
/** Updates missing by (ep, seq): seq jumped by more than one within one epoch,
 * between two live updates of a channel (steady state: the contract is 0). */
export const gaps = new Counter('update_gaps');
/** The same, but on a channel's first live update after its snapshot: the window
 * between a new NATS subscription and the last-value read (a value published just
 * before the subscription and not yet readable from the store, e.g. from a lagging
 * R3 replica). Reported separately; see docs/protocol.md and the gateway issue. */
export const snapshotGaps = new Counter('snapshot_gaps');
/** Updates whose seq did not advance within one epoch (replay or reordering). */
export const regressions = new Counter('update_regressions');
/** Age of the oldest update of each frame at receipt: receive time − source `t`. */
export const latency = new Trend('update_latency_ms', true);
/** Socket creation → snapshot + first value of every channel of the screen. */
export const screenOpen = new Trend('screen_open_ms', true);
/** Protocol `err` frames, socket errors and failed opens. */
export const errors = new Counter('protocol_errors');
/** Socket closes by code (tag `code`) that the client did not ask for. */
export const unexpectedCloses = new Counter('unexpected_closes');
/** `stats` frames: updates the gateway conflated away for a slow socket. */
export const missed = new Counter('missed_updates');
/** Screens whose snapshot arrived. */
export const screensOpened = new Counter('screens_opened');
/** Unsolicited snapshots (after `bus` up, or after a slow socket caught up). */
export const resnaps = new Counter('resnaps');
/** Subscriptions acknowledged then unsubscribed (churn). */
export const unsubscribed = new Counter('screens_closed');

/** Latency per time window, so the report can plot percentiles over time. */
export const WINDOWS = 60;
const windowTrends = [];
for (let k = 0; k < WINDOWS; k++) windowTrends.push(new Trend(`lat_w${k}`, true));

/** Add a latency sample to the overall trend and to its time window's trend. */
export function addLatency(ms, elapsedMs, windowMs, tags) {
  latency.add(ms, tags);
  const k = Math.min(WINDOWS - 1, Math.max(0, Math.floor(elapsedMs / windowMs)));
  windowTrends[k].add(ms);
}
