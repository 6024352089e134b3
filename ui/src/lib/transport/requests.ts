/**
 * Requests answered later, by id: writes and commands (one reply each, or a
 * timeout; never a rejection) and history (at most the gateway's
 * `hello.limits.hist_in_flight` at once: more wait their turn here instead of
 * being refused; those for the same window go together).
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

/**
 * Two requests whose ranges are this close (ms, at each end) go as one `hist`
 * frame: the trends of a screen opening together ask for the same window, a few
 * milliseconds apart.
 */
export const SAME_WINDOW_MS = 1000;
/** Points a batch may have answered (2 per pixel per channel): the gateway's points per answer, beyond which it lowers `px`. */
export const BATCH_POINTS = 400_000;

/** One caller's history request, waiting for a slot or carried by a frame in flight. */
interface Asked {
  uris: string[];
  t0: number;
  t1: number;
  px: number;
  timeoutMs: number;
  /** sent in a frame of its own (a batch's truncated or refused part asked again) */
  alone: boolean;
  resolve: (traces: HistTrace[]) => void;
  reject: (e: Error) => void;
}

/** A `hist` frame in flight: the requests it carries, and where each one's channels sit in it. */
interface Sent {
  asked: Asked[];
  at: number[][];
  timer: ReturnType<typeof setTimeout>;
}

/**
 * `hist` requests in flight, and those waiting for a free slot. Requests made
 * together for the same window (a screen's trends opening) go as one frame, up to
 * `hello.limits.hist_channels` channels: one read of the history for all of them
 * instead of one per trend, queued two by two (and at most `BATCH_POINTS` points
 * answered, so that no trend gets fewer than alone). A batch's answer is split per
 * request; a request whose channels came back `truncated` in a batch (the values
 * read per request are limited over all its channels), or whose batch was refused
 * as a whole, is asked again alone.
 */
export class HistoryRequests {
  #inFlight = new Map<number, Sent>();
  #waiting: Asked[] = [];
  #pumping = false;
  /** requests in flight the gateway allows per connection (`hello.limits.hist_in_flight`; 0 until known) */
  limit = 0;
  /** channels per request the gateway allows (`hello.limits.hist_channels`) */
  maxChannels = 100;
  readonly #link: Link;

  constructor(link: Link) {
    this.#link = link;
  }

  /** Channels' history (gateway channels only), queued behind the limit and sent with others for the same window. */
  request(uris: string[], t0: number, t1: number, px: number, timeoutMs: number): Promise<HistTrace[]> {
    if (!this.#link.isLive()) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      const ch = uris.map((u) => normaliseUri(u) ?? u);
      this.#waiting.push({ uris: ch, t0, t1, px, timeoutMs, alone: false, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Send what waits once the requests made in this turn are in: a task later (the
   * widgets of a screen mount, and ask, over several microtasks).
   */
  #schedule(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    setTimeout(() => {
      this.#pumping = false;
      this.#pump();
    }, 0);
  }

  #pump(): void {
    while (this.#waiting.length && this.#inFlight.size < (this.limit || 2)) {
      if (!this.#link.isLive()) {
        for (const a of this.#waiting.splice(0)) a.reject(new Error('not connected'));
        return;
      }
      this.#send(this.#takeBatch());
    }
  }

  /** The first request waiting, with those waiting for the same window that fit in one frame. */
  #takeBatch(): Asked[] {
    const first = this.#waiting.shift()!;
    const batch = [first];
    if (first.alone) return batch;
    let channels = first.uris.length;
    let px = first.px;
    this.#waiting = this.#waiting.filter((a) => {
      const same = !a.alone && Math.abs(a.t0 - first.t0) <= SAME_WINDOW_MS && Math.abs(a.t1 - first.t1) <= SAME_WINDOW_MS;
      const n = channels + a.uris.length;
      if (!same || n > this.maxChannels || n * 2 * Math.max(px, a.px) > BATCH_POINTS) return true;
      batch.push(a);
      channels = n;
      px = Math.max(px, a.px);
      return false;
    });
    return batch;
  }

  #send(asked: Asked[]): void {
    const id = nextId();
    const ch: string[] = [];
    const index = new Map<string, number>();
    const at = asked.map((a) =>
      a.uris.map((u) => {
        let k = index.get(u);
        if (k === undefined) {
          k = ch.length;
          index.set(u, k);
          ch.push(u);
        }
        return k;
      }),
    );
    const t0 = Math.floor(Math.min(...asked.map((a) => a.t0)));
    const t1 = Math.ceil(Math.max(...asked.map((a) => a.t1)));
    const px = Math.max(1, Math.round(Math.max(...asked.map((a) => a.px))));
    const timer = setTimeout(() => {
      this.#inFlight.delete(id);
      for (const a of asked) a.reject(new Error('no history answer from the gateway'));
      this.#schedule();
    }, Math.max(...asked.map((a) => a.timeoutMs)));
    this.#inFlight.set(id, { asked, at, timer });
    this.#link.send({ op: 'hist', id, ch, t0, t1, px });
  }

  /** Answer frame `id` with its `hist` frame or an error text (false: none of ours). */
  answer(id: number, answer: HistFrame | string): boolean {
    const sent = this.#inFlight.get(id);
    if (!sent) return false;
    this.#inFlight.delete(id);
    clearTimeout(sent.timer);
    const batched = sent.asked.length > 1;
    if (typeof answer === 'string') {
      // a batch refused as a whole: each request asked again alone, to get its own answer
      if (batched) this.#waiting.unshift(...sent.asked.map((a) => ({ ...a, alone: true })));
      else sent.asked[0].reject(new Error(answer));
    } else {
      const traces = answer.ch.map((_, k) => traceOf(answer, k));
      const again: Asked[] = [];
      sent.asked.forEach((a, j) => {
        const mine = sent.at[j].map((k) => traces[k]);
        if (batched && mine.some((tr) => tr.error?.startsWith('truncated'))) again.push({ ...a, alone: true });
        else a.resolve(mine);
      });
      this.#waiting.unshift(...again);
    }
    this.#schedule();
    return true;
  }

  /** The connection went: every request in flight fails with `why`, the waiting ones find no connection. */
  fail(why: string): void {
    for (const sent of this.#inFlight.values()) {
      clearTimeout(sent.timer);
      for (const a of sent.asked) a.reject(new Error(`disconnected: ${why}`));
    }
    this.#inFlight.clear();
    for (const a of this.#waiting.splice(0)) a.reject(new Error('not connected'));
  }
}

/** Channel `k` of a `hist` answer as a trace. */
function traceOf(r: HistFrame, k: number): HistTrace {
  return {
    t: r.t[k]?.data ?? new Float64Array(0),
    v: r.v[k]?.data ?? new Float64Array(0),
    sev: r.sev[k]?.data ?? new Uint8Array(0),
    error: r.err[k] ? `${r.err[k]!.code}: ${r.err[k]!.msg}` : null,
    src: r.src[k],
  };
}
