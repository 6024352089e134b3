/**
 * Rendering at the pace of the screen: channels that changed are queued (oldest
 * first) and committed once per animation frame, within a frame budget, then the
 * components that read them render synchronously (`flushSync`).
 */
import { flushSync } from 'svelte';
import type { ChannelState } from './channel.svelte';

/** Counters and receipt-to-commit lags, read by the benchmarks. */
export class GatewayStats {
  frames = 0;
  updates = 0;
  commits = 0;
  bytes = 0;
  /** ms from the receipt of the oldest update a frame commits to the end of that commit (DOM updated), last 4096 frames */
  lags: number[] = [];
  /** ms from the oldest committed value's source timestamp to its commit, last 4096 frames */
  ages: number[] = [];
  missed = 0;
  conflated = 0;
  /** shift-form updates applied (sub.shift: a circular buffer's new samples only) */
  shifted = 0;
  /** shift-form updates whose base was not held (each may ask a fresh snapshot) */
  shiftMisses = 0;
}

/** The channels waiting for the next commit, and the commit itself. */
export class Commits {
  /** channels to commit, in the order their first uncommitted update arrived */
  #dirty: ChannelState[] = [];
  #scheduled = false;
  /** a snapshot arrived since the last commit: the next commit shows all of it, whatever the budget */
  snapPending = false;
  readonly #stats: GatewayStats;
  readonly #schedule: (cb: () => void) => void;
  readonly #budgetMs: number;

  /**
   * `schedule` runs a callback before the next paint (requestAnimationFrame);
   * `budgetMs` is the DOM work allowed per frame (0: everything every frame).
   */
  constructor(stats: GatewayStats, schedule: (cb: () => void) => void, budgetMs: number) {
    this.#stats = stats;
    this.#schedule = schedule;
    this.#budgetMs = budgetMs;
  }

  /** Queue a channel for the next commit (`now`: when its update was received). */
  touch(ch: ChannelState, now: number): void {
    if (ch.queued) return;
    ch.queued = true;
    ch.pendingSince = now;
    this.#dirty.push(ch);
  }

  /** Ask for a commit before the next paint (once, however often asked). */
  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#schedule(() => this.flush());
  }

  /**
   * Commit the channels that changed since the last frame (oldest first, within
   * the frame budget) and render the components that read them synchronously.
   */
  flush(): void {
    this.#scheduled = false;
    const dirty = this.#dirty;
    const n = dirty.length;
    if (n === 0) return;
    const start = performance.now();
    const budget = this.snapPending ? 0 : this.#budgetMs; // a screen opens in one frame
    this.snapPending = false;
    const deadline = budget > 0 ? start + budget : Infinity;
    let oldest = Infinity;
    let received = Infinity;
    let done = 0;
    while (done < n) {
      const ch = dirty[done++];
      ch.queued = false;
      if (ch.pendingSince < received) received = ch.pendingSince;
      const t = ch.commit();
      if (t > 0 && t < oldest) oldest = t;
      // look at the clock every 64 channels only
      if ((done & 63) === 0 && performance.now() > deadline) break;
    }
    if (done === n) dirty.length = 0;
    else dirty.splice(0, done);
    flushSync();
    const { lags, ages } = this.#stats;
    lags.push(performance.now() - received);
    if (oldest !== Infinity) ages.push(Date.now() - oldest / 1e6);
    if (lags.length > 4096) lags.splice(0, lags.length - 4096);
    if (ages.length > 4096) ages.splice(0, ages.length - 4096);
    this.#stats.commits++;
    if (dirty.length > 0) this.schedule();
  }
}
