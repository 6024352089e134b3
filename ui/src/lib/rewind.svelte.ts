/**
 * The time control of a screen (docs/protocol.md, Rewind): live (the default) or
 * a moment, stepped, or played back at a speed. While not live every channel the
 * tab subscribes shows its value and metadata of the moment in place of the
 * live ones (`ChannelState.showPast`), and writes are off (`gateway.rewound`).
 * The live subscriptions stay open meanwhile: back to live is immediate. Channels
 * subscribed while a moment is shown (the widgets of a screen opened at a link's
 * moment, a tab shown later) are asked for at that moment too. Arrays and images
 * are asked for at the points their widgets draw (the `pts` of the live
 * subscriptions), so they come reduced as live ones do; a widget that asks for
 * other points (resized, zoomed in) gets its channel asked again at them.
 */
import { getContext, setContext } from 'svelte';
import type { Gateway } from './transport/gateway.svelte';
import type { AtFrame, MetaMsg, PbFrame } from './transport/protocol';

/** The speeds a playback offers (times real time). */
export const SPEEDS = [1, 10, 60] as const;

export class TimeMachine {
  /** the moment shown (ms since the epoch), or null: live */
  moment = $state<number | null>(null);
  /** the speed of the playback running, or null */
  speed = $state<number | null>(null);
  /** why the last request failed, or null */
  error = $state<string | null>(null);
  /** channels with no value kept at the moment, and the oldest moment one of them reaches back to */
  notKept = $state(0);
  since = $state<number | null>(null);
  /** an answer is on its way */
  loading = $state(false);
  readonly #gateway: Gateway;
  /** the playback running (the id of its `at` answer) */
  #play: number | null = null;
  /** the channels and metadata of the playback running, by index */
  #playing: { uris: string[]; metas: (MetaMsg | null)[] } | null = null;
  #seq = 0;
  /** channels asked for at the moment shown (by the request that showed it, or since), and the points asked of each */
  #asked = new Map<string, number | undefined>();
  /** channels subscribed since, not asked for yet */
  #late = new Set<string>();
  readonly #unlisten: () => void;

  constructor(gateway: Gateway) {
    this.#gateway = gateway;
    this.#unlisten = gateway.onSubscribe((uris) => this.#subscribed(uris));
  }

  /** The screen goes: live again, and no longer told of subscriptions. */
  close(): void {
    this.#unlisten();
    this.goLive();
  }

  get live(): boolean {
    return this.moment === null;
  }

