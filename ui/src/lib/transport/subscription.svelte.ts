/** One subscribed set of channels (a screen) as the gateway client keeps it. */
import type { ChannelState } from './channel.svelte';
import type { ValueMsg } from './protocol';

/** ms between two fresh snapshots asked for shift-form updates whose base is not held. */
export const RESYNC_MS = 3000;

/** One subscribed set of channels (a screen). */
export class Subscription {
  readonly uris: string[];
  /** the channel states in request order (normalised, deduplicated) */
  readonly channels: ChannelState[];
  /** null until subscribed */
  requestId: number | null = null;
  sid: number | null = null;
  /** channels by the snapshot's index */
  byIndex: ChannelState[] = [];
  ready = $state(false);
  error = $state<string | null>(null);

  /** channel -> the most points drawn of its array (`sub.pts`; docs/protocol.md) */
  readonly pts: Record<string, number> | undefined;
  /** the channels of this set that the browser serves itself (never in `uris`) */
  local: string[] = [];
  /** the last value applied per snapshot index (the base of shift-form updates) */
  held: (ValueMsg | null)[] = [];
  /** when (performance.now()) a shift miss last asked a fresh snapshot */
  resyncAt = -Infinity;

  constructor(uris: string[], channels: ChannelState[], pts?: Record<string, number>) {
    this.uris = uris;
    this.channels = channels;
    this.pts = pts;
  }
}
