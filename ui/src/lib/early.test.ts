import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { decode } from '@msgpack/msgpack';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { screenChannels, type Screen } from './screen';
import { EARLY_HOLD_FRAMES, Gateway } from './transport/gateway.svelte';
import type { ServerFrame, SnapFrame, ValueMsg } from './transport/protocol';

const root = resolve(__dirname, '../../..');
/** index.html's inline script: what starts before the app's code loads */
const inline = /<script>([\s\S]*?)<\/script>/.exec(readFileSync(resolve(root, 'ui/index.html'), 'utf8'))![1];

/** A socket driven by the test; keeps what the page sends, decoded. */
class Socket {
  static made: Socket[] = [];
  readyState = 0;
  binaryType = '';
  sent: Record<string, unknown>[] = [];
  raw: (Uint8Array | string)[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    Socket.made.push(this);
  }
  send(data: Uint8Array | ArrayBuffer | string) {
    const bytes = typeof data === 'string' ? data : new Uint8Array(data as ArrayBuffer);
    this.raw.push(bytes);
    this.sent.push((typeof bytes === 'string' ? JSON.parse(bytes) : decode(bytes)) as Record<string, unknown>);
  }
  close() {
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  receive(frame: ServerFrame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  subs() {
    return this.sent.filter((f) => f.op === 'sub');
  }
}

// tricky URIs: Tango without a port, upper case, #dbase=no, duplicates, names of > 31 and > 255 bytes, > 15 channels
const screen: Screen = {
  title: 'early',
  widgets: [
    { type: 'label', channels: ['ca://A', 'tango://Host/Sys/Tg/1/Double_Scalar#dbase=no', 'ca://A'] },
    { type: 'led', channels: [' ca://B ', `ca://${'LONG:'.repeat(8)}NAME`, `sim://${'X'.repeat(300)}`] },
    { type: 'text' },
    // a channel only a spectrum shows is the plot's own (sub.pts); one also in a label is the screen's
    { type: 'spectrum', channels: ['ca://WAVE', 'ca://A'] },
    ...Array.from({ length: 20 }, (_, i) => ({ type: 'label' as const, channels: [`sim://X:${i}`] })),
  ],
};

/** Run index.html's script for `#/screen/early`; the screen file answers at once. */
function boot(hash = '#/screen/early') {
  Socket.made = [];
  history.replaceState(null, '', `/${hash}`);
  vi.stubGlobal('WebSocket', Socket);
  vi.stubGlobal('fetch', () => Promise.resolve(new Response(JSON.stringify(screen), { headers: { 'content-type': 'application/json' } })));
  delete (globalThis as { __synopticEarly?: unknown }).__synopticEarly;
  new Function(inline)();
  return Socket.made[0];
}

/** The request id index.html's early `sub` carries. */
const EARLY_ID = 2147483647;

/** boot() with its socket open and the early `sub` sent, and the app's Gateway started on it. */
async function bootSubscribed(schedule: (cb: () => void) => void = () => {}) {
  const ws = boot();
  ws.open();
  await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
  const gw = new Gateway({ pingMs: 0, schedule });
  gw.start();
  return { ws, gw };
}

/** The gateway's snapshot of `uris` for request `id` (group `sid`), every value `value`. */
function snapOf(uris: string[], sid: number, value: ValueMsg | null = null, id: number | null = EARLY_ID): SnapFrame {
  return { op: 'snap', id, sid, ch: uris, val: uris.map(() => value), meta: uris.map(() => null) };
}

beforeEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});
afterEach(() => vi.unstubAllGlobals());

