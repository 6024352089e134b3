import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { decode } from '@msgpack/msgpack';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { screenChannels, type Screen } from './screen';
import { EARLY_HOLD_FRAMES, Gateway } from './transport/gateway.svelte';
import type { ServerFrame } from './transport/protocol';

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

beforeEach(() => vi.unstubAllGlobals());
afterEach(() => vi.unstubAllGlobals());

describe("index.html's early subscription", () => {
  it('sends the screen\'s channels as the app would (normalised, de-duplicated) in a frame the gateway accepts', async () => {
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const [sub] = ws.subs();
    expect(sub).toEqual({ op: 'sub', id: 2147483647, ch: screenChannels(screen) });
    expect(sub.ch).toContain('tango://host:10000/sys/tg/1/double_scalar');
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
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const pending: (() => void)[] = [];
    const gw = new Gateway({ pingMs: 0, schedule: (cb) => pending.push(cb) });
    gw.start();
    const uris = screenChannels(screen);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    ws.receive({ op: 'snap', id: 2147483647, sid: 5, ch: uris, val: uris.map(() => ({ v: 1, t: 1, sev: 0, c: true })), meta: uris.map(() => null) });
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
    expect(ws.subs()[0].id).toBe(2147483647);
    expect(sub.requestId).toBe(2147483647);
    gw.close();
  });

  it('takes it for the same channels in another order (the gateway keys a subscription by its set)', async () => {
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const sub = gw.subscribe([...screenChannels(screen)].reverse());
    expect(ws.subs()).toHaveLength(1);
    expect(sub.requestId).toBe(2147483647);
    gw.close();
  });

  it('gives it up when the app subscribes to something else; its snapshot, before or after, is unsubscribed', async () => {
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const uris = screenChannels(screen);
    ws.receive({ op: 'snap', id: 2147483647, sid: 5, ch: uris, val: uris.map(() => null), meta: uris.map(() => null) });
    const sub = gw.subscribe(['ca://OTHER']);
    expect(ws.sent.slice(1).map((f) => f.op)).toEqual(['unsub', 'sub']);
    expect(ws.sent[1].sid).toBe(5);
    expect(ws.sent[2].ch).toEqual(['ca://OTHER']);
    expect(sub.requestId).not.toBe(2147483647);
    gw.close();
    // the snapshot comes after the app gave it up
    const ws2 = boot();
    ws2.open();
    await vi.waitFor(() => expect(ws2.subs()).toHaveLength(1));
    const gw2 = new Gateway({ pingMs: 0, schedule: () => {} });
    gw2.start();
    gw2.subscribe(['ca://OTHER']);
    ws2.receive({ op: 'snap', id: 2147483647, sid: 6, ch: uris, val: uris.map(() => null), meta: uris.map(() => null) });
    expect(ws2.sent.slice(1).map((f) => f.op)).toEqual(['sub', 'unsub']);
    expect(ws2.sent[2].sid).toBe(6);
    gw2.close();
  });

  it('stops holding when the app never takes it (the page left that screen first): unsubscribed, nothing kept', async () => {
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const uris = screenChannels(screen);
    ws.receive({ op: 'snap', id: 2147483647, sid: 5, ch: uris, val: uris.map(() => null), meta: uris.map(() => null) });
    for (let k = 0; k < EARLY_HOLD_FRAMES; k++) ws.receive({ op: 'upd', sid: 5, i: [0], val: [{ v: k, t: k, sev: 0, c: true }] });
    expect(ws.sent.map((f) => f.op)).toEqual(['sub', 'unsub']);
    expect(ws.sent[1].sid).toBe(5);
    // a later screen subscribes itself and gets its own answers
    const sub = gw.subscribe(uris);
    expect(ws.subs()).toHaveLength(2);
    expect(sub.requestId).not.toBe(2147483647);
    ws.receive({ op: 'snap', id: sub.requestId, sid: 6, ch: uris, val: uris.map(() => ({ v: 1, t: 1, sev: 0, c: true })), meta: uris.map(() => null) });
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
    const ws = boot();
    ws.open();
    await vi.waitFor(() => expect(ws.subs()).toHaveLength(1));
    const gw = new Gateway({ pingMs: 0, schedule: () => {} });
    gw.start();
    const uris = screenChannels(screen);
    ws.receive({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    ws.receive({ op: 'snap', id: 2147483647, sid: 5, ch: uris, val: uris.map(() => ({ v: 4, t: 1, sev: 0, c: true })), meta: uris.map(() => null) });
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
