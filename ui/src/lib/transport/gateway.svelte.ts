/**
 * One WebSocket per tab to the gateway: decodes frames, keeps per-channel state,
 * coalesces rendering to one commit per animation frame, reconnects with
 * exponential backoff and jitter, resubscribes and takes a new snapshot.
 */
import { flushSync } from 'svelte';
import { ChannelState, type Liveness } from './channel.svelte';
import { normaliseUri } from './channels';
import { decodeFrame, decodeJsonFrame, encodeFrame, warmDecoder } from './codec';
import { abandonEarlySub, adoptEarlySub, earlySocketOpened, isDroppedEarlySub, isEarlySub, takeEarlySocket } from '../early';
import type { ClientFrame, HistFrame, MetaMsg, ScreenFrame, ServerFrame, SnapFrame, ValueMsg } from './protocol';
import type { BrowserChannels } from './local/engine';
import { isNewer, unshift } from './shift';
import { isBrowserSide, isFormula, isLocalWritable, quotedInputs } from './local/kinds';

/** What the connection is doing, as shown to the operator. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'bus-down' | 'closed';

/** The answer to a write. */
export interface PutResult {
  ok: boolean;
  err?: string;
  msg?: string;
  /** a command's output (absent for a put, or a command without output) */
  v?: unknown;
}

/** One channel's history as answered (docs/protocol.md, `hist`). */
export interface HistTrace {
  /** ms since the epoch */
  t: Float64Array;
  v: Float64Array;
  sev: Uint8Array;
  /** `code: message` when the channel (or part of its range) could not be served */
  error: string | null;
  /** bus, archive or archive+bus */
  src: string | null;
}

export interface GatewayOptions {
  /** WebSocket URL; default: `/ws` on the page's host. */
  url?: string;
  /** first reconnect delay in ms (doubles each failure, with ±50% jitter) */
  backoffMs?: number;
  /** longest reconnect delay in ms */
  maxBackoffMs?: number;
  /** schedules a render (default requestAnimationFrame) */
  schedule?: (cb: () => void) => void;
  /** the WebSocket constructor (tests pass their own server's client) */
  WebSocket?: typeof WebSocket;
  /** how long a put may wait for its reply, ms */
  putTimeoutMs?: number;
  /** a bearer token (JWT), sent as the `access_token` query parameter */
  token?: string;
  /**
   * DOM work allowed per animation frame, ms: channels left over are committed in
   * the next frame (oldest first), so a burst of thousands of updates never makes
   * one long frame. 0 = commit everything every frame.
   */
  frameBudgetMs?: number;
  /** ms between application pings on an open socket (0: none) */
  pingMs?: number;
  /**
   * ms without any frame (after a ping) or without opening, after which the
   * gateway counts as hung (process stopped, host frozen: TCP stays up) and the
   * client drops the socket and reconnects
   */
  silenceMs?: number;
}

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

let nextId = 1;

/** ms between two fresh snapshots asked for shift-form updates whose base is not held. */
export const RESYNC_MS = 3000;

/**
 * How long the answers to index.html's subscription are held for the app to adopt
 * (frames, ms): beyond, the page left that screen before showing it, and the
 * subscription is given up.
 */
export const EARLY_HOLD_FRAMES = 2000;
export const EARLY_HOLD_MS = 10_000;

/** Close codes of docs/protocol.md that change how the client reconnects. */
const CLOSE_GOING_AWAY = 4000;
const CLOSE_UNAUTHORIZED = 4401;

export class Gateway implements Liveness {
  state = $state<ConnectionState>('connecting');
  /** the gateway grants writes to this connection */
  write = $state(false);
  user = $state('');
  /** the last error not tied to a request */
  lastError = $state<string | null>(null);
  /** reconnect attempts since the last successful connection */
  attempts = $state(0);
  readonly stats = new GatewayStats();
  readonly channels = new Map<string, ChannelState>();

