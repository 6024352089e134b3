import { describe, expect, it, vi } from 'vitest';
import { AHEAD_MS, Gateway } from './gateway.svelte';
import type { MetaMsg, PbFrame, ValueMsg } from './protocol';
import { gateway as startedGateway } from '../testing/canvas';
import { Socket } from '../testing/socket';

const val = (v: unknown, t = 1e18, sev = 0): ValueMsg => ({ v, t, sev, c: true, seq: 1, ep: 1 });
/** a task later: history requests made together have gone out */
const tick = () => new Promise((r) => setTimeout(r, 0));
const meta: MetaMsg = { dt: 'f8', shape: [], w: true, unit: 'mm', prec: 2 };

/** A gateway whose frame scheduling the test drives by hand. */
function gatewayWithFrames() {
  const frames: (() => void)[] = [];
  const gw = new Gateway({ schedule: (cb) => frames.push(cb) });
  const runFrame = () => frames.splice(0).forEach((cb) => cb());
  return { gw, frames, runFrame };
}

describe('Gateway state from frames', () => {
  it('maps snapshot indices (sorted group order) onto the widgets’ channels', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'anonymous', write: false });
    const sub = gw.subscribe(['ca://B', 'ca://A', 'tango://H/d/f/m/Attr']);
    expect(sub.uris).toEqual(['ca://B', 'ca://A', 'tango://h:10000/d/f/m/attr']);
    const requestId = sub.requestId!;
    gw.handle({ op: 'snap', id: requestId, sid: 4, ch: ['ca://A', 'ca://B', 'tango://h:10000/d/f/m/attr'], val: [val(1), null, val(3)], meta: [meta, null, null] });
    runFrame();
    expect(sub.ready).toBe(true);
    expect(gw.channel('ca://A').value?.v).toBe(1);
    expect(gw.channel('ca://A').meta?.unit).toBe('mm');
    expect(gw.channel('ca://B').value).toBeNull();
    expect(gw.channel('tango://h/d/f/m/attr').value?.v).toBe(3);
    gw.handle({ op: 'upd', sid: 4, i: [1, 0], val: [val(20), val(10)] });
    runFrame();
    expect(gw.channel('ca://B').value?.v).toBe(20);
    expect(gw.channel('ca://A').value?.v).toBe(10);
  });

  it('asks the gateway nothing for browser-side channels only, and is ready at once', () => {
    const gw = startedGateway();
    const sub = gw.subscribe(['sim://ramp(0, 4, 1)', 'loc://x(1)', '=`loc://x` * 2']);
    expect(sub.uris).toEqual([]);
    expect(sub.local).toHaveLength(3);
    expect(sub.ready).toBe(true);
    expect(sub.error).toBeNull();
    expect(Socket.last.sent.filter((f) => f.op === 'sub')).toEqual([]); // the gateway refuses an empty set
  });

  it('commits once per frame: many updates, one render, latest value wins', () => {
    const { gw, frames, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: true });
    const sub = gw.subscribe(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(0)], meta: [null] });
    runFrame();
    for (let k = 1; k <= 50; k++) gw.handle({ op: 'upd', sid: 1, i: [0], val: [val(k)] });
    expect(frames.length).toBe(1);
    expect(gw.channel('ca://A').value?.v).toBe(0); // nothing visible before the frame
    runFrame();
    expect(gw.channel('ca://A').value?.v).toBe(50);
    expect(gw.channel('ca://A').received).toBe(50);
    expect(gw.stats.commits).toBe(2);
    expect(gw.stats.updates).toBe(50);
  });

  it('marks values stale when the bus goes down and fresh after the new snapshot', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['ca://A']);
    expect(gw.channel('ca://A').stale).toBe(true); // nothing yet
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(5)], meta: [null] });
    runFrame();
    expect(gw.channel('ca://A').stale).toBe(false);
    gw.handle({ op: 'bus', up: false });
    expect(gw.state).toBe('bus-down');
    expect(gw.channel('ca://A').stale).toBe(true);
    gw.handle({ op: 'bus', up: true });
    expect(gw.channel('ca://A').stale).toBe(true); // still old until the snapshot
    gw.handle({ op: 'snap', id: null, sid: 1, ch: ['ca://A'], val: [val(6)], meta: [null] });
    runFrame();
    expect(gw.state).toBe('live');
    expect(gw.channel('ca://A').stale).toBe(false);
    expect(gw.channel('ca://A').value?.v).toBe(6);
  });

  it('reports a source disconnection', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['ca://A']);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(5)], meta: [null] });
    gw.handle({ op: 'upd', sid: 1, i: [0], val: [{ v: null, t: 1, sev: 3, st: 'disconnected', c: false }] });
    runFrame();
    expect(gw.channel('ca://A').disconnected).toBe(true);
  });

  it('keeps a rolling history only while a trend asks for it', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['ca://A']);
    const ch = gw.channel('ca://A');
    const release = ch.keepHistory(1000);
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [val(0, 1e6)], meta: [null] });
    for (let k = 1; k <= 200; k++) gw.handle({ op: 'upd', sid: 1, i: [0], val: [val(k, k * 100e6)] }); // 10 Hz, 20 s
    runFrame();
    const h = ch.history;
    expect(h.at(-1)).toEqual([20000, 200]);
    expect(h[0][0]).toBeGreaterThanOrEqual(20000 - 1000 - 64 * 100); // trimmed in batches
    expect(h.length).toBeLessThan(100);
    release();
    expect(ch.history).toEqual([]);
  });

  it('routes errors to their subscription, and unknown ones to lastError', () => {
    const { gw } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['xx://nope']);
    gw.handle({ op: 'err', id: sub.requestId, code: 'bad_channel', msg: 'unknown scheme' });
    expect(sub.error).toBe('A channel name is not valid (unknown scheme): correct it in the editor.');
    gw.handle({ op: 'err', id: null, code: 'rate_limited', msg: 'slow down' });
    expect(gw.lastError).toMatch(/^The page asked the gateway too fast/);
  });

  it('keeps uint64 values exact and turns bigint timestamps into numbers', () => {
    const { gw, runFrame } = gatewayWithFrames();
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['ca://A']);
    const big = { v: 18446744073709551615n, t: 1700000000123456789n as unknown as number, sev: 0, c: true };
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: ['ca://A'], val: [big], meta: [{ dt: 'u8', shape: [], w: false }] });
    runFrame();
    expect(gw.channel('ca://A').value?.v).toBe(18446744073709551615n);
    expect(typeof gw.channel('ca://A').value?.t).toBe('number');
    gw.handle({ op: 'upd', sid: 1, i: [0], val: [{ ...big, v: 18446744073709551614n, t: 1700000000223456789n as unknown as number }] });
    runFrame();
    expect(gw.channel('ca://A').value?.v).toBe(18446744073709551614n);
    expect(gw.channel('ca://A').value?.t).toBeCloseTo(1700000000223456789, -4);
  });

  it('answers a put without a connection with a disconnected error', async () => {
    const { gw } = gatewayWithFrames();
    expect(await gw.put('ca://A', 1)).toMatchObject({ ok: false, err: 'disconnected' });
  });
});