describe("index.html's early subscription", () => {
  it('sends the screen\'s channels as the app would (normalised, de-duplicated) in a frame the gateway accepts', async () => {
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const [sub] = ws.subs();
    expect(sub).toEqual({ op: 'sub', id: EARLY_ID, ch: screenChannels(screen), shift: true });
    expect(sub.ch).toContain('tango://host:10000/sys/tg/1/double_scalar');
    expect(sub.ch).not.toContain('ca://WAVE'); // the spectrum's own
    // the gateway's own decoder and validator (synoptic_schemas.frames)
    const script = [
      'import json, sys',
      'from synoptic_schemas import frames',
      'print(json.dumps(frames.validate_client_frame(frames.unpack(sys.stdin.buffer.read()))))',
    ].join('\n');
    const out = execFileSync(resolve(root, '.venv/bin/python'), ['-c', script], { input: ws.raw[0] as Uint8Array });
    expect(JSON.parse(out.toString())).toEqual(sub);
  });

  it('sends nothing on another page', async () => {
    const ws = boot('#/quick');
    ws.open();
    expect(ws.sent).toEqual([]);
  });
});

describe('the app adopts the early subscription', () => {
  it('sends no subscription of its own; a snapshot and updates that came before it are applied', async () => {
    const pending: (() => void)[] = [];
    const { ws, gw } = await bootSubscribed((cb) => pending.push(cb));
    const uris = screenChannels(screen);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    ws.receive(snapOf(uris, 5, { v: 1, t: 1, sev: 0, c: true }));
    ws.receive({ op: 'upd', sid: 5, i: [0], val: [{ v: 2, t: 2, sev: 0, c: true }] });
    const sub = gw.subscribe(uris);
    expect(sub.ready).toBe(false); // applied after the caller is done (a component's init)
    await Promise.resolve();
    pending.splice(0).forEach((cb) => cb());
    expect(ws.subs()).toHaveLength(1); // index.html's only
    expect(sub.ready).toBe(true);
    expect(gw.channel('ca://A').value?.v).toBe(2);
    expect(gw.channel('sim://X:19').value?.v).toBe(1);
    ws.receive({ op: 'upd', sid: 5, i: [1], val: [{ v: 3, t: 3, sev: 0, c: true }] });
    pending.splice(0).forEach((cb) => cb());
    expect(gw.channel(uris[1]).value?.v).toBe(3);
    gw.close();
  });

  it('when the socket opens after the app took it over (index.html sends it from the app\'s open handler)', async () => {
    const ws = boot();
    await (globalThis as { __synopticEarly?: { screen: { body: Promise<unknown> } } }).__synopticEarly!.screen.body;
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const sub = gw.subscribe(screenChannels(screen));
    expect(ws.sent).toEqual([]); // not open yet
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    expect(ws.subs()[0].id).toBe(EARLY_ID);
    expect(sub.requestId).toBe(EARLY_ID);
    gw.close();
  });

  it('takes it for the same channels in another order (the gateway keys a subscription by its set)', async () => {
    const { ws, gw } = await bootSubscribed();
    const sub = gw.subscribe([...screenChannels(screen)].reverse());
    expect(ws.subs()).toHaveLength(1);
    expect(sub.requestId).toBe(EARLY_ID);
    gw.close();
  });

  it('gives it up when the app subscribes to something else; its snapshot, before or after, is unsubscribed', async () => {
    const { ws, gw } = await bootSubscribed();
    const uris = screenChannels(screen);
    ws.receive(snapOf(uris, 5));
    const sub = gw.subscribe(['ca://OTHER']);
    expect(ws.sent.slice(1).map((f) => f.op)).toEqual(['unsub', 'sub']);
    expect(ws.sent[1].sid).toBe(5);
    expect(ws.sent[2].ch).toEqual(['ca://OTHER']);
    expect(sub.requestId).not.toBe(EARLY_ID);
    gw.close();
    // the snapshot comes after the app gave it up
    const { ws: ws2, gw: gw2 } = await bootSubscribed();
    gw2.subscribe(['ca://OTHER']);
    ws2.receive(snapOf(uris, 6));
    expect(ws2.sent.slice(1).map((f) => f.op)).toEqual(['sub', 'unsub']);
    expect(ws2.sent[2].sid).toBe(6);
    gw2.close();
  });

  it('stops holding when the app never takes it (the page left that screen first): unsubscribed, nothing kept', async () => {
    const { ws, gw } = await bootSubscribed();
    const uris = screenChannels(screen);
    ws.receive(snapOf(uris, 5));
    for (let k = 0; k < EARLY_HOLD_FRAMES; k++) ws.receive({ op: 'upd', sid: 5, i: [0], val: [{ v: k, t: k, sev: 0, c: true }] });
    expect(ws.sent.map((f) => f.op)).toEqual(['sub', 'unsub']);
    expect(ws.sent[1].sid).toBe(5);
    // a later screen subscribes itself and gets its own answers
    const sub = gw.subscribe(uris);
    expect(ws.subs()).toHaveLength(2);
    expect(sub.requestId).not.toBe(EARLY_ID);
    ws.receive(snapOf(uris, 6, { v: 1, t: 1, sev: 0, c: true }, sub.requestId));
    expect(sub.ready).toBe(true);
    gw.close();
  });

  it('unsubscribes nothing else: a snapshot for a subscription dropped before it came is left alone', async () => {
    const ws = boot('#/quick');
    ws.open();
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const first = gw.subscribe(['ca://A']);
    gw.unsubscribe(first);
    const second = gw.subscribe(['ca://A']); // the gateway answers both with the same sid
    ws.receive({ op: 'snap', id: first.requestId, sid: 3, ch: ['ca://A'], val: [null], meta: [null] });
    ws.receive({ op: 'snap', id: second.requestId, sid: 3, ch: ['ca://A'], val: [null], meta: [null] });
    expect(ws.sent.map((f) => f.op)).toEqual(['sub', 'sub']);
    expect(second.ready).toBe(true);
    gw.close();
  });
});