  /** Show the moment `t` (ms); a moment from now on is live. */
  async goTo(t: number): Promise<void> {
    if (t >= Date.now()) return this.goLive();
    this.#halt();
    const seq = ++this.#seq;
    this.moment = t;
    this.#gateway.rewound = true;
    this.loading = true;
    const uris = this.#gateway.subscribedUris();
    const pts = this.#ask(uris, true);
    try {
      const answer = await this.#gateway.at(uris, t, pts);
      if (seq === this.#seq) this.#show(answer);
    } catch (e) {
      if (seq === this.#seq) this.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }

  /** Move the moment by `ms` (from now when live). */
  stepBy(ms: number): Promise<void> {
    return this.goTo((this.moment ?? Date.now()) + ms);
  }

  /** Go to the previous (`dir` -1) or next (1) change of `uri`. */
  async stepChange(uri: string, dir: -1 | 1): Promise<void> {
    try {
      const t = await this.#gateway.step(uri, this.moment ?? Date.now(), dir);
      if (t === null) this.error = `no ${dir < 0 ? 'earlier' : 'later'} change of ${uri} kept`;
      else await this.goTo(t);
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
    }
  }

  /** Play back from the moment shown (a minute ago when live) at `speed`. */
  async play(speed: number): Promise<void> {
    const from = this.moment ?? Date.now() - 60_000;
    this.#halt();
    const seq = ++this.#seq;
    const uris = this.#gateway.subscribedUris();
    const pts = this.#ask(uris, true);
    this.moment = from;
    this.speed = speed;
    this.#gateway.rewound = true;
    this.loading = true;
    try {
      const answer = await this.#gateway.play(uris, from, speed, (f) => seq === this.#seq && this.#frame(f), pts);
      if (seq !== this.#seq) return this.#gateway.halt(answer.id);
      this.#play = answer.id;
      this.#playing = { uris: answer.ch, metas: answer.meta.slice() };
      this.#show(answer);
    } catch (e) {
      if (seq === this.#seq) {
        this.error = e instanceof Error ? e.message : String(e);
        this.speed = null;
      }
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }

  /** Stop a playback where it is. */
  pause(): void {
    this.#seq++;
    this.#halt();
  }

  /** Back to live values (every channel repainted with its live value now). */
  goLive(): void {
    this.#seq++;
    this.#halt();
    this.moment = null;
    this.error = null;
    this.notKept = 0;
    this.since = null;
    this.loading = false;
    for (const ch of this.#gateway.channels.values()) ch.showLive();
    this.#gateway.rewound = false;
  }

  /** The points to ask of `uris` (those drawn reduced), noted as asked (`all`: in place of every channel asked so far). */
  #ask(uris: string[], all = false): Record<string, number> {
    const drawn = this.#gateway.subscribedPoints();
    const pts: Record<string, number> = {};
    if (all) this.#asked = new Map();
    for (const u of uris) {
      if (drawn[u] !== undefined) pts[u] = drawn[u];
      this.#asked.set(u, drawn[u]);
    }
    return pts;
  }

  /**
   * New subscriptions while a moment is shown: asked for at it (together, once the widgets
   * mounting now are in); a channel asked for already, again only if its points changed.
   */
  #subscribed(uris: string[]): void {
    if (this.moment === null) return;
    const first = this.#late.size === 0;
    const drawn = this.#gateway.subscribedPoints();
    for (const u of uris) if (!this.#asked.has(u) || this.#asked.get(u) !== drawn[u]) this.#late.add(u);
    if (!this.#late.size) return; // a widget subscribing again at the same points: shown already
    if (first) setTimeout(() => void this.#catchUp(), 0);
  }

  async #catchUp(): Promise<void> {
    const uris = [...this.#late];
    this.#late.clear();
    const t = this.moment;
    if (t === null || !uris.length) return;
    // (during a playback: the moment it shows now, until the next play)
    const pts = this.#ask(uris);
    const seq = this.#seq;
    try {
      const answer = await this.#gateway.at(uris, t, pts);
      if (seq === this.#seq) this.#show(answer, true);
    } catch (e) {
      if (seq === this.#seq) this.error = e instanceof Error ? e.message : String(e);
    }
  }

  #halt(): void {
    if (this.#play !== null) this.#gateway.halt(this.#play);
    this.#play = null;
    this.#playing = null;
    this.speed = null;
  }

  /** Show an `at` answer: every channel of the screen, or (`more`) channels added to those shown. */
  #show(answer: AtFrame, more = false): void {
    if (!more) this.error = null;
    let notKept = more ? this.notKept : 0;
    let since: number | null = more ? this.since : null;
    answer.ch.forEach((uri, k) => {
      const err = answer.err[k];
      if (err?.code === 'not_kept') {
        notKept++;
        if (err.since != null) since = since === null ? err.since : Math.min(since, err.since);
      }
      this.#gateway.channel(uri).showPast(answer.val[k] ?? null, answer.meta[k] ?? null);
    });
    this.notKept = notKept;
    this.since = since;
  }

  #frame(f: PbFrame): void {
    const playing = this.#playing;
    if (f.end) {
      this.#play = null;
      this.#playing = null;
      this.speed = null;
      if (f.end === 'now') this.goLive();
      else if (f.end === 'error') this.error = f.msg ?? 'the playback failed';
      return;
    }
    if (!playing) return;
    this.moment = f.t;
    (f.mi ?? []).forEach((k, j) => (playing.metas[k] = f.meta?.[j] ?? null));
    f.i.forEach((k, j) => this.#gateway.channel(playing.uris[k]).showPast(f.val[j] ?? null, playing.metas[k]));
    for (const k of f.mi ?? []) {
      if (!f.i.includes(k)) {
        const ch = this.#gateway.channel(playing.uris[k]);
        ch.showPast(ch.current, playing.metas[k]);
      }
    }
  }
}

const TIME = Symbol('time');

/** Make `time` the time control of the widgets below (trends). */
export function setTime(time: TimeMachine): void {
  setContext(TIME, time);
}

/** The screen's time control, if the widget is on a screen that has one. */
export function getTime(): TimeMachine | undefined {
  return getContext<TimeMachine | undefined>(TIME);
}

/** `?at=` of a screen's link: ISO 8601 or ms since the epoch; null when absent or unreadable. */
export function parseAt(query: string): number | null {
  const at = new URLSearchParams(query).get('at');
  if (!at) return null;
  const t = /^\d+(\.\d+)?$/.test(at) ? Number(at) : Date.parse(at);
  return Number.isFinite(t) ? t : null;
}

/** `query` with `at` set to the moment `t` (ISO 8601, ms), or removed for live. */
export function withAt(query: string, t: number | null): string {
  const params = new URLSearchParams(query);
  if (t === null) params.delete('at');
  else params.set('at', new Date(t).toISOString());
  return params.toString();
}