/** A WebSocket the test drives: it opens, speaks and goes silent on demand. */
/** A gateway started on a fake socket (JSON frames) that has said hello with `limits`. */
function helloGateway(limits?: Record<string, number>, write = false) {
  FakeSocket.made = [];
  const gw = new Gateway({ url: 'ws://gw.test/ws?format=json', WebSocket: FakeSocket as unknown as typeof WebSocket, schedule: () => {} });
  gw.start();
  const ws = FakeSocket.made[0];
  ws.open();
  ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write, ...(limits ? { limits } : {}) });
  return { gw, ws };
}

class FakeSocket {
  static made: FakeSocket[] = [];
  readyState = 0;
  binaryType = '';
  sent: string[] = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.closed = true;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  receive(frame: object) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  pings() {
    return this.sent.filter((d) => JSON.parse(d).op === 'ping').length;
  }
}

describe('Gateway watchdog (a hung gateway keeps its TCP connection up)', () => {
  const opts = {
    url: 'ws://gw.test/ws?format=json',
    WebSocket: FakeSocket as unknown as typeof WebSocket,
    pingMs: 1000,
    silenceMs: 2500,
    backoffMs: 100,
    schedule: () => {},
  };

  it('pings a quiet gateway and stays while it answers', () => {
    vi.useFakeTimers();
    try {
      FakeSocket.made = [];
      const gw = new Gateway(opts);
      gw.start();
      const ws = FakeSocket.made[0];
      ws.open();
      ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
      for (let k = 0; k < 10; k++) {
        vi.advanceTimersByTime(1000);
        ws.receive({ op: 'pong', id: null });
      }
      expect(ws.pings()).toBe(10);
      expect(gw.state).toBe('live');
      expect(FakeSocket.made).toHaveLength(1);
      gw.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops a gateway silent after a ping and reconnects', () => {
    vi.useFakeTimers();
    try {
      FakeSocket.made = [];
      const gw = new Gateway(opts);
      gw.start();
      const ws = FakeSocket.made[0];
      ws.open();
      ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
      vi.advanceTimersByTime(2000); // pings go out, nothing comes back
      expect(gw.state).toBe('live');
      vi.advanceTimersByTime(1000);
      expect(gw.state).toBe('reconnecting');
      expect(ws.closed).toBe(true);
      expect(gw.lastError).toBeNull();
      vi.advanceTimersByTime(200); // the backoff
      expect(FakeSocket.made).toHaveLength(2);
      gw.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up on a socket that never opens (the hung process accepts TCP only)', () => {
    vi.useFakeTimers();
    try {
      FakeSocket.made = [];
      const gw = new Gateway(opts);
      gw.start();
      vi.advanceTimersByTime(3000);
      expect(FakeSocket.made[0].closed).toBe(true);
      expect(gw.state).toBe('reconnecting');
      vi.advanceTimersByTime(200);
      expect(FakeSocket.made).toHaveLength(2);
      gw.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Gateway subscriptions on a new socket', () => {
  it('go out when the socket opens, before hello (one round trip less on a screen open), once', () => {
    FakeSocket.made = [];
    const gw = new Gateway({
      url: 'ws://gw.test/ws?format=json',
      WebSocket: FakeSocket as unknown as typeof WebSocket,
      pingMs: 0,
      schedule: () => {},
    });
    const a = gw.subscribe(['sim://A']);
    gw.start();
    const ws = FakeSocket.made[0];
    const subs = () => ws.sent.map((d) => JSON.parse(d)).filter((f) => f.op === 'sub');
    expect(subs()).toEqual([]); // not before the socket is open
    ws.open();
    expect(subs()).toEqual([{ op: 'sub', id: a.requestId, ch: ['sim://A'], shift: true }]);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    expect(subs()).toHaveLength(1); // hello does not repeat them
    gw.subscribe(['sim://B']);
    expect(subs().map((f) => f.ch)).toEqual([['sim://A'], ['sim://B']]);
    ws.receive({ op: 'snap', id: a.requestId, sid: 1, ch: ['sim://A'], val: [{ v: 1, t: 0, sev: 0, c: true }], meta: [null] });
    expect(a.ready).toBe(true);
    gw.close();
  });
});

describe('Gateway screen watching', () => {
  const opts = { url: 'ws://gw.test/ws?format=json', WebSocket: FakeSocket as unknown as typeof WebSocket, schedule: () => {} };
  const watches = (ws: FakeSocket) => ws.sent.map((d) => JSON.parse(d)).filter((f) => f.op === 'watch');

  it('sends the watched set on open and on change, and hands screen frames to their listeners', () => {
    FakeSocket.made = [];
    const gw = new Gateway(opts);
    const seen: string[] = [];
    const stopA = gw.watchScreen('a', (f) => seen.push(`a@${f.rev}`));
    gw.start();
    const ws = FakeSocket.made[0];
    ws.open();
    expect(watches(ws).map((f) => f.screens)).toEqual([['a']]);
    const stopB = gw.watchScreen('b', (f) => seen.push(`b@${f.rev}`));
    expect(watches(ws).at(-1).screens).toEqual(['a', 'b']);
    ws.receive({ op: 'screen', name: 'a', rev: 7, by: 'x', at: 't', deleted: false });
    ws.receive({ op: 'screen', name: 'b', rev: 2, by: 'x', at: 't', deleted: false });
    ws.receive({ op: 'screen', name: 'c', rev: 1, by: 'x', at: 't', deleted: false });
    expect(seen).toEqual(['a@7', 'b@2']);
    stopA();
    expect(watches(ws).at(-1).screens).toEqual(['b']);
    stopB();
    expect(watches(ws).at(-1).screens).toEqual([]);
    gw.close();
  });

  it('a gateway that refuses `watch` is not the page’s error', () => {
    FakeSocket.made = [];
    const gw = new Gateway(opts);
    gw.watchScreen('a', () => {});
    gw.start();
    const ws = FakeSocket.made[0];
    ws.open();
    ws.receive({ op: 'err', id: watches(ws)[0].id, code: 'bad_request', msg: 'unknown op' });
    expect(gw.lastError).toBeNull();
    gw.close();
  });
});

describe('Gateway history requests', () => {
  const opts = { url: 'ws://gw.test/ws?format=json', WebSocket: FakeSocket as unknown as typeof WebSocket, schedule: () => {} };
  const hists = (ws: FakeSocket) => ws.sent.map((d) => JSON.parse(d)).filter((f) => f.op === 'hist');
  const b64 = (a: ArrayBufferView) => btoa(String.fromCharCode(...new Uint8Array(a.buffer)));

  it('keeps within the in-flight limit of hello, answers typed arrays and refusals', async () => {
    FakeSocket.made = [];
    const gw = new Gateway(opts);
    gw.start();
    const ws = FakeSocket.made[0];
    ws.open();
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false, limits: { hist_in_flight: 2 } });
    // three windows (requests for one window go together, below)
    const answers = [1, 2, 3].map((k) => gw.history([`ca://H${k}`], 1000 * k, 2000 * k, 100));
    await tick();
    expect(hists(ws).map((f) => f.ch[0])).toEqual(['ca://H1', 'ca://H2']); // the third waits
    const [first, second] = hists(ws);
    const t = new Float64Array([1000, 1500]);
    ws.receive({
      op: 'hist', id: first.id, t0: 1000, t1: 2000, px: 100, ch: ['ca://H1'],
      t: [{ dtype: 'f8', shape: [2], b64: b64(t) }], v: [{ dtype: 'f8', shape: [2], b64: b64(new Float64Array([3, 4])) }],
      sev: [{ dtype: 'u1', shape: [2], b64: b64(new Uint8Array([0, 2])) }], err: [null], src: ['bus'],
    });
    const [trace] = await answers[0];
    expect([...trace.t]).toEqual([1000, 1500]);
    expect([...trace.v]).toEqual([3, 4]);
    expect([...trace.sev]).toEqual([0, 2]);
    expect(trace.src).toBe('bus');
    await vi.waitFor(() => expect(hists(ws).length).toBe(3)); // the slot went to the waiting one
    ws.receive({ op: 'err', id: second.id, code: 'bad_range', msg: 'reversed' });
    await expect(answers[1]).rejects.toThrow('bad_range: reversed');
    gw.close();
    await expect(answers[2]).rejects.toThrow(/not connected|disconnected/);
  });

  const f8 = (a: number[]) => ({ dtype: 'f8', shape: [a.length], b64: b64(new Float64Array(a)) });
  const u1 = (a: number[]) => ({ dtype: 'u1', shape: [a.length], b64: b64(new Uint8Array(a)) });
  /** A `hist` answer to `frame`: channel k's one point at t0 + k, value k; `err` per channel. */
  const answerOf = (frame: { id: number; ch: string[]; t0: number; t1: number; px: number }, err: Record<number, object> = {}) => ({
    op: 'hist', id: frame.id, t0: frame.t0, t1: frame.t1, px: frame.px, ch: frame.ch,
    t: frame.ch.map((_, k) => f8([frame.t0 + k])), v: frame.ch.map((_, k) => f8([k])), sev: frame.ch.map(() => u1([0])),
    err: frame.ch.map((_, k) => err[k] ?? null), src: frame.ch.map(() => 'bus'),
  });
  const started = (channels = 5) => helloGateway({ hist_in_flight: 2, hist_channels: channels });

  it('sends the trends of a screen opening together as one request, and gives each its channels', async () => {
    const { gw, ws } = started();
    // a few ms apart, of different widths, a channel shown twice
    const a = gw.history(['ca://A', 'ca://B'], 1000, 61_000, 400);
    const b = gw.history(['ca://C'], 1003, 61_004, 800);
    const c = gw.history(['ca://B'], 1005, 61_005, 200);
    await tick();
    expect(hists(ws)).toHaveLength(1);
    const [frame] = hists(ws);
    expect(frame).toMatchObject({ ch: ['ca://A', 'ca://B', 'ca://C'], t0: 1000, t1: 61_005, px: 800 });
    ws.receive(answerOf(frame));
    expect((await a).map((tr) => [...tr.v])).toEqual([[0], [1]]);
    expect((await b).map((tr) => [...tr.v])).toEqual([[2]]);
    expect((await c).map((tr) => [...tr.v])).toEqual([[1]]);
    gw.close();
  });

  it('keeps other windows apart, and a frame within the channels of hello', async () => {
    const { gw, ws } = started();
    const asked = [
      gw.history(['ca://A', 'ca://B', 'ca://C'], 0, 60_000, 800),
      gw.history(['ca://D', 'ca://E', 'ca://F'], 0, 60_000, 800), // over 5 channels with the first
      gw.history(['ca://G'], 0, 3_600_000, 800), // another window
      gw.history(['ca://H'], 500, 60_500, 800),
    ];
    await tick();
    expect(hists(ws).map((f) => f.ch)).toEqual([['ca://A', 'ca://B', 'ca://C', 'ca://H'], ['ca://D', 'ca://E', 'ca://F']]);
    for (const f of hists(ws)) ws.receive(answerOf(f));
    await vi.waitFor(() => expect(hists(ws)).toHaveLength(3));
    expect(hists(ws)[2].ch).toEqual(['ca://G']);
    ws.receive(answerOf(hists(ws)[2]));
    expect((await Promise.all(asked)).map((traces) => traces.length)).toEqual([3, 3, 1, 1]);
    gw.close();
  });

  it('answers a batch of wide plots with at most 400 000 points, so none gets fewer than alone', async () => {
    const { gw, ws } = started(100);
    const uris = (from: number) => Array.from({ length: 30 }, (_, k) => `ca://W${from + k}`);
    const wide = [gw.history(uris(0), 0, 60_000, 4000), gw.history(uris(30), 0, 60_000, 4000)]; // 60 × 2 × 4000 points together
    await tick();
    expect(hists(ws).map((f) => f.ch.length)).toEqual([30, 30]);
    for (const f of hists(ws)) ws.receive(answerOf(f));
    expect((await Promise.all(wide)).map((traces) => traces.length)).toEqual([30, 30]);
    gw.close();
  });

  it('asks again alone a request truncated in a batch, and each of a batch refused as a whole', async () => {
    const { gw, ws } = started();
    const a = gw.history(['ca://A'], 0, 60_000, 800);
    const b = gw.history(['ca://B'], 0, 60_000, 800);
    await tick();
    const [batch] = hists(ws);
    expect(batch.ch).toEqual(['ca://A', 'ca://B']);
    ws.receive(answerOf(batch, { 1: { code: 'truncated', msg: 'more than 2000000 values' } }));
    expect((await a)[0].error).toBeNull();
    await vi.waitFor(() => expect(hists(ws)).toHaveLength(2));
    const alone = hists(ws)[1];
    expect(alone.ch).toEqual(['ca://B']);
    ws.receive(answerOf(alone, { 0: { code: 'truncated', msg: 'more than 2000000 values' } }));
    expect((await b)[0].error).toBe('truncated: more than 2000000 values'); // alone, it is the answer
    const c = gw.history(['ca://C'], 0, 60_000, 800);
    const d = gw.history(['ca://D'], 0, 60_000, 800);
    await vi.waitFor(() => expect(hists(ws)).toHaveLength(3));
    ws.receive({ op: 'err', id: hists(ws)[2].id, code: 'bad_range', msg: 'px out of range' });
    await vi.waitFor(() => expect(hists(ws)).toHaveLength(5));
    expect(hists(ws).slice(3).map((f) => f.ch)).toEqual([['ca://C'], ['ca://D']]);
    ws.receive(answerOf(hists(ws)[3]));
    ws.receive({ op: 'err', id: hists(ws)[4].id, code: 'bad_range', msg: 'px out of range' });
    expect((await c)[0].error).toBeNull();
    await expect(d).rejects.toThrow('bad_range: px out of range');
    gw.close();
  });
});

describe('Gateway rewind requests', () => {
  it('hands past values (at, pb) on with their timestamps as numbers, as live ones', async () => {
    const { gw, ws } = helloGateway();
    const frames: PbFrame[] = [];
    const answer = gw.play(['ca://A'], 1000, 10, (f) => frames.push(f));
    await tick();
    const id = ws.sent.map((d) => JSON.parse(d)).find((f) => f.op === 'play').id;
    const t = 1795876927959955200n as unknown as number; // ns since the epoch decode as a bigint
    gw.handle({ op: 'at', id, t: 1000, ch: ['ca://A'], val: [{ v: 1, t, sev: 0, c: true }], meta: [null], src: ['raw'], err: [null] });
    expect(typeof (await answer).val[0]!.t).toBe('number');
    gw.handle({ op: 'pb', id, t: 1100, i: [0], val: [{ v: 2, t, sev: 0, c: true }] });
    expect(frames[0].val[0]!.t).toBeCloseTo(1795876927959955200, -4);
    gw.close();
  });
});

describe('Gateway commands', () => {
  const opts = { url: 'ws://gw.test/ws?format=json', WebSocket: FakeSocket as unknown as typeof WebSocket, schedule: () => {} };

  it('sends a cmd frame (argument only when given) and resolves with the output', async () => {
    FakeSocket.made = [];
    const gw = new Gateway(opts);
    gw.start();
    const ws = FakeSocket.made[0];
    ws.open();
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: true });
    const level = gw.command('tango://H:1/Sim/Test/1/SetLevel', 2.5);
    const reset = gw.command('tango://h:1/sim/test/1/Reset');
    const sent = ws.sent.map((d) => JSON.parse(d)).filter((f) => f.op === 'cmd');
    expect(sent).toEqual([
      { op: 'cmd', id: sent[0].id, ch: 'tango://h:1/sim/test/1/setlevel', v: 2.5 },
      { op: 'cmd', id: sent[1].id, ch: 'tango://h:1/sim/test/1/reset' },
    ]);
    ws.receive({ op: 'cmd', id: sent[0].id, ok: true, v: 2.5 });
    ws.receive({ op: 'cmd', id: sent[1].id, ok: false, err: 'denied', msg: 'no grant' });
    expect(await level).toEqual({ ok: true, v: 2.5, err: undefined, msg: undefined });
    expect(await reset).toMatchObject({ ok: false, err: 'denied', msg: 'no grant' });
    expect('v' in (await reset)).toBe(false);
    gw.close();
  });
});

describe('Gateway subscriptions sharing one sid', () => {
  // the gateway answers the same set subscribed twice on one socket with the same sid
  // (docs/protocol.md, `sub.ch`): a channel picker's preview of a channel a widget shows
  function twoOfTheSameSet() {
    const gw = startedGateway();
    const a = gw.subscribe(['ca://DEMO:SINE']);
    gw.handle({ op: 'snap', id: a.requestId, sid: 45, ch: ['ca://DEMO:SINE'], val: [val(1)], meta: [null] });
    const b = gw.subscribe(['ca://DEMO:SINE']);
    gw.handle({ op: 'snap', id: b.requestId, sid: 45, ch: ['ca://DEMO:SINE'], val: [val(2)], meta: [null] });
    return { gw, a, b, unsubs: () => Socket.last.sent.filter((f) => f.op === 'unsub') };
  }

  it('keeps the sid while another subscription holds it, and unsubscribes it once', () => {
    const { gw, a, b, unsubs } = twoOfTheSameSet();
    gw.unsubscribe(b); // the preview closes
    expect(unsubs()).toEqual([]);
    gw.handle({ op: 'upd', sid: 45, i: [0], val: [val(3)] });
    gw.flush();
    expect(gw.channel('ca://DEMO:SINE').value?.v).toBe(3); // the widget still updates
    gw.unsubscribe(a);
    expect(unsubs()).toMatchObject([{ op: 'unsub', sid: 45 }]);
    expect(gw.lastError).toBeNull();
  });

  it('hands delivery to the holder left, in either order', () => {
    const { gw, a, b, unsubs } = twoOfTheSameSet();
    gw.unsubscribe(a);
    expect(unsubs()).toEqual([]);
    gw.handle({ op: 'upd', sid: 45, i: [0], val: [val(4)] });
    gw.flush();
    expect(gw.channel('ca://DEMO:SINE').value?.v).toBe(4);
    gw.unsubscribe(b);
    expect(unsubs()).toHaveLength(1);
  });

  it('never shows a refused unsubscribe on the page', () => {
    const { gw, a, b, unsubs } = twoOfTheSameSet();
    gw.unsubscribe(a);
    gw.unsubscribe(b);
    const [unsub] = unsubs();
    gw.handle({ op: 'err', id: unsub.id, code: 'unknown_sid', msg: 'no subscription 45 on this connection' });
    expect(gw.lastError).toBeNull();
  });
});

describe('a subscription made ahead of its screen (a link followed)', () => {
  it('is the screen’s own when it subscribes the same set: one sub sent, its snapshot already in', () => {
    const gw = startedGateway();
    const subs = () => Socket.last.sent.filter((f) => f.op === 'sub');
    gw.subscribeAhead(['ca://B', 'ca://A', 'ca://A']);
    gw.subscribeAhead(['ca://A', 'ca://B']); // asked already: nothing new
    expect(subs()).toHaveLength(1);
    gw.handle({ op: 'snap', id: subs()[0].id, sid: 2, ch: ['ca://A', 'ca://B'], val: [val(1), val(2)], meta: [null, null] });
    gw.flush();
    const taken = gw.subscribe(['ca://A', 'ca://B']);
    expect(subs()).toHaveLength(1);
    expect(taken.ready).toBe(true);
    expect(gw.channel('ca://B').value?.v).toBe(2);
    // taken once: another subscription of the set is one of its own
    expect(gw.subscribe(['ca://A', 'ca://B'])).not.toBe(taken);
    expect(subs()).toHaveLength(2);
  });

  it('is dropped when no screen takes it within AHEAD_MS', () => {
    vi.useFakeTimers();
    try {
      const gw = startedGateway();
      gw.subscribeAhead(['ca://X']);
      const subs = () => Socket.last.sent.filter((f) => f.op === 'sub');
      expect(subs()).toHaveLength(1);
      const id = subs()[0].id;
      gw.handle({ op: 'snap', id, sid: 7, ch: ['ca://X'], val: [val(1)], meta: [null] });
      vi.advanceTimersByTime(AHEAD_MS + 1);
      expect(Socket.last.sent.filter((f) => f.op === 'unsub')).toEqual([expect.objectContaining({ sid: 7 })]);
      expect(gw.subscribe(['ca://X']).requestId).not.toBe(id); // a new one
    } finally {
      vi.useRealTimers();
    }
  });
});
