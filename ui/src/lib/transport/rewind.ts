/**
 * Rewind requests (docs/protocol.md, Rewind): a screen's channels at a moment
 * (`at`), a playback from a moment (`play`, answered by `at` then `pb` frames,
 * stopped by `halt`), and a channel's previous or next change (`step`).
 */
import { normaliseUri } from './channels';
import { settleTime } from './codec';
import { nextId } from './ids';
import type { AtFrame, PbFrame } from './protocol';
import type { Link } from './requests';

type Answer<T> = (r: T | string) => void;

export class RewindRequests {
  #at = new Map<number, Answer<AtFrame>>();
  #steps = new Map<number, Answer<number | null>>();
  #plays = new Map<number, (f: PbFrame) => void>();
  readonly #link: Link;

  constructor(link: Link) {
    this.#link = link;
  }

  #ask<T>(table: Map<number, Answer<T>>, id: number, send: () => void, timeoutMs: number): Promise<T> {
    if (!this.#link.isLive()) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        table.delete(id);
        reject(new Error('no answer from the gateway'));
      }, timeoutMs);
      table.set(id, (r) => {
        clearTimeout(timer);
        if (typeof r === 'string') reject(new Error(r));
        else resolve(r);
      });
      send();
    });
  }

  /**
   * The channels' values and metadata at `t` (ms since the epoch); `pts` as a
   * subscription's (docs/protocol.md, `sub.pts`): those channels' arrays come reduced.
   */
  at(uris: string[], t: number, pts?: Record<string, number>, timeoutMs = 30_000): Promise<AtFrame> {
    const id = nextId();
    const ch = uris.map((u) => normaliseUri(u) ?? u);
    const points = pointsOf(ch, pts);
    return this.#ask(this.#at, id, () => this.#link.send(points ? { op: 'at', id, ch, t, pts: points } : { op: 'at', id, ch, t }), timeoutMs);
  }

  /**
   * Play the channels back from `t` at `speed`: resolves with the `at` answer (its
   * `id` is the playback's, for `halt`); each `pb` frame goes to `onFrame`; `pts` as `at`'s.
   */
  play(uris: string[], t: number, speed: number, onFrame: (f: PbFrame) => void, pts?: Record<string, number>, timeoutMs = 30_000): Promise<AtFrame> {
    const id = nextId();
    const ch = uris.map((u) => normaliseUri(u) ?? u);
    const points = pointsOf(ch, pts);
    this.#plays.set(id, onFrame);
    const frame = points ? { op: 'play' as const, id, ch, t, speed, pts: points } : { op: 'play' as const, id, ch, t, speed };
    const answer = this.#ask(this.#at, id, () => this.#link.send(frame), timeoutMs);
    answer.catch(() => this.#plays.delete(id));
    return answer;
  }

  /** Stop the playback `play` (its last `pb` says `halt`). */
  halt(play: number): void {
    if (this.#link.isLive()) this.#link.send({ op: 'halt', id: nextId(), play });
  }

  /** When `uri` changed last before `t` (`dir` -1) or first after it (1); null: none kept. */
  step(uri: string, t: number, dir: -1 | 1, timeoutMs = 30_000): Promise<number | null> {
    const id = nextId();
    const ch = normaliseUri(uri) ?? uri;
    return this.#ask(this.#steps, id, () => this.#link.send({ op: 'step', id, ch, t, dir }), timeoutMs);
  }

  /** An `at`, `pb` or `step` frame, or an error text for request `id` (false: none of ours). */
  answer(id: number, frame: AtFrame | PbFrame | { t: number | null; op: 'step' } | string): boolean {
    // past values' timestamps as live ones are: numbers
    if (typeof frame !== 'string' && frame.op !== 'step') for (const v of frame.val) settleTime(v);
    if (typeof frame !== 'string' && frame.op === 'pb') {
      const onFrame = this.#plays.get(id);
      if (!onFrame) return false;
      if (frame.end) this.#plays.delete(id);
      onFrame(frame);
      return true;
    }
    if (typeof frame !== 'string' && frame.op === 'step') return this.#resolve(this.#steps, id, frame.t);
    if (this.#resolve(this.#at, id, frame as AtFrame | string)) {
      if (typeof frame === 'string') this.#plays.delete(id);
      return true;
    }
    return this.#resolve(this.#steps, id, frame as string);
  }

  #resolve<T>(table: Map<number, Answer<T>>, id: number, r: T | string): boolean {
    const resolve = table.get(id);
    if (!resolve) return false;
    table.delete(id);
    resolve(r);
    return true;
  }

  /** The connection went: every request fails, every playback ends with `error`. */
  fail(why: string): void {
    for (const resolve of this.#at.values()) resolve(`disconnected: ${why}`);
    for (const resolve of this.#steps.values()) resolve(`disconnected: ${why}`);
    for (const [id, onFrame] of this.#plays) onFrame({ op: 'pb', id, t: 0, i: [], val: [], end: 'error', msg: why });
    this.#at.clear();
    this.#steps.clear();
    this.#plays.clear();
  }
}

/** `pts` (normalised) for the channels of `ch` only (the gateway refuses others); undefined when none is left. */
function pointsOf(ch: string[], pts?: Record<string, number>): Record<string, number> | undefined {
  if (!pts) return undefined;
  const asked = new Set(ch);
  const out: Record<string, number> = {};
  for (const [u, n] of Object.entries(pts)) {
    const uri = normaliseUri(u) ?? u;
    if (asked.has(uri)) out[uri] = n;
  }
  return Object.keys(out).length ? out : undefined;
}
