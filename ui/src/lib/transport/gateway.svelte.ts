/**
 * One WebSocket per tab to the gateway: decodes frames, keeps per-channel state,
 * reconnects with exponential backoff and jitter, resubscribes and takes a new
 * snapshot.
 *
 * Beside it, one concern each: ./commit.ts (one commit per animation frame),
 * ./requests.ts (writes, commands and history answered by id), ./watchdog.ts (a
 * hung gateway), ./screenwatch.ts (followed screen saves), ./early-answers.ts
 * (index.html's subscription handed over), ./browserside.ts (channels the
 * browser serves itself), ./subscription.svelte.ts and ./types.ts.
 */
import { BrowserSide, browserLiveness, splitBrowserSide } from './browserside';
import { ChannelState, type Liveness } from './channel.svelte';
import { normaliseUri } from './channels';
import { decodeFrame, decodeJsonFrame, encodeFrame, settleTime, warmDecoder } from './codec';
import { Commits, GatewayStats } from './commit';
import { EarlyAnswers } from './early-answers';
import { userMessage } from './errors';
import { earlySocketOpened, takeEarlySocket } from '../early';
import { nextId } from './ids';
import type { AtFrame, ClientFrame, ErrFrame, MetaMsg, PbFrame, ScreenFrame, ServerFrame, SnapFrame, ValueMsg } from './protocol';
import { HistoryRequests, Writes } from './requests';
import { RewindRequests } from './rewind';
import { ScreenWatch } from './screenwatch';
import { AlarmWatch, type AlarmsListener } from './alarmwatch';
import { isNewer, unshift } from './shift';
import { RESYNC_MS, Subscription } from './subscription.svelte';
import { isBrowserSide } from './local/kinds';
import type { ConnectionState, GatewayOptions, HistTrace, PutResult } from './types';
import { Watchdog } from './watchdog';

export { EARLY_HOLD_FRAMES, EARLY_HOLD_MS } from './early-answers';
export { GatewayStats } from './commit';
export { splitBrowserSide } from './browserside';
export { RESYNC_MS, Subscription } from './subscription.svelte';
export type { ConnectionState, GatewayOptions, HistTrace, PutResult } from './types';

/** Close codes of docs/protocol.md that change how the client reconnects. */
const CLOSE_GOING_AWAY = 4000;
const CLOSE_UNAUTHORIZED = 4401;
/** How long a subscription made ahead of its screen (`subscribeAhead`) waits for the screen to take it. */
export const AHEAD_MS = 10_000;

/** A set of channels as one key (order and repeats do not matter). */
function setKey(unique: readonly string[]): string {
  return [...unique].sort().join('\n');
}

export class Gateway implements Liveness {
  state = $state<ConnectionState>('connecting');
  /** the gateway grants writes to this connection */
  write = $state(false);
  user = $state('');
  /** when the socket's token ends (Unix s), null without one */
  expires = $state<number | null>(null);
  /** what the gateway said of the sign-in (the token expired unrenewed, a renewal was refused) */
  authNotice = $state<string | null>(null);
  /** the last error not tied to a request, in the user's words (the page shows it until dismissed) */
  lastError = $state<string | null>(null);
  /** reconnect attempts since the last successful connection */
  attempts = $state(0);
  /** a screen of this tab shows the past (rewind): writes and commands are off */
  rewound = $state(false);
  readonly stats = new GatewayStats();
  readonly channels = new Map<string, ChannelState>();