  #opts: Required<Omit<GatewayOptions, 'url' | 'WebSocket' | 'token'>> & Pick<GatewayOptions, 'url' | 'WebSocket' | 'token'>;
  #ws: WebSocket | null = null;
  #subs = new Set<Subscription>();
  #byRequest = new Map<number, Subscription>();
  #bySid = new Map<number, Subscription>();
  #puts = new Map<number, (r: PutResult) => void>();
  #hists = new Map<number, (r: HistFrame | string) => void>();
  #histWaiters: (() => void)[] = [];
  #histLimit = 0;
  /** screens whose saves this page follows (`watch`), with their listeners */
  #screenWatchers = new Map<string, Set<(frame: ScreenFrame) => void>>();
  /** request ids of `watch` frames: an error answering one is not the page's error */
  #watchIds = new Set<number>();
  /** channels to commit, in the order their first uncommitted update arrived */
  #dirty: ChannelState[] = [];
  #scheduled = false;
  /** a snapshot arrived since the last commit: the next commit shows all of it, whatever the budget */
  #snapPending = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #closed = false;
  #json = false;
  /** hello received on the current socket */
  #greeted = false;
  /**
   * the current socket carries subscriptions: set when it opens, without waiting
   * for `hello` (the gateway queues its hello before it reads a frame, so a `sub`
   * sent on open saves a round trip through both event loops on a screen's open)
   */
  #subsFlow = false;
  /**
   * The answer to index.html's subscription (its `snap` or `err`, then the frames of
   * its `sid`) while the app has not yet taken that subscription as its own
   */
  #earlyFrames: ServerFrame[] | null = null;
  /** the request id of index.html's subscription when the app gave it up (its snapshot is unsubscribed) */
  #abandonedEarly: number | null = null;
  /** performance.now() when the first of `#earlyFrames` came */
  #earlyHeldAt = 0;
  /** the decoder ran over a made-up snapshot (once) */
  #warm = false;
  /** performance.now() of the last frame received (or of the connect) */
  #heardAt = 0;
  #watchdog: ReturnType<typeof setInterval> | null = null;
  #browserEngine: Promise<BrowserChannels> | null = null;