describe('a screen whose snapshot came before its grid', () => {
  it('is built once, with one subscription, and shows the held values', async () => {
    const { render } = await import('@testing-library/svelte');
    const { flushSync } = await import('svelte');
    const ScreenHost = (await import('./testing/ScreenHost.svelte')).default;
    const { ws, gw } = await bootSubscribed();
    const uris = screenChannels(screen);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    ws.receive(snapOf(uris, 5, { v: 4, t: 1, sev: 0, c: true }));
    performance.clearMarks('synoptic:mounted');
    const view = render(ScreenHost, { props: { gateway: gw, name: 'early' } }); // the screen page, as the app has it
    await vi.waitFor(() => expect(performance.getEntriesByName('synoptic:mounted')).toHaveLength(1));
    flushSync();
    expect(performance.getEntriesByName('synoptic:mounted')).toHaveLength(1);
    expect(ws.subs()).toHaveLength(1);
    const cells = view.container.querySelectorAll('.grid > section.cell');
    expect(cells).toHaveLength(screen.widgets.length);
    const value = view.container.querySelector('[data-channel="ca://A"][data-role=value], [data-channel="ca://A"] [data-role=value]')!;
    expect(value.getAttribute('data-stale')).toBe('false');
    expect(value.firstChild!.textContent).toBe('4.000');
    gw.close();
  });
});

/** Run index.html's script for `#/screen/<name>`; the screen file answers when the test calls `answer`. */
function bootDeferred(name: string) {
  Socket.made = [];
  history.replaceState(null, '', `/#/screen/${name}`);
  vi.stubGlobal('WebSocket', Socket);
  let answer: (file: Screen | null) => void = () => {};
  const response = new Promise<Response>((resolve) => {
    answer = (file) => resolve(file ? new Response(JSON.stringify(file), { headers: { 'content-type': 'application/json' } }) : new Response('{}', { status: 404 }));
  });
  vi.stubGlobal('fetch', () => response);
  delete (globalThis as { __synopticEarly?: unknown }).__synopticEarly;
  new Function(inline)();
  const early = (globalThis as { __synopticEarly?: { screen: { body: Promise<unknown> }; cache: { put(n: string, ch: string[]): void; get(n: string): string[] | null } } }).__synopticEarly!;
  return { ws: Socket.made[0], answer, early };
}

/** `screen` with other channels: two of its own, one shared */
const edited: Screen = { title: 'edited', widgets: [{ type: 'label', channels: ['ca://A', 'ca://NEW:1'] }, { type: 'led', channels: ['ca://NEW:2'] }] };