  #opts: Required<Omit<GatewayOptions, 'url' | 'WebSocket' | 'token'>> & Pick<GatewayOptions, 'url' | 'WebSocket' | 'token'>;
  #ws: WebSocket | null = null;
  #subs = new Set<Subscription>();
  /** subscriptions made ahead of their screens (`subscribeAhead`), by their set, until taken or dropped */
  #ahead = new Map<string, { sub: Subscription; timer: ReturnType<typeof setTimeout> }>();
  /** told the gateway channels of each new subscription (a rewound screen shows them at its moment) */
  #onSubscribe = new Set<(uris: string[]) => void>();
  #byRequest = new Map<number, Subscription>();
  /** per sid, the subscription its frames are applied through (its `held` is the shift base) */
  #bySid = new Map<number, Subscription>();
  /**
   * per sid, every subscription holding it: the gateway answers the same set subscribed
   * twice on one socket with the same sid (docs/protocol.md, `sub.ch`), so a sid is
   * unsubscribed only when its last holder goes
   */
  #holders = new Map<number, Set<Subscription>>();
  /** ids of `unsub` frames not answered yet (a refusal is no news for the page) */
  #unsubs = new Set<number>();
  readonly #commits: Commits;
  readonly #writes: Writes;
  readonly #history: HistoryRequests;
  readonly #rewind: RewindRequests;
  readonly #screens: ScreenWatch;
  readonly #alarms: AlarmWatch;
  readonly #early: EarlyAnswers;
  readonly #watchdog: Watchdog;
  readonly #browserSide: BrowserSide;
  /** request ids of `auth` frames: a refusal answering one is the sign-in's notice */
  #authIds = new Set<number>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #closed = false;
  #json = false;
  /**
   * the current socket carries subscriptions: set when it opens, without waiting
   * for `hello` (the gateway queues its hello before it reads a frame, so a `sub`
   * sent on open saves a round trip through both event loops on a screen's open)
   */
  #subsFlow = false;
  /** the decoder ran over a made-up snapshot (once) */
  #warm = false;

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
    const send = (frame: ClientFrame) => this.#send(frame);
    const link = { send, isLive: () => this.isLive };
    this.#commits = new Commits(this.stats, this.#opts.schedule, this.#opts.frameBudgetMs);
    this.#writes = new Writes(link, this.#opts.putTimeoutMs);
    this.#history = new HistoryRequests(link);
    this.#rewind = new RewindRequests(link);
    this.#screens = new ScreenWatch(send, () => this.#subsFlow);
    this.#alarms = new AlarmWatch(send, () => this.#subsFlow);
    this.#early = new EarlyAnswers(send);
    this.#watchdog = new Watchdog(this.#opts.pingMs, this.#opts.silenceMs);
    this.#browserSide = new BrowserSide(
      (u) => this.channel(u),
      (ch, value, meta) => this.#deliverLocal(ch, value, meta),
    );
  }

  /** Runs `cb` before the next render (requestAnimationFrame unless told otherwise). */
  get schedule(): (cb: () => void) => void {
    return this.#opts.schedule;
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
    this.#watchdog.stop();
    this.#ws?.close(1000);
    this.#ws = null;
    this.state = 'closed';
    this.#history.fail('closed');
    this.#rewind.fail('closed');
  }

  /** The shared state of one channel (created on first use). */
  channel(uri: string): ChannelState {
    // a key is its own normal form: screens name channels normalised, so most calls stop here
    const known = this.channels.get(uri);
    if (known) return known;
    const key = normaliseUri(uri) ?? uri;
    let ch = this.channels.get(key);
    if (!ch) {
      ch = new ChannelState(key, isBrowserSide(key) ? browserLiveness(key, (u) => this.channel(u)) : this);
      this.channels.set(key, ch);
    }
    return ch;
  }

  /** A browser-side channel's value: shown at the next frame like a gateway update. */
  #deliverLocal(ch: ChannelState, value: ValueMsg, meta: MetaMsg | null): void {
    if (meta) ch.snapshot(value, meta);
    else ch.receive(value);
    this.#commits.touch(ch, performance.now());
    this.#commits.schedule();
  }

  /**
   * Subscribe a set of channels; kept across reconnects until `unsubscribe`.
   * `pts` maps channels whose arrays are drawn to the most points drawn of them:
   * their arrays come reduced (docs/protocol.md, `sub.pts`).
   */
  subscribe(uris: string[], pts?: Record<string, number>): Subscription {
    let unique = [...new Set(uris.map((u) => normaliseUri(u) ?? u))];
    // the screen a followed link opens: its subscription went out at the click
    const ahead = pts && Object.keys(pts).length ? null : this.#takeAhead(unique);
    if (ahead) return ahead;
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
      void this.#browserSide.engine().then((engine) => {
        if (this.#subs.has(sub)) for (const u of local) engine.acquire(u);
      });
    }
    this.#subs.add(sub);
    if (this.#subsFlow) this.#sendSub(sub);
    if (unique.length) for (const told of this.#onSubscribe) told(unique);
    return sub;
  }

  /**
   * Subscribe the channels of a screen about to be built (a link followed, the screen
   * read ahead): its values are on their way while the page changes and the screen is
   * built. The screen's own `subscribe` of the same set within AHEAD_MS takes this one;
   * else it is dropped.
   */
  subscribeAhead(uris: string[]): void {
    const unique = [...new Set(uris.map((u) => normaliseUri(u) ?? u))];
    const key = setKey(unique);
    if (this.#ahead.has(key)) return; // asked already: nothing new
    const sub = this.subscribe(unique);
    const timer = setTimeout(() => {
      if (this.#ahead.get(key)?.sub !== sub) return;
      this.#ahead.delete(key);
      this.unsubscribe(sub);
    }, AHEAD_MS);
    this.#ahead.set(key, { sub, timer });
  }

  /** The subscription made ahead for exactly this set of channels (taken: it is the caller's now), else null. */
  #takeAhead(unique: string[]): Subscription | null {
    if (!this.#ahead.size) return null;
    const key = setKey(unique);
    const ahead = this.#ahead.get(key);
    if (!ahead) return null;
    this.#ahead.delete(key);
    clearTimeout(ahead.timer);
    return ahead.sub;
  }

  /** Tell `told` the gateway channels of every subscription made from now on; returns its removal. */
  onSubscribe(told: (uris: string[]) => void): () => void {
    this.#onSubscribe.add(told);
    return () => void this.#onSubscribe.delete(told);
  }

  unsubscribe(sub: Subscription): void {
    if (!this.#subs.has(sub)) return;
    this.#subs.delete(sub);
    if (sub.local.length) void this.#browserSide.engine().then((engine) => sub.local.forEach((u) => engine.release(u)));
    if (sub.requestId !== null) this.#byRequest.delete(sub.requestId);
    if (sub.sid !== null && !this.#release(sub.sid, sub)) {
      const id = nextId();
      this.#unsubs.add(id);
      this.#send({ op: 'unsub', id, sid: sub.sid });
    }
  }

  /** `sub` holds `sid` and applies its frames (its snapshot just came: its `held` is the newest). */
  #hold(sid: number, sub: Subscription): void {
    let holders = this.#holders.get(sid);
    if (!holders) this.#holders.set(sid, (holders = new Set()));
    holders.add(sub);
    this.#bySid.set(sid, sub);
  }

  /** `sub` lets go of `sid`; true while other subscriptions still hold it (then one of them applies its frames). */
  #release(sid: number, sub: Subscription): boolean {
    const holders = this.#holders.get(sid);
    holders?.delete(sub);
    if (!holders?.size) {
      this.#holders.delete(sid);
      this.#bySid.delete(sid);
      return false;
    }
    if (this.#bySid.get(sid) === sub) {
      const [next] = holders;
      // the same set in the same order: the values applied so far are the next one's shift base
      next.byIndex = sub.byIndex;
      next.held = sub.held;
      this.#bySid.set(sid, next);
    }
    return true;
  }

  /** Write a value; resolves with the gateway's reply (never rejects). */
  put(uri: string, v: unknown): Promise<PutResult> {
    if (isBrowserSide(uri)) return this.#browserSide.put(uri, v);
    return this.#writes.request((id) => ({ op: 'put', id, ch: normaliseUri(uri) ?? uri, v }));
  }

  /**
   * Run a Tango command (`tango://host:port/d/f/m/Command`) with an optional argument;
   * resolves with the gateway's reply and the command's output `v` (never rejects).
   */
  command(uri: string, arg?: unknown): Promise<PutResult> {
    const ch = normaliseUri(uri) ?? uri;
    return this.#writes.request((id) => (arg === undefined ? { op: 'cmd', id, ch } : { op: 'cmd', id, ch, v: arg }));
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
    return this.#history.request(uris, t0, t1, px, timeoutMs);
  }

  /** Every gateway channel this tab subscribes now (what a rewound screen shows), once each. */
  subscribedUris(): string[] {
    const out = new Set<string>();
    for (const sub of this.#subs) for (const u of sub.uris) out.add(u);
    return [...out];
  }

  /**
   * The points the tab's subscriptions draw of their channels' arrays (`sub.pts`): per
   * channel the most any of them draws, none for a channel some subscription takes whole.
   * A rewound screen asks for its arrays at these, as its live subscriptions get them.
   */
  subscribedPoints(): Record<string, number> {
    const whole = new Set<string>();
    const most: Record<string, number> = {};
    for (const sub of this.#subs) {
      for (const u of sub.uris) {
        const n = sub.pts?.[u];
        if (n === undefined) whole.add(u);
        else most[u] = Math.max(most[u] ?? 0, n);
      }
    }
    for (const u of whole) delete most[u];
    return most;
  }

  /** The channels' values and metadata at the moment `t` (ms), arrays at `pts`; rejects with the gateway's reason. */
  at(uris: string[], t: number, pts?: Record<string, number>): Promise<AtFrame> {
    return this.#rewind.at(uris, t, pts);
  }

  /** Play channels back from `t` at `speed` (arrays at `pts`): the `at` answer, then each `pb` frame to `onFrame`. */
  play(uris: string[], t: number, speed: number, onFrame: (f: PbFrame) => void, pts?: Record<string, number>): Promise<AtFrame> {
    return this.#rewind.play(uris, t, speed, onFrame, pts);
  }

  /** Stop a playback (the `id` of its `at` answer). */
  halt(play: number): void {
    this.#rewind.halt(play);
  }

  /** When `uri` changed last before `t` (`dir` -1) or first after it (1); null: none kept. */
  step(uri: string, t: number, dir: -1 | 1): Promise<number | null> {
    return this.#rewind.step(uri, t, dir);
  }

  /**
   * Follow saves of a screen: `listener` gets its `screen` frames (a save, revert
   * or delete anywhere) until the returned function is called.
   */
  watchScreen(name: string, listener: (frame: ScreenFrame) => void): () => void {
    return this.#screens.watch(name, listener);
  }

  /**
   * Follow the alarms: `listener` gets every `alarms` frame (the whole list first when
   * `full`, else the counts; then what changes) until the returned function is called.
   * A reconnect asks again: the next frame is a whole list (or the counts) again.
   */
  followAlarms(full: boolean, listener: AlarmsListener): () => void {
    return this.#alarms.follow(full, listener);
  }

  // ------------------------------------------------------------ connection

  #url(): string {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return new URL(this.#opts.url ?? `${proto}//${location.host}/ws`, location.href).href;
  }

  /**
   * Hand the open socket a renewed token (an `auth` frame): its subscriptions go on,
   * nothing reconnects. A socket that opens later sends the current token itself.
   */
  renew(token: string): void {
    if (!this.#subsFlow) return; // not open yet: #startSubs sends it first
    this.#sendAuth(token);
  }

  #sendAuth(token: string): void {
    const id = nextId();
    this.#authIds.add(id);
    this.#send({ op: 'auth', id, token });
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
    const watchdog = this.#watchdog;
    watchdog.start(
      () => {
        if (this.#ws === ws && ws.readyState === 1) this.#send({ op: 'ping', id: nextId() });
      },
      () => {
        if (this.#ws !== ws) return;
        this.#ws = null;
        ws.onmessage = ws.onclose = null;
        ws.close();
        this.#onDown(1006, `no answer from the gateway for ${Math.round(this.#opts.silenceMs / 1000)} s`);
      },
    );
    ws.onmessage = (ev) => {
      watchdog.heardAt = performance.now();
      this.#onMessage(ev.data);
    };
    ws.onclose = (ev) => {
      if (this.#ws !== ws) return;
      this.#ws = null;
      watchdog.stop();
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

  #onDown(code: number, why: string): void {
    this.#early.drop(); // index.html's subscription went with its socket
    this.#subsFlow = false;
    this.#authIds.clear();
    for (const ch of this.channels.values()) if (!isBrowserSide(ch.uri)) ch.markStale(); // the browser's own stay live
    for (const sub of this.#subs) {
      sub.ready = false;
      sub.sid = null;
      sub.requestId = null;
    }
    this.#byRequest.clear();
    this.#bySid.clear();
    this.#holders.clear();
    this.#unsubs.clear();
    this.#writes.fail(why);
    this.#history.fail(why); // the waiting ones find no connection
    this.#rewind.fail(why);
    if (code === CLOSE_UNAUTHORIZED) {
      // retrying with the same token cannot help (docs/protocol.md, close codes)
      console.warn(`gateway refused the connection: ${why}`);
      this.lastError = userMessage('unauthorized', why);
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
    // the token first: the gateway checks it before it reads the frames after it
    const token = this.#opts.token?.();
    if (token) this.#sendAuth(token);
    for (const sub of this.#subs) this.#sendSub(sub);
    if (this.#screens.any) this.#screens.send();
    if (this.#alarms.any) this.#alarms.send();
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
    const adopted = this.#early.adopt(this.#ws, sub.uris, !!sub.pts, (frame) => this.handle(frame));
    const id = adopted ?? nextId();
    sub.requestId = id;
    this.#byRequest.set(id, sub);
    if (adopted !== null) return;
    performance.mark('synoptic:sub');
    // shift: circular buffers arrive as their new samples (rebuilt in the upd handler)
    this.#send(sub.pts ? { op: 'sub', id, ch: sub.uris, pts: sub.pts, shift: true } : { op: 'sub', id, ch: sub.uris, shift: true });
  }

  // ------------------------------------------------------------ frames

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
      console.warn(`undecodable frame: ${(e as Error).message}`);
      this.lastError = 'A message from the gateway could not be read: reload the page (an older or newer page than the gateway?).';
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
    if (this.#early.hold(frame, this.#ws)) return;
    switch (frame.op) {
      case 'hello':
        performance.mark('synoptic:hello');
        this.user = frame.user;
        this.write = frame.write === true;
        this.expires = frame.exp ?? null;
        this.#history.limit = frame.limits?.hist_in_flight ?? 2;
        this.#history.maxChannels = frame.limits?.hist_channels ?? 100;
        this.attempts = 0;
        this.state = 'live';
        this.lastError = null;
        this.#startSubs(); // when `open` was not seen
        break;
      case 'auth':
        this.user = frame.user;
        this.write = frame.write;
        this.expires = frame.exp;
        if (frame.expired) this.authNotice = frame.msg ?? 'the sign-in expired: writing is off until you sign in again';
        else if (frame.id !== null && this.#authIds.delete(frame.id)) this.authNotice = null;
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
        const commits = this.#commits;
        for (let k = 0; k < n; k++) {
          const ch = sub.byIndex[i[k]];
          if (!ch) continue;
          let v = settleTime(val[k]);
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
          commits.touch(ch, now);
        }
        this.stats.updates += n;
        commits.schedule();
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
          this.#commits.touch(ch, now);
        });
        this.#commits.schedule();
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
          this.#commits.touch(ch, now);
        }
        this.#commits.schedule();
        break;
      }
      case 'stats':
        this.stats.missed += frame.missed;
        this.stats.conflated += frame.conflated;
        break;
      case 'put':
      case 'cmd': {
        const reply: PutResult = { ok: frame.ok, err: frame.err, msg: frame.msg };
        if (frame.op === 'cmd' && frame.v !== undefined && frame.v !== null) reply.v = frame.v;
        this.#writes.answer(frame.id, reply);
        break;
      }
      case 'hist':
        this.#history.answer(frame.id, frame);
        break;
      case 'at':
      case 'pb':
      case 'step':
        this.#rewind.answer(frame.id, frame);
        break;
      case 'halt':
        break;
      case 'err':
        this.#onError(frame);
        break;
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
        this.#screens.deliver(frame);
        break;
      case 'watch':
        this.#screens.answered(frame.id);
        break;
      case 'unsub':
        this.#unsubs.delete(frame.id);
        break;
      case 'alarms':
        this.#alarms.deliver(frame);
        break;
      case 'pong':
        break;
    }
  }

  /** An `err` frame: it answers a history request, a `watch`, a write, a subscription, or nothing (the page's error). */
  #onError(frame: ErrFrame): void {
    const text = `${frame.code}: ${frame.msg}`;
    const id = frame.id;
    console.warn(`gateway: ${text}`);
    if (id !== null) {
      if (this.#authIds.delete(id)) {
        this.authNotice = `the sign-in was refused: ${frame.msg}`;
        return;
      }
      if (this.#history.answer(id, text)) return;
      if (this.#rewind.answer(id, text)) return;
      // a gateway without screen watching: the page works, it just does not follow saves
      if (this.#screens.answered(id)) return;
      if (this.#alarms.answered(id)) return;
      if (this.#writes.answer(id, { ok: false, err: frame.code, msg: frame.msg })) return;
      if (this.#unsubs.delete(id)) return; // the subscription is gone either way: nothing the user could act on
      const sub = this.#byRequest.get(id);
      if (sub) {
        sub.error = userMessage(frame.code, frame.msg);
        return;
      }
    }
    this.lastError = userMessage(frame.code, frame.msg);
  }

  #onSnap(frame: SnapFrame): void {
    let sub = frame.id === null ? undefined : this.#byRequest.get(frame.id);
    sub ??= this.#bySid.get(frame.sid);
    if (!sub) {
      this.#early.orphan(frame);
      return;
    }
    if (sub.sid !== null && sub.sid !== frame.sid) this.#release(sub.sid, sub);
    sub.sid = frame.sid;
    this.#hold(frame.sid, sub);
    sub.byIndex = frame.ch.map((uri) => this.channel(uri));
    sub.held = frame.val.map((v) => v ?? null);
    const down = new Set(frame.stale ?? []);
    const now = performance.now();
    sub.byIndex.forEach((ch, k) => {
      const v = settleTime(frame.val[k] ?? null);
      ch.snapshot(v, frame.meta[k] ?? null, down.has(k));
      this.#commits.touch(ch, now);
    });
    sub.ready = true;
    sub.error = null;
    this.#commits.snapPending = true;
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

  /**
   * Commit the channels that changed since the last frame (oldest first, within
   * the frame budget) and render the components that read them synchronously.
   */
  flush(): void {
    this.#commits.flush();
  }
}