  constructor(opts: GatewayOptions = {}) {
    this.#opts = {
      backoffMs: 250,
      maxBackoffMs: 10_000,
      putTimeoutMs: 10_000,
      schedule: (cb) => requestAnimationFrame(() => cb()),
      frameBudgetMs: 0,
      pingMs: 3_000,
      silenceMs: 6_000,
      ...opts,
    };
    this.#json = (opts.url ?? '').includes('format=json');
  }

  get isLive(): boolean {
    return this.state === 'live';
  }

  /** Open the connection (and keep it open until `close()`). */
  start(): void {
    this.#closed = false;
    this.#connect();
  }

  /** Close for good (no reconnect). */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#stopWatchdog();
    this.#ws?.close(1000);
    this.#ws = null;
    this.state = 'closed';
    for (const resolve of this.#hists.values()) resolve('disconnected: closed');
    this.#hists.clear();
    for (const wake of this.#histWaiters.splice(0)) wake();
  }

  /** The shared state of one channel (created on first use). */
  channel(uri: string): ChannelState {
    // a key is its own normal form: screens name channels normalised, so most calls stop here
    const known = this.channels.get(uri);
    if (known) return known;
    const key = normaliseUri(uri) ?? uri;
    let ch = this.channels.get(key);
    if (!ch) {
      ch = new ChannelState(key, isBrowserSide(key) ? this.#browserLiveness(key) : this);
      this.channels.set(key, ch);
    }
    return ch;
  }

  /** Local and simulated channels are always live; a formula while every channel it reads is. */
  #browserLiveness(uri: string): Liveness {
    if (!isFormula(uri)) return { isLive: true };
    let inputs: ChannelState[] | null = null;
    const channel = (u: string) => this.channel(u);
    return {
      get isLive() {
        inputs ??= quotedInputs(uri).map(channel);
        return inputs.every((c) => !c.isStale);
      },
    };
  }

  /** The browser-side channel engine (its own chunk: loaded by the first screen that uses one). */
  #browser(): Promise<BrowserChannels> {
    this.#browserEngine ??= import('./local/engine').then(
      ({ BrowserChannels }) =>
        new BrowserChannels({
          channel: (u) => this.channel(u),
          deliver: (ch, value, meta) => this.#deliverLocal(ch, value, meta),
        }),
    );
    return this.#browserEngine;
  }

  /** A browser-side channel's value: shown at the next frame like a gateway update. */
  #deliverLocal(ch: ChannelState, value: ValueMsg, meta: MetaMsg | null): void {
    if (meta) ch.snapshot(value, meta);
    else ch.receive(value);
    this.#touch(ch, performance.now());
    this.#schedule();
  }

  /**
   * Subscribe a set of channels; kept across reconnects until `unsubscribe`.
   * `pts` maps channels whose arrays are drawn to the most points drawn of them:
   * their arrays come reduced (docs/protocol.md, `sub.pts`).
   */
  subscribe(uris: string[], pts?: Record<string, number>): Subscription {
    let unique = [...new Set(uris.map((u) => normaliseUri(u) ?? u))];
    let local: string[] = [];
    if (unique.some(isBrowserSide)) [unique, local] = splitBrowserSide(unique);
    const points = pts && Object.keys(pts).length
      ? Object.fromEntries(Object.entries(pts).map(([u, n]) => [normaliseUri(u) ?? u, n]))
      : undefined;
    const sub = new Subscription(
      unique,
      unique.map((u) => this.channel(u)),
      points,
    );
    if (local.length) {
      sub.local = local;
      for (const u of local) this.channel(u);
      void this.#browser().then((engine) => {
        if (this.#subs.has(sub)) for (const u of local) engine.acquire(u);
      });
    }
    this.#subs.add(sub);
    if (this.#subsFlow) this.#sendSub(sub);
    return sub;
  }

  unsubscribe(sub: Subscription): void {
    if (!this.#subs.has(sub)) return;
    this.#subs.delete(sub);
    if (sub.local.length) void this.#browser().then((engine) => sub.local.forEach((u) => engine.release(u)));
    if (sub.requestId !== null) this.#byRequest.delete(sub.requestId);
    if (sub.sid !== null) {
      this.#bySid.delete(sub.sid);
      this.#send({ op: 'unsub', id: nextId++, sid: sub.sid });
    }
  }

  /** Write a value; resolves with the gateway's reply (never rejects). */
  put(uri: string, v: unknown): Promise<PutResult> {
    if (isBrowserSide(uri)) return this.#putLocal(uri, v);
    return this.#write((id) => ({ op: 'put', id, ch: normaliseUri(uri) ?? uri, v }));
  }

  /**
   * Run a Tango command (`tango://host:port/d/f/m/Command`) with an optional argument;
   * resolves with the gateway's reply and the command's output `v` (never rejects).
   */
  command(uri: string, arg?: unknown): Promise<PutResult> {
    const ch = normaliseUri(uri) ?? uri;
    return this.#write((id) => (arg === undefined ? { op: 'cmd', id, ch } : { op: 'cmd', id, ch, v: arg }));
  }

  /** Send a put or cmd request and wait for its reply, at most `putTimeoutMs`. */
  #write(frame: (id: number) => ClientFrame): Promise<PutResult> {
    if (!this.isLive) return Promise.resolve({ ok: false, err: 'disconnected', msg: 'not connected' });
    const id = nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#puts.delete(id);
        resolve({ ok: false, err: 'timeout', msg: 'no reply from the gateway' });
      }, this.#opts.putTimeoutMs);
      this.#puts.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.#send(frame(id));
    });
  }

  /** A write to a browser-side channel: local values take it (no write grant needed); the others are read-only. */
  async #putLocal(uri: string, v: unknown): Promise<PutResult> {
    if (!isLocalWritable(uri)) return { ok: false, err: 'read_only', msg: 'simulated and formula channels are read-only' };
    try {
      (await this.#browser()).write(uri, v);
      return { ok: true };
    } catch (e) {
      return { ok: false, err: 'bad_value', msg: (e as Error).message };
    }
  }

  /**
   * History of channels from `t0` to `t1` (ms since the epoch) for a plot `px` pixels wide,
   * per channel as asked; rejects with the gateway's reason when the request is refused.
   */
  async history(uris: string[], t0: number, t1: number, px: number, timeoutMs = 30_000): Promise<HistTrace[]> {
    if (uris.some(isBrowserSide)) {
      // the browser's own channels have no history: empty traces, the others asked of the gateway
      const remote = uris.filter((u) => !isBrowserSide(u));
      const got = remote.length ? await this.history(remote, t0, t1, px, timeoutMs) : [];
      const empty = (): HistTrace => ({ t: new Float64Array(0), v: new Float64Array(0), sev: new Uint8Array(0), error: null, src: null });
      return uris.map((u) => (isBrowserSide(u) ? empty() : got.shift()!));
    }
    // no more in flight than the gateway allows per connection (hello.limits.hist_in_flight):
    // a screen of many trends queues here instead of being refused
    while (this.#hists.size >= (this.#histLimit || 2)) await new Promise<void>((r) => this.#histWaiters.push(r));
    try {
      return await this.#history(uris, t0, t1, px, timeoutMs);
    } finally {
      this.#histWaiters.shift()?.();
    }
  }

  #history(uris: string[], t0: number, t1: number, px: number, timeoutMs: number): Promise<HistTrace[]> {
    if (!this.isLive) return Promise.reject(new Error('not connected'));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#hists.delete(id);
        reject(new Error('no history answer from the gateway'));
      }, timeoutMs);
      this.#hists.set(id, (r) => {
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
      this.#send({ op: 'hist', id, ch: uris.map((u) => normaliseUri(u) ?? u), t0: Math.floor(t0), t1: Math.ceil(t1), px: Math.max(1, Math.round(px)) });
    });
  }

  #url(): string {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = new URL(this.#opts.url ?? `${proto}//${location.host}/ws`, location.href);
    if (this.#opts.token) url.searchParams.set('access_token', this.#opts.token);
    return url.href;
  }

  #connect(): void {
    const url = this.#url();
    // the socket index.html opened while this code loaded, on the first connect only
    const early = this.#opts.WebSocket || this.attempts > 0 ? null : takeEarlySocket(url);
    let ws: WebSocket;
    if (early) ws = early.ws;
    else {
      performance.mark('synoptic:connect');
      ws = new (this.#opts.WebSocket ?? WebSocket)(url);
      ws.binaryType = 'arraybuffer';
    }
    this.#ws = ws;
    this.#subsFlow = false;
    ws.onopen = () => {
      performance.mark('synoptic:open');
      if (early) earlySocketOpened(); // index.html's subscription, when the screen file is in
      this.#startSubs();
    };
    if (ws.readyState === 1) this.#startSubs(); // the early socket opened while the code loaded
    this.#heardAt = performance.now();
    this.#startWatchdog(ws);
    ws.onmessage = (ev) => {
      this.#heardAt = performance.now();
      this.#onMessage(ev.data);
    };
    ws.onclose = (ev) => {
      if (this.#ws !== ws) return;
      this.#ws = null;
      this.#stopWatchdog();
      this.#onDown(ev.code, `closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`);
    };
    ws.onerror = () => {
      /* onclose follows and reconnects */
    };
    if (early) for (const data of early.frames.splice(0)) this.#onMessage(data);
    // the first connect, while the snapshot is on its way: compile the decoder (not after a snapshot came)
    if (this.attempts === 0 && !this.#json && !this.#warm && this.stats.frames < 2) warmDecoder();
    this.#warm = true;
  }

  /**
   * Ping every `pingMs`; a socket that stays silent for `silenceMs` (or never
   * opens) belongs to a hung gateway: drop it and reconnect. Any frame counts as
   * an answer (on a busy socket the pong queues behind data).
   */
  #startWatchdog(ws: WebSocket): void {
    this.#stopWatchdog();
    const { pingMs, silenceMs } = this.#opts;
    if (!pingMs) return;
    this.#watchdog = setInterval(() => {
      if (this.#ws !== ws) return;
      if (performance.now() - this.#heardAt > silenceMs) {
        this.#ws = null;
        this.#stopWatchdog();
        ws.onmessage = ws.onclose = null;
        ws.close();
        this.#onDown(1006, `no answer from the gateway for ${Math.round(silenceMs / 1000)} s`);
      } else if (ws.readyState === 1) {
        this.#send({ op: 'ping', id: nextId++ });
      }
    }, pingMs);
  }

  #stopWatchdog(): void {
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#watchdog = null;
  }

  #onDown(code: number, why: string): void {
    this.#greeted = false;
    this.#earlyFrames = null; // index.html's subscription went with its socket
    this.#subsFlow = false;
    for (const ch of this.channels.values()) if (!isBrowserSide(ch.uri)) ch.markStale(); // the browser's own stay live
    for (const sub of this.#subs) {
      sub.ready = false;
      sub.sid = null;
      sub.requestId = null;
    }
    this.#byRequest.clear();
    this.#bySid.clear();
    for (const resolve of this.#puts.values()) resolve({ ok: false, err: 'disconnected', msg: why });
    this.#puts.clear();
    for (const resolve of this.#hists.values()) resolve(`disconnected: ${why}`);
    this.#hists.clear();
    for (const wake of this.#histWaiters.splice(0)) wake(); // they find no connection
    if (code === CLOSE_UNAUTHORIZED) {
      // retrying with the same token cannot help (docs/protocol.md, close codes)
      this.lastError = `refused: ${why}; reload with a valid token`;
      this.state = 'closed';
      return;
    }
    if (this.#closed) return;
    this.state = 'reconnecting';
    // going_away: the gateway is restarting, come back at once (the jitter spreads the herd)
    const attempts = code === CLOSE_GOING_AWAY ? 0 : this.attempts;
    const base = Math.min(this.#opts.maxBackoffMs, this.#opts.backoffMs * 2 ** attempts);
    const delay = base * (0.5 + Math.random());
    this.attempts++;
    this.#timer = setTimeout(() => this.#connect(), delay);
  }

  #send(frame: ClientFrame): void {
    const ws = this.#ws;
    if (!ws || ws.readyState !== 1) return;
    ws.send(this.#json ? JSON.stringify(frame) : encodeFrame(frame));
  }

  /** Send every subscription once on the current socket (on open, or on hello at the latest). */
  #startSubs(): void {
    if (this.#subsFlow) return;
    this.#subsFlow = true;
    for (const sub of this.#subs) this.#sendSub(sub);
    if (this.#screenWatchers.size) this.#sendWatch();
  }

  /**
   * Follow saves of a screen: `listener` gets its `screen` frames (a save, revert
   * or delete anywhere) until the returned function is called.
   */
  watchScreen(name: string, listener: (frame: ScreenFrame) => void): () => void {
    let set = this.#screenWatchers.get(name);
    const added = !set;
    if (!set) this.#screenWatchers.set(name, (set = new Set()));
    set.add(listener);
    if (added && this.#subsFlow) this.#sendWatch();
    return () => {
      set.delete(listener);
      if (set.size || this.#screenWatchers.get(name) !== set) return;
      this.#screenWatchers.delete(name);
      if (this.#subsFlow) this.#sendWatch();
    };
  }

  #sendWatch(): void {
    const id = nextId++;
    this.#watchIds.add(id);
    this.#send({ op: 'watch', id, screens: [...this.#screenWatchers.keys()] });
  }

  #sendSub(sub: Subscription): void {
    if (!sub.uris.length && !sub.pts) {
      // only browser-side channels (loc://, sim://fn, formulas): nothing to ask the gateway
      // (which refuses an empty set), and nothing to wait for
      sub.ready = true;
      sub.error = null;
      return;
    }
    // the subscription index.html already sent for this screen on this socket: its answers are ours
    const adopted = this.#ws && !sub.pts ? adoptEarlySub(this.#ws, sub.uris) : null;
    const id = adopted ?? nextId++;
    sub.requestId = id;
    this.#byRequest.set(id, sub);
    const held = this.#earlyFrames;
    this.#earlyFrames = null;
    if (adopted !== null) {
      // applied after the caller (a screen being built: a component's init) is done,
      // never inside it: a snapshot commits synchronously (flushSync)
      if (held) queueMicrotask(() => held.forEach((frame) => this.handle(frame)));
      return;
    }
    const abandoned = abandonEarlySub();
    if (abandoned !== null) this.#abandonedEarly = abandoned;
    const snap = held?.[0];
    if (snap?.op === 'snap' && snap.id === abandoned) this.#send({ op: 'unsub', id: nextId++, sid: snap.sid });
    performance.mark('synoptic:sub');
    // shift: circular buffers arrive as their new samples (rebuilt in the upd handler)
    this.#send(sub.pts ? { op: 'sub', id, ch: sub.uris, pts: sub.pts, shift: true } : { op: 'sub', id, ch: sub.uris, shift: true });
  }

  #onMessage(data: unknown): void {
    const received = performance.now();
    let frame: ServerFrame;
    try {
      if (typeof data === 'string') {
        this.stats.bytes += data.length;
        frame = decodeJsonFrame(data);
      } else {
        this.stats.bytes += (data as ArrayBuffer).byteLength;
        frame = decodeFrame(data as ArrayBuffer);
      }
    } catch (e) {
      this.lastError = `undecodable frame: ${(e as Error).message}`;
      return;
    }
    this.stats.frames++;
    // open milestone: when the snapshot's bytes reached the page (before its decode)
    if (frame.op === 'snap') {
      performance.mark('synoptic:snap-rx', { startTime: received });
      performance.mark('synoptic:snap-decoded');
    }
    this.handle(frame);
  }

  /** Apply one decoded server frame (public for tests). */
  handle(frame: ServerFrame): void {
    if (this.#holdEarly(frame)) return;
    switch (frame.op) {
      case 'hello':
        performance.mark('synoptic:hello');
        this.#greeted = true;
        this.user = frame.user;
        this.write = frame.write === true;
        this.#histLimit = frame.limits?.hist_in_flight ?? 2;
        this.attempts = 0;
        this.state = 'live';
        this.lastError = null;
        this.#startSubs(); // when `open` was not seen
        break;
      case 'snap':
        this.#onSnap(frame);
        break;
      case 'upd': {
        const sub = this.#bySid.get(frame.sid);
        if (!sub) return;
        const { i, val } = frame;
        const n = i.length;
        const now = performance.now();
        const held = sub.held;
        for (let k = 0; k < n; k++) {
          const ch = sub.byIndex[i[k]];
          if (!ch) continue;
          let v = val[k];
          if (typeof v.t === 'bigint') v.t = Number(v.t);
          if (v.sh !== undefined) {
            // docs/protocol.md, the client rule: not newer than held is ignored,
            // else its base must be the value held
            const before = held[i[k]] ?? null;
            if (!isNewer(before, v)) continue;
            const full = unshift(before, v);
            if (!full) {
              this.#shiftMiss(sub, now);
              continue;
            }
            v = full;
            this.stats.shifted++;
          }
          held[i[k]] = v;
          ch.receive(v);
          this.#touch(ch, now);
        }
        this.stats.updates += n;
        this.#schedule();
        break;
      }
      case 'meta': {
        const sub = this.#bySid.get(frame.sid);
        if (!sub) return;
        const now = performance.now();
        frame.i.forEach((idx, k) => {
          const ch = sub.byIndex[idx];
          if (!ch) return;
          ch.receiveMeta(frame.meta[k]);
          this.#touch(ch, now);
        });
        this.#schedule();
        break;
      }
      case 'src': {
        const sub = this.#bySid.get(frame.sid);
        if (!sub) return;
        const now = performance.now();
        for (const idx of frame.i) {
          const ch = sub.byIndex[idx];
          if (!ch) continue;
          ch.setSource(frame.up);
          this.#touch(ch, now);
        }
        this.#schedule();
        break;
      }
      case 'stats':
        this.stats.missed += frame.missed;
        this.stats.conflated += frame.conflated;
        break;
      case 'put':
      case 'cmd': {
        const resolve = this.#puts.get(frame.id);
        this.#puts.delete(frame.id);
        const reply: PutResult = { ok: frame.ok, err: frame.err, msg: frame.msg };
        if (frame.op === 'cmd' && frame.v !== undefined && frame.v !== null) reply.v = frame.v;
        resolve?.(reply);
        break;
      }
      case 'hist': {
        const answer = this.#hists.get(frame.id);
        this.#hists.delete(frame.id);
        answer?.(frame);
        break;
      }
      case 'err': {
        const hist = frame.id === null ? undefined : this.#hists.get(frame.id);
        if (hist) {
          this.#hists.delete(frame.id!);
          hist(`${frame.code}: ${frame.msg}`);
          break;
        }
        const put = frame.id === null ? undefined : this.#puts.get(frame.id);
        const sub = frame.id === null ? undefined : this.#byRequest.get(frame.id);
        if (frame.id !== null && this.#watchIds.delete(frame.id)) {
          // a gateway without screen watching: the page works, it just does not follow saves
        } else if (put) {
          this.#puts.delete(frame.id!);
          put({ ok: false, err: frame.code, msg: frame.msg });
        } else if (sub) {
          sub.error = `${frame.code}: ${frame.msg}`;
        } else {
          this.lastError = `${frame.code}: ${frame.msg}`;
        }
        break;
      }
      case 'bus':
        if (frame.up) {
          this.state = 'live';
          // subscriptions refused while the bus was down (`unavailable`) are asked again
          for (const sub of this.#subs) if (sub.sid === null) this.#sendSub(sub);
        } else {
          this.state = 'bus-down';
          for (const ch of this.channels.values()) ch.markStale();
        }
        break;
      case 'screen':
        for (const listener of this.#screenWatchers.get(frame.name) ?? []) listener(frame);
        break;
      case 'watch':
        this.#watchIds.delete(frame.id);
        break;
      case 'pong':
        break;
    }
  }

  /** Keep the answers to index.html's subscription until the app adopts it (or gives it up). */
  #holdEarly(frame: ServerFrame): boolean {
    const held = this.#earlyFrames;
    // held answers of a subscription index.html dropped (its cached channel list was not the screen's)
    const dropped = !!held && isDroppedEarlySub(held[0].op === 'snap' || held[0].op === 'err' ? held[0].id : null);
    if ((frame.op === 'snap' || frame.op === 'err') && isEarlySub(this.#ws, frame.id) && (!held || dropped)) {
      if (dropped && held![0].op === 'snap') this.#send({ op: 'unsub', id: nextId++, sid: held![0].sid });
      this.#earlyFrames = [frame];
      this.#earlyHeldAt = performance.now();
      return true;
    }
    if (held) {
      const first = held[0];
      if (first.op === 'snap' && 'sid' in frame && frame.sid === first.sid) {
        held.push(frame);
        // the page never showed that screen (left before its grid was built): stop holding
        if (held.length > EARLY_HOLD_FRAMES || performance.now() - this.#earlyHeldAt > EARLY_HOLD_MS) {
          this.#earlyFrames = null;
          if (!isDroppedEarlySub(first.id)) this.#abandonedEarly = abandonEarlySub();
          this.#send({ op: 'unsub', id: nextId++, sid: first.sid });
        }
        return true;
      }
    }
    return false;
  }

  #onSnap(frame: SnapFrame): void {
    let sub = frame.id === null ? undefined : this.#byRequest.get(frame.id);
    sub ??= this.#bySid.get(frame.sid);
    if (!sub) {
      // index.html's subscription that the app gave up (another set of channels, so
      // another sid): the gateway stops sending it
      // (or one it sent from its cache and dropped: the screen file has other channels)
      if (frame.id !== null && (frame.id === this.#abandonedEarly || isDroppedEarlySub(frame.id))) this.#send({ op: 'unsub', id: nextId++, sid: frame.sid });
      return;
    }
    if (sub.sid !== null && sub.sid !== frame.sid) this.#bySid.delete(sub.sid);
    sub.sid = frame.sid;
    this.#bySid.set(frame.sid, sub);
    sub.byIndex = frame.ch.map((uri) => this.channel(uri));
    sub.held = frame.val.map((v) => v ?? null);
    const down = new Set(frame.stale ?? []);
    const now = performance.now();
    sub.byIndex.forEach((ch, k) => {
      const v = frame.val[k] ?? null;
      if (v && typeof v.t === 'bigint') v.t = Number(v.t);
      ch.snapshot(v, frame.meta[k] ?? null, down.has(k));
      this.#touch(ch, now);
    });
    sub.ready = true;
    sub.error = null;
    this.#snapPending = true;
    performance.mark('synoptic:snap');
    // committed now, not at the next animation frame: the values are in the DOM
    // before the frame that lays out and paints the revealed screen
    this.flush();
    performance.mark('synoptic:snap-committed');
  }

  /** A shift-form update whose base is not held (should not happen): counted, and a fresh snapshot asked, at most once per RESYNC_MS. */
  #shiftMiss(sub: Subscription, now: number): void {
    this.stats.shiftMisses++;
    if (now - sub.resyncAt < RESYNC_MS || this.state !== 'live') return;
    sub.resyncAt = now;
    this.#sendSub(sub);
  }

  /** Queue a channel for the next commit. */
  #touch(ch: ChannelState, now: number): void {
    if (ch.queued) return;
    ch.queued = true;
    ch.pendingSince = now;
    this.#dirty.push(ch);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#opts.schedule(() => this.flush());
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
    const budget = this.#snapPending ? 0 : this.#opts.frameBudgetMs; // a screen opens in one frame
    this.#snapPending = false;
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
    const { lags, ages } = this.stats;
    lags.push(performance.now() - received);
    if (oldest !== Infinity) ages.push(Date.now() - oldest / 1e6);
    if (lags.length > 4096) lags.splice(0, lags.length - 4096);
    if (ages.length > 4096) ages.splice(0, ages.length - 4096);
    this.stats.commits++;
    if (dirty.length > 0) this.#schedule();
  }
}

/**
 * Split channels into those the gateway serves (with the ones formulas read, each
 * once) and those the browser serves itself.
 */
export function splitBrowserSide(uris: string[]): [string[], string[]] {
  const remote = new Set<string>();
  const local = new Set<string>();
  const add = (u: string, depth: number): void => {
    const key = normaliseUri(u) ?? u;
    if (!isBrowserSide(key)) {
      remote.add(key);
      return;
    }
    if (local.has(key)) return;
    local.add(key);
    if (isFormula(key) && depth < 8) for (const input of quotedInputs(key)) add(input, depth + 1);
  };
  for (const u of uris) add(u, 0);
  return [[...remote], [...uris.filter((u) => local.has(u))]];
}
