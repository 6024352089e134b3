/**
 * Per-channel state. Values arrive many times a frame; the latest is kept in
 * `pending` and made visible once per animation frame by `commit()`, so each
 * widget re-renders at most once a frame.
 *
 * Two kinds of readers:
 * - painters (`watch`): plain functions that update the DOM directly, called by
 *   `commit()` with no reactivity in between (labels and LEDs: the hot path of a
 *   screen of thousands of values);
 * - Svelte components reading the tracked getters (`value`, `meta`, `stale`, …),
 *   notified through `createSubscriber`: a channel costs nothing reactive while
 *   no component reads it.
 *
 * Staleness: a value is stale (never shown as live) while the connection is not
 * live, before the first snapshot of this connection, and while its source is
 * down (liveness frames of docs/protocol.md: from `src` `up:false` or `snap.stale`
 * until an `upd` with a value for it or `src` `up:true`).
 */
import { untrack } from 'svelte';
import { createSubscriber } from 'svelte/reactivity';
import type { MetaMsg, ValueMsg } from './protocol';

/** Whether the gateway connection currently delivers fresh values. */
export interface Liveness {
  readonly isLive: boolean;
}

/** One (time, value) sample of a channel's scalar history, time in ms since the epoch. */
export type Sample = [number, number];

/** Updates the DOM from a channel's committed state (`ch.current`, `ch.currentMeta`, `ch.isStale`). */
export type Painter = (ch: ChannelState) => void;

export class ChannelState {
  readonly uri: string;
  #value: ValueMsg | null = null;
  #meta: MetaMsg | null = null;
  /** set by a snapshot; cleared when the connection goes */
  #fresh = false;
  /** the gateway says no adapter feeds this channel (liveness) */
  #sourceDown = false;
  #pendingValue: ValueMsg | null = null;
  #hasPending = false;
  #history: Sample[] | null = null;
  #historyMs = 0;
  #historyUsers = 0;
  #painters: Painter[] = [];
  /** what a rewound screen shows in place of the live value and metadata */
  #past: { value: ValueMsg | null; meta: MetaMsg | null } | null = null;
  #notify: (() => void) | undefined;
  #subscribe: () => void;
  #live: Liveness;
  /** updates received since the page opened */
  received = 0;
  /** queued for the next commit (the gateway's dirty list) */
  queued = false;
  /** receipt time (performance.now()) of the oldest update not yet committed, 0 when none */
  pendingSince = 0;