describe("index.html's cache of each screen's channels", () => {
  it('a hit: the subscription leaves when the socket opens, before the screen file; the app adopts it', async () => {
    const first = bootDeferred('early');
    first.ws.open();
    first.answer(screen);
    await vi.waitFor(() => expect(first.ws.subs()).toHaveLength(1)); // a miss: after the file
    expect(JSON.parse(localStorage.getItem('synoptic.sub:early')!)).toEqual(screenChannels(screen));
    const { ws, answer, early } = bootDeferred('early');
    ws.open();
    expect(ws.subs()).toEqual([{ op: 'sub', id: EARLY_ID, ch: screenChannels(screen), shift: true }]); // no file yet
    answer(screen);
    await early.screen.body;
    await Promise.resolve();
    expect(ws.sent).toHaveLength(1); // the file agrees: nothing more
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const sub = gw.subscribe(screenChannels(screen));
    expect(sub.requestId).toBe(EARLY_ID);
    expect(ws.sent).toHaveLength(1);
    gw.close();
  });

  it('a miss: nothing before the screen file, then its subscription; the list is cached', async () => {
    const { ws, answer, early } = bootDeferred('early');
    ws.open();
    expect(ws.sent).toEqual([]);
    answer(screen);
    await early.screen.body;
    await vi.waitFor(() => expect(ws.subs()).toEqual([{ op: 'sub', id: EARLY_ID, ch: screenChannels(screen), shift: true }]));
    expect(early.cache.get('early')).toEqual(screenChannels(screen));
    expect(JSON.parse(localStorage.getItem('synoptic.subs')!)).toEqual(['early']);
  });

  it('a changed screen: the cached subscription is corrected (its answers unsubscribed, never shown), the file\'s sent and cached', async () => {
    bootDeferred('early').early.cache.put('early', screenChannels(screen)); // what an earlier load of the old file left
    const { ws, answer, early } = bootDeferred('early');
    ws.open();
    expect(ws.subs()).toEqual([{ op: 'sub', id: EARLY_ID, ch: screenChannels(screen), shift: true }]);
    const gw = new Gateway({ pingMs: 0, schedule: (cb) => cb() });
    gw.start();
    const old = screenChannels(screen);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    ws.receive(snapOf(old, 5, { v: 1, t: 1, sev: 0, c: true }));
    answer(edited);
    await early.screen.body;
    const uris = screenChannels(edited);
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(2));
    expect(ws.subs()[1]).toEqual({ op: 'sub', id: 2147483646, ch: uris, shift: true });
    expect(early.cache.get('early')).toEqual(uris);
    ws.receive({ op: 'upd', sid: 5, i: [1], val: [{ v: 9, t: 2, sev: 0, c: true }] });
    ws.receive(snapOf(uris, 6, { v: 2, t: 3, sev: 0, c: true }, 2147483646));
    expect(ws.sent.filter((f) => f.op === 'unsub')).toEqual([expect.objectContaining({ sid: 5 })]);
    const sub = gw.subscribe(uris); // the screen, built from the file
    expect(sub.requestId).toBe(2147483646);
    await Promise.resolve();
    expect(sub.ready).toBe(true);
    expect(ws.subs()).toHaveLength(2);
    expect(uris.map((u) => gw.channel(u).value?.v)).toEqual([2, 2, 2]);
    expect(gw.channel(old[1]).value ?? null).toBeNull(); // a channel of the old file only: never given a value
    // the dropped one's snapshot after the correction (it came late): unsubscribed too
    ws.receive(snapOf(old, 7));
    expect(ws.sent.filter((f) => f.op === 'unsub').map((f) => f.sid)).toEqual([5, 7]);
    gw.close();
  });

  it('a cached subscription for a screen that is gone (404) is dropped', async () => {
    bootDeferred('early').early.cache.put('early', ['ca://A']);
    const { ws, answer, early } = bootDeferred('early');
    ws.open();
    expect(ws.subs()).toHaveLength(1);
    answer(null);
    await early.screen.body;
    await Promise.resolve();
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    ws.receive({ op: 'snap', id: EARLY_ID, sid: 5, ch: ['ca://A'], val: [null], meta: [null] });
    expect(ws.sent.map((f) => f.op)).toEqual(['sub', 'unsub']);
    gw.close();
  });

  it('is bounded: at most 16 screens and 256 K characters, the most recent kept, a list too large never stored', () => {
    const { early } = bootDeferred('none');
    const list = (k: number, n: number) => Array.from({ length: n }, (_, i) => `sim://S${k}:${String(i).padStart(20, '0')}`);
    for (let k = 0; k < 20; k++) early.cache.put(`s${k}`, list(k, 10));
    let names = JSON.parse(localStorage.getItem('synoptic.subs')!) as string[];
    expect(names).toEqual(Array.from({ length: 16 }, (_, i) => `s${19 - i}`));
    expect(localStorage.getItem('synoptic.sub:s3')).toBeNull(); // the oldest removed, not only forgotten
    expect(early.cache.get('s19')).toEqual(list(19, 10));
    early.cache.put('big1', list(1, 3000)); // ~100 K characters each
    early.cache.put('big2', list(2, 3000));
    early.cache.put('big3', list(3, 3000));
    names = JSON.parse(localStorage.getItem('synoptic.subs')!) as string[];
    expect(names.slice(0, 2)).toEqual(['big3', 'big2']);
    expect(names).not.toContain('big1');
    const total = names.reduce((n, name) => n + localStorage.getItem(`synoptic.sub:${name}`)!.length, 0);
    expect(total).toBeLessThanOrEqual(262144);
    early.cache.put('huge', list(4, 9000)); // > 256 K characters alone
    expect(early.cache.get('huge')).toBeNull();
    expect(early.cache.get('big3')).toEqual(list(3, 3000));
  });

  it('storage unavailable (blocked, private mode) or full: no cache, the subscription still goes out after the file', async () => {
    const blocked = vi.spyOn(window, 'localStorage', 'get').mockImplementation(() => {
      throw new DOMException('access denied', 'SecurityError');
    });
    try {
      const { ws, answer, early } = bootDeferred('early');
      ws.open();
      expect(ws.sent).toEqual([]);
      answer(screen);
      await early.screen.body;
      await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
      expect(early.cache.get('early')).toBeNull();
    } finally {
      blocked.mockRestore();
    }
    // full: the real storage refuses the write (its quota)
    let k = 0;
    for (let size = 1 << 20; size >= 1; size >>= 1) {
      for (;;) {
        try {
          localStorage.setItem(`f${k++}`, 'x'.repeat(size));
        } catch {
          break; // the quota: smaller pieces, down to one character
        }
      }
    }
    const { ws, answer, early } = bootDeferred('early');
    ws.open();
    answer(screen);
    await early.screen.body;
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    expect(early.cache.get('early')).toBeNull();
  });
});

describe("index.html's ready promise (the app mounts after it, at most 30 ms later)", () => {
  const settled = async (p: Promise<void>) => {
    let done = false;
    void p.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 0));
    return done;
  };

  it('resolves when the subscription has left, not before', async () => {
    bootDeferred('early').early.cache.put('early', screenChannels(screen));
    const { ws, early } = bootDeferred('early');
    const ready = (early as unknown as { ready: Promise<void> }).ready;
    expect(await settled(ready)).toBe(false); // socket not open yet
    ws.open();
    expect(await settled(ready)).toBe(true);
  });

  it('resolves at once on another page, and when the screen file is missing or has no channels', async () => {
    boot('#/quick');
    expect(await settled((globalThis as { __synopticEarly?: { ready: Promise<void> } }).__synopticEarly!.ready)).toBe(true);
    const gone = bootDeferred('early');
    gone.answer(null);
    expect(await settled((gone.early as unknown as { ready: Promise<void> }).ready)).toBe(true);
    const empty = bootDeferred('early');
    empty.answer({ title: 'empty', widgets: [] });
    expect(await settled((empty.early as unknown as { ready: Promise<void> }).ready)).toBe(true);
  });
});
