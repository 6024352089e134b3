/**
 * Requests answered later, by id: writes and commands (one reply each, or a
 * timeout; never a rejection) and history (at most the gateway's
 * `hello.limits.hist_in_flight` at once: more wait their turn here instead of
 * being refused).
 */
import { normaliseUri } from './channels';
import { nextId } from './ids';
import type { ClientFrame, HistFrame } from './protocol';
import { type Asked, type Batch, takeBatches } from './histbatch';
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

/** A request waiting for a slot, with what settles it. */
interface Waiting extends Asked {
  timeoutMs: number;
  resolve: (traces: HistTrace[]) => void;
  reject: (why: Error) => void;
}

/**
 * `hist` requests in flight, and those waiting for a free slot. Requests asked
 * together for the same range go as one frame per free slot (./histbatch.ts):
 * twenty trends opened at once are two reads, not ten rounds of two.
 */
export class HistoryRequests {
  #pending = new Map<number, (r: HistFrame | string) => void>();
  #waiting: Waiting[] = [];
  #flushQueued = false;
  /** requests in flight the gateway allows per connection (`hello.limits.hist_in_flight`; 0 until known) */
  limit = 0;
  /** channels the gateway allows per request (`hello.limits.hist_channels`) */
  maxChannels = 100;
  readonly #link: Link;

  constructor(link: Link) {
    this.#link = link;
  }

  /** Channels' history (gateway channels only), queued behind the limit. */
  request(uris: string[], t0: number, t1: number, px: number, timeoutMs: number): Promise<HistTrace[]> {
    if (!this.#link.isLive()) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      const ch = uris.map((u) => normaliseUri(u) ?? u);
      this.#waiting.push({ uris: ch, t0, t1, px, timeoutMs, resolve, reject });
      // the others asked in the same turn of the event loop join this one
      if (!this.#flushQueued) {
        this.#flushQueued = true;
        queueMicrotask(() => {
          this.#flushQueued = false;
          this.#flush();
        });
      }
    });
  }

  /** Send what the free slots allow. */
  #flush(): void {
    const free = (this.limit || 2) - this.#pending.size;
    if (free <= 0 || !this.#waiting.length) return;
    if (!this.#link.isLive()) return this.#failWaiting('not connected');
    for (const b of takeBatches(this.#waiting, free, this.maxChannels)) this.#send(b);
  }

  #send(b: Batch<Waiting>): void {
    const id = nextId();
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      for (const m of b.members) m.reject(new Error('no history answer from the gateway'));
      this.#flush();
    }, Math.max(...b.members.map((m) => m.timeoutMs)));
    this.#pending.set(id, (r) => {
      clearTimeout(timer);
      if (typeof r === 'string') {
        for (const m of b.members) m.reject(new Error(r));
      } else {
        const at = new Map(b.uris.map((u, k) => [u, k]));
        const traces = b.uris.map((_, k) => trace(r, k));
        for (const m of b.members) m.resolve(m.uris.map((u) => traces[at.get(u)!]));
      }
      this.#flush(); // the slot goes to the waiting ones
    });
    this.#link.send({ op: 'hist', id, ch: b.uris, t0: Math.floor(b.t0), t1: Math.ceil(b.t1), px: Math.max(1, Math.round(b.px)) });
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
    this.#failWaiting('not connected');
  }

  #failWaiting(why: string): void {
    for (const w of this.#waiting.splice(0)) w.reject(new Error(why));
  }
}

/** Channel `k` of a `hist` answer as typed arrays. */
function trace(r: HistFrame, k: number): HistTrace {
  return {
    t: r.t[k]?.data ?? new Float64Array(0),
    v: r.v[k]?.data ?? new Float64Array(0),
    sev: r.sev[k]?.data ?? new Uint8Array(0),
    error: r.err[k] ? `${r.err[k]!.code}: ${r.err[k]!.msg}` : null,
    src: r.src[k],
  };
}