  constructor(uri: string, live: Liveness) {
    this.uri = uri;
    this.#live = live;
    this.#subscribe = createSubscriber((update) => {
      this.#notify = update;
      return () => {
        this.#notify = undefined;
      };
    });
  }

  /** The latest committed value message, or null before the first one (tracked). */
  get value(): ValueMsg | null {
    this.#subscribe();
    return this.#past ? this.#past.value : this.#value;
  }

  /** The latest metadata, or null before the first (tracked). */
  get meta(): MetaMsg | null {
    this.#subscribe();
    return this.#past ? this.#past.meta : this.#meta;
  }

  /** True when the value must not be read as live (tracked); see the module comment. */
  get stale(): boolean {
    this.#subscribe();
    return this.isStale;
  }

  /** True when the source reported itself disconnected (tracked). */
  get disconnected(): boolean {
    this.#subscribe();
    const value = this.#past ? this.#past.value : this.#value;
    return value !== null && value.c === false;
  }

  /** The latest committed value, untracked (for painters). */
  get current(): ValueMsg | null {
    return this.#past ? this.#past.value : this.#value;
  }

  /** The latest metadata, untracked (for painters). */
  get currentMeta(): MetaMsg | null {
    return this.#past ? this.#past.meta : this.#meta;
  }

  /** `stale`, untracked (for painters). */
  get isStale(): boolean {
    if (this.#past) return this.#past.value === null; // the past as it was shown: only "not kept" is stale
    return !this.#live.isLive || !this.#fresh || this.#value === null || this.#sourceDown;
  }

  /** True while the gateway reports that no live adapter feeds this channel (untracked). */
  get sourceDown(): boolean {
    return this.#sourceDown;
  }

  /** Scalar history (rolling, only while a trend keeps it); read with `value` for reactivity. */
  get history(): readonly Sample[] {
    this.#subscribe();
    return this.#history ?? [];
  }

  /** `history`, untracked (for chart redraws scheduled outside reactivity). */
  get historyNow(): readonly Sample[] {
    return this.#history ?? [];
  }

  /** Whether the channel shows a past moment (rewind) instead of live values (untracked). */
  get rewound(): boolean {
    return this.#past !== null;
  }

  /** Show `value` and `meta` as they were at a moment (rewind) in place of live ones; repainted now. */
  showPast(value: ValueMsg | null, meta: MetaMsg | null): void {
    this.#past = { value, meta };
    this.#paint();
  }

  /** Show live values again (repainted now). */
  showLive(): void {
    if (!this.#past) return;
    this.#past = null;
    this.#paint();
  }

  /** Call `painter` now and after every commit until the returned function is called. */
  watch(painter: Painter): () => void {
    this.#painters.push(painter);
    untrack(() => painter(this)); // called from an attachment: never a dependency of it
    return () => {
      const k = this.#painters.indexOf(painter);
      if (k >= 0) this.#painters.splice(k, 1);
    };
  }

  /** Keep a history of at least `windowMs`; returns the release function. */
  keepHistory(windowMs: number): () => void {
    this.#historyUsers++;
    this.#historyMs = Math.max(this.#historyMs, windowMs);
    this.#history ??= [];
    return () => {
      if (--this.#historyUsers === 0) {
        this.#history = null;
        this.#historyMs = 0;
      }
    };
  }

  /** Record a value from a snapshot (replaces everything, marks fresh); `sourceDown` from `snap.stale`. */
  snapshot(value: ValueMsg | null, meta: MetaMsg | null, sourceDown = false): void {
    this.#fresh = true;
    this.#sourceDown = sourceDown;
    if (meta) this.#meta = meta;
    this.#pendingValue = value;
    this.#hasPending = true;
    if (value) this.#record(value);
  }

  /** Record an update (it proves a live source); visible after the next `commit()`. */
  receive(value: ValueMsg): void {
    this.received++;
    this.#sourceDown = false;
    this.#pendingValue = value;
    this.#hasPending = true;
    this.#record(value);
  }

  /** Record new metadata; visible after the next `commit()`. */
  receiveMeta(meta: MetaMsg): void {
    this.#meta = meta;
  }

  /** A liveness change from a `src` frame; visible after the next `commit()`. */
  setSource(up: boolean): void {
    this.#sourceDown = !up;
  }

  /** The connection went: everything shown is stale until the next snapshot (repainted now). */
  markStale(): void {
    this.#fresh = false;
    this.#paint();
  }

  /** Publish what arrived since the last frame to the widgets showing this channel; returns its source time (ns) or 0. */
  commit(): number {
    if (this.#hasPending) {
      this.#value = this.#pendingValue;
      this.#pendingValue = null;
      this.#hasPending = false;
    }
    this.#paint();
    const t = this.#value?.t;
    return typeof t === 'number' ? t : 0;
  }

  #paint(): void {
    const painters = this.#painters;
    for (let k = 0; k < painters.length; k++) painters[k](this);
    this.#notify?.();
  }

  #record(value: ValueMsg): void {
    const history = this.#history;
    if (!history) return;
    const v = value.v;
    const y = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'boolean' ? Number(v) : null;
    if (y === null) return;
    const t = value.t ? value.t / 1e6 : Date.now();
    history.push([t, y]);
    const cutoff = t - this.#historyMs;
    if (history.length > 64 && history[0][0] < cutoff) {
      let drop = 0;
      while (drop < history.length && history[drop][0] < cutoff) drop++;
      history.splice(0, drop);
    }
  }
}
