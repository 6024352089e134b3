/**
 * Per-channel state. Values arrive many times a frame; the latest is kept in
 * `pending` and made visible once per animation frame by `commit()`, so each
 * widget re-renders at most once a frame. Readers are tracked with
 * `createSubscriber`: a channel costs nothing reactive while nothing shows it.
 */
import { createSubscriber } from 'svelte/reactivity';
import type { MetaMsg, ValueMsg } from './protocol';

/** Whether the gateway connection currently delivers fresh values. */
export interface Liveness {
  readonly isLive: boolean;
}

/** One (time, value) sample of a channel's scalar history, time in ms since the epoch. */
export type Sample = [number, number];

export class ChannelState {
  readonly uri: string;
  #value: ValueMsg | null = null;
  #meta: MetaMsg | null = null;
  /** set by a snapshot; cleared when the connection goes */
  #fresh = false;
  #pendingValue: ValueMsg | null = null;
  #hasPending = false;
  #history: Sample[] | null = null;
  #historyMs = 0;
  #historyUsers = 0;
  #notify: (() => void) | undefined;
  #subscribe: () => void;
  #live: Liveness;
  /** updates received since the page opened */
  received = 0;

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

  /** The latest committed value message, or null before the first one. */
  get value(): ValueMsg | null {
    this.#subscribe();
    return this.#value;
  }

  /** The latest metadata, or null before the first. */
  get meta(): MetaMsg | null {
    this.#subscribe();
    return this.#meta;
  }

  /** True when the value must not be read as live: no fresh snapshot, connection not live, or source disconnected. */
  get stale(): boolean {
    this.#subscribe();
    return !this.#live.isLive || !this.#fresh || this.#value === null;
  }

  /** True when the source reported itself disconnected. */
  get disconnected(): boolean {
    this.#subscribe();
    return this.#value !== null && this.#value.c === false;
  }

  /** Scalar history (rolling, only while a trend keeps it); read with `value` for reactivity. */
  get history(): readonly Sample[] {
    this.#subscribe();
    return this.#history ?? [];
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

  /** Record a value from a snapshot (replaces everything, marks fresh). Returns true when a commit is needed. */
  snapshot(value: ValueMsg | null, meta: MetaMsg | null): void {
    this.#fresh = true;
    if (meta) this.#meta = meta;
    this.#pendingValue = value;
    this.#hasPending = true;
    if (value) this.#record(value);
  }

  /** Record an update; visible after the next `commit()`. */
  receive(value: ValueMsg): void {
    this.received++;
    this.#pendingValue = value;
    this.#hasPending = true;
    this.#record(value);
  }

  /** Record new metadata; visible after the next `commit()`. */
  receiveMeta(meta: MetaMsg): void {
    this.#meta = meta;
    this.#hasPending = true;
  }

  /** The connection went: everything shown is stale until the next snapshot. */
  markStale(): void {
    this.#fresh = false;
    this.#notify?.();
  }

  /** Publish what arrived since the last frame to the widgets reading this channel; returns its source time (ns) or 0. */
  commit(): number {
    if (this.#hasPending) {
      this.#value = this.#pendingValue;
      this.#hasPending = false;
    }
    this.#notify?.();
    return this.#value?.t ?? 0;
  }

  #record(value: ValueMsg): void {
    const history = this.#history;
    if (!history || typeof value.v !== 'number') return;
    const t = value.t ? value.t / 1e6 : Date.now();
    history.push([t, value.v]);
    const cutoff = t - this.#historyMs;
    if (history.length > 64 && history[0][0] < cutoff) {
      let drop = 0;
      while (drop < history.length && history[drop][0] < cutoff) drop++;
      history.splice(0, drop);
    }
  }
}
