/**
 * Requests answered later, by id: writes and commands (one reply each, or a
 * timeout; never a rejection) and history (at most the gateway's
 * `hello.limits.hist_in_flight` at once: more wait their turn here instead of
 * being refused).
 */
import { normaliseUri } from './channels';
import { nextId } from './ids';
import type { ClientFrame, HistFrame } from './protocol';
import type { HistTrace, PutResult } from './types';

/** What the requests need of the connection. */
export interface Link {
  isLive(): boolean;
  send(frame: ClientFrame): void;
}

/** `put` and `cmd` requests waiting for their reply. */
export class Writes {
  #pending = new Map<number, (r: PutResult) => void>();
  readonly #link: Link;
  readonly #timeoutMs: number;

  constructor(link: Link, timeoutMs: number) {
    this.#link = link;
    this.#timeoutMs = timeoutMs;
  }

  /** Send a put or cmd request and wait for its reply, at most the timeout. */
  request(frame: (id: number) => ClientFrame): Promise<PutResult> {
    if (!this.#link.isLive()) return Promise.resolve({ ok: false, err: 'disconnected', msg: 'not connected' });
    const id = nextId();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve({ ok: false, err: 'timeout', msg: 'no reply from the gateway' });
      }, this.#timeoutMs);
      this.#pending.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.#link.send(frame(id));
    });
  }

  /** Answer request `id` (false: none of ours). */
  answer(id: number, reply: PutResult): boolean {
    const resolve = this.#pending.get(id);
    if (!resolve) return false;
    this.#pending.delete(id);
    resolve(reply);
    return true;
  }

  /** The connection went: every waiting write fails with `why`. */
  fail(why: string): void {
    for (const resolve of this.#pending.values()) resolve({ ok: false, err: 'disconnected', msg: why });
    this.#pending.clear();
  }
}

/** `hist` requests in flight, and those waiting for a free slot. */
export class HistoryRequests {
  #pending = new Map<number, (r: HistFrame | string) => void>();
  #waiters: (() => void)[] = [];
  /** requests in flight the gateway allows per connection (`hello.limits.hist_in_flight`; 0 until known) */
  limit = 0;
  readonly #link: Link;

  constructor(link: Link) {
    this.#link = link;
  }

  /** Channels' history (gateway channels only), queued behind the limit. */
  async request(uris: string[], t0: number, t1: number, px: number, timeoutMs: number): Promise<HistTrace[]> {
    // no more in flight than the gateway allows per connection (hello.limits.hist_in_flight):
    // a screen of many trends queues here instead of being refused
    while (this.#pending.size >= (this.limit || 2)) await new Promise<void>((r) => this.#waiters.push(r));
    try {
      return await this.#request(uris, t0, t1, px, timeoutMs);
    } finally {
      this.#waiters.shift()?.();
    }
  }

  #request(uris: string[], t0: number, t1: number, px: number, timeoutMs: number): Promise<HistTrace[]> {
    if (!this.#link.isLive()) return Promise.reject(new Error('not connected'));
    const id = nextId();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error('no history answer from the gateway'));
      }, timeoutMs);
      this.#pending.set(id, (r) => {
        clearTimeout(timer);
        if (typeof r === 'string') return reject(new Error(r));
        resolve(r.ch.map((_, k) => ({
          t: r.t[k]?.data ?? new Float64Array(0),
          v: r.v[k]?.data ?? new Float64Array(0),
          sev: r.sev[k]?.data ?? new Uint8Array(0),
          error: r.err[k] ? `${r.err[k]!.code}: ${r.err[k]!.msg}` : null,
          src: r.src[k],
        })));
      });
      this.#link.send({ op: 'hist', id, ch: uris.map((u) => normaliseUri(u) ?? u), t0: Math.floor(t0), t1: Math.ceil(t1), px: Math.max(1, Math.round(px)) });
    });
  }

  /** Answer request `id` with its `hist` frame or an error text (false: none of ours). */
  answer(id: number, answer: HistFrame | string): boolean {
    const resolve = this.#pending.get(id);
    if (!resolve) return false;
    this.#pending.delete(id);
    resolve(answer);
    return true;
  }

  /** The connection went: every request in flight fails with `why`, the waiting ones find no connection. */
  fail(why: string): void {
    for (const resolve of this.#pending.values()) resolve(`disconnected: ${why}`);
    this.#pending.clear();
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
