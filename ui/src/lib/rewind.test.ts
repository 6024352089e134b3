import { describe, expect, it } from 'vitest';
import { parseAt, TimeMachine, withAt } from './rewind.svelte';
import { gateway as startedGateway } from './testing/canvas';
import { Socket } from './testing/socket';
import type { Gateway } from './transport/gateway.svelte';
import { RewindRequests } from './transport/rewind';
import type { ClientFrame, PbFrame } from './transport/protocol';

describe('the moment in a link', () => {
  it('reads ISO 8601 and ms, and nothing else', () => {
    expect(parseAt('at=2026-11-27T03:12:05.250Z')).toBe(Date.parse('2026-11-27T03:12:05.250Z'));
    expect(parseAt('P=1&at=1764213125250')).toBe(1764213125250);
    expect(parseAt('at=yesterday')).toBeNull();
    expect(parseAt('P=1')).toBeNull();
  });

  it('is written beside the macros, and removed for live', () => {
    const q = withAt('P=DEMO', 1764213125250);
    expect(new URLSearchParams(q).get('P')).toBe('DEMO');
    expect(parseAt(q)).toBe(1764213125250);
    expect(withAt(q, null)).toBe('P=DEMO');
  });
});

describe('rewind requests', () => {
  function link() {
    const sent: ClientFrame[] = [];
    return { sent, link: { isLive: () => true, send: (f: ClientFrame) => sent.push(f) } };
  }

  it('answers at by id, hands pb frames to the playback until its end', async () => {
    const { sent, link: l } = link();
    const r = new RewindRequests(l);
    const frames: PbFrame[] = [];
    const answer = r.play(['ca://A'], 1000, 10, (f) => frames.push(f));
    const play = sent[0] as { op: 'play'; id: number; speed: number };
    expect(play.op).toBe('play');
    expect(play.speed).toBe(10);
    r.answer(play.id, { op: 'at', id: play.id, t: 1000, ch: ['ca://A'], val: [null], meta: [null], src: [null], err: [null] });
    expect((await answer).id).toBe(play.id);
    expect(r.answer(play.id, { op: 'pb', id: play.id, t: 1100, i: [0], val: [{ v: 1, t: 1, sev: 0, c: true }] })).toBe(true);
    expect(r.answer(play.id, { op: 'pb', id: play.id, t: 1200, i: [], val: [], end: 'now' })).toBe(true);
    expect(r.answer(play.id, { op: 'pb', id: play.id, t: 1300, i: [], val: [] })).toBe(false);
    expect(frames.map((f) => f.t)).toEqual([1100, 1200]);
  });

  it('rejects with the gateway reason, and ends playbacks when the connection goes', async () => {
    const { sent, link: l } = link();
    const r = new RewindRequests(l);
    const at = r.at(['ca://A'], 5);
    r.answer((sent[0] as { id: number }).id, 'too_many_channels: 3000 channels');
    await expect(at).rejects.toThrow('too_many_channels');
    const ends: PbFrame[] = [];
    void r.play(['ca://A'], 5, 1, (f) => ends.push(f)).catch(() => undefined);
    r.fail('closed');
    expect(ends[0].end).toBe('error');
  });

  it('steps to a change, or to none', async () => {
    const { sent, link: l } = link();
    const r = new RewindRequests(l);
    const step = r.step('ca://A', 10, -1);
    r.answer((sent[0] as { id: number }).id, { op: 'step', t: 7.5 });
    expect(await step).toBe(7.5);
    const none = r.step('ca://A', 10, 1);
    r.answer((sent[1] as { id: number }).id, { op: 'step', t: null });
    expect(await none).toBeNull();
  });
});

describe('the time control', () => {
  /** A gateway's rewind side: subscriptions made by hand, `at` answered at once with each channel's name as its value. */
  function gateway() {
    const told = new Set<(uris: string[]) => void>();
    const subscribed: string[] = [];
    const asked: [string[], number][] = [];
    const shown = new Map<string, unknown>();
    const fake = {
      rewound: false,
      channels: new Map(),
      subscribedUris: () => [...subscribed],
      subscribedPoints: () => ({}),
      onSubscribe: (fn: (uris: string[]) => void) => (told.add(fn), () => void told.delete(fn)),
      at: async (ch: string[], t: number) => {
        asked.push([ch, t]);
        return { op: 'at', id: 1, t, ch, val: ch.map((u) => ({ v: u, t, sev: 0, c: true })), meta: ch.map(() => null), src: ch.map(() => 'raw'), err: ch.map(() => null) };
      },
      channel: (uri: string) => ({ showPast: (value: { v: unknown } | null) => shown.set(uri, value?.v) }),
    };
    const subscribe = (...uris: string[]) => {
      subscribed.push(...uris);
      for (const fn of told) fn(uris);
    };
    return { gw: fake as unknown as Gateway, subscribe, asked, shown, told };
  }
  const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('shows channels subscribed after the moment was asked for (a screen opened at a link) at that moment', async () => {
    const { gw, subscribe, asked, shown } = gateway();
    const time = new TimeMachine(gw);
    await time.goTo(1000); // the link's moment, before the widgets subscribe
    expect(asked).toEqual([[[], 1000]]);
    subscribe('ca://A');
    subscribe('ca://B', 'ca://C');
    await settled();
    await settled();
    // one request for the widgets mounted together, at the moment shown
    expect(asked.slice(1)).toEqual([[['ca://A', 'ca://B', 'ca://C'], 1000]]);
    expect([...shown]).toEqual([['ca://A', 'ca://A'], ['ca://B', 'ca://B'], ['ca://C', 'ca://C']]);
    // a widget subscribing again at the same points is shown already: nothing asked
    subscribe('ca://A');
    await settled();
    expect(asked.length).toBe(2);
  });

  it('leaves channels subscribed while live, or after the screen went, alone', async () => {
    const { gw, subscribe, asked, told } = gateway();
    const time = new TimeMachine(gw);
    subscribe('ca://A');
    await settled();
    expect(asked).toEqual([]);
    time.close();
    expect(told.size).toBe(0);
  });
});

describe('arrays at a moment', () => {
  type Sent = { op: string; id: number; ch?: string[]; pts?: Record<string, number> };
  const sent = (op: string) => (Socket.last.sent as Sent[]).filter((f) => f.op === op);
  const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

  /** A screen's subscriptions as its widgets make them: scalars whole, a spectrum and an image at the points they draw. */
  function screen() {
    const gw = startedGateway();
    gw.subscribe(['ca://SCALAR', 'ca://BOTH']);
    gw.subscribe(['ca://WF', 'ca://BOTH'], { 'ca://WF': 1024, 'ca://BOTH': 512 }); // a spectrum 512 px wide
    gw.subscribe(['ca://WF'], { 'ca://WF': 2048 }); // a wider one of the same channel
    const image = gw.subscribe(['ca://IMG'], { 'ca://IMG': 256 });
    return { gw, image, time: new TimeMachine(gw) };
  }

  it('asks at and play for the points the live subscriptions draw (the most; none where a widget takes the whole array)', async () => {
    const { gw, time } = screen();
    expect(gw.subscribedPoints()).toEqual({ 'ca://WF': 2048, 'ca://IMG': 256 });
    const at = time.goTo(1000);
    const [asked] = sent('at');
    expect(asked.ch).toEqual(['ca://SCALAR', 'ca://BOTH', 'ca://WF', 'ca://IMG']);
    expect(asked.pts).toEqual({ 'ca://WF': 2048, 'ca://IMG': 256 });
    // the answer's reduced values are what the widgets draw, as live ones (x and n, bin and n)
    const wf = { v: [0, 5, -5, 1], x: [0, 10, 20, 9999], n: 10000, t: 1, sev: 0, c: true };
    const img = { v: { dtype: 'u2', shape: [2, 2], b64: 'AQACAAMABAA=' }, bin: 4, n: [8, 8], t: 1, sev: 0, c: true };
    gw.handle({ op: 'at', id: asked.id, t: 1000, ch: asked.ch!, val: [null, null, wf, img], meta: [null, null, null, null], src: [null, null, 'arrays', 'arrays'], err: [null, null, null, null] } as never);
    await at;
    expect(gw.channel('ca://WF').current).toMatchObject({ x: [0, 10, 20, 9999], n: 10000 });
    expect(gw.channel('ca://IMG').current).toMatchObject({ bin: 4, n: [8, 8] });
    void time.play(10).catch(() => undefined);
    expect(sent('play')[0].pts).toEqual({ 'ca://WF': 2048, 'ca://IMG': 256 });
    time.close();
  });

  it('asks a channel again when its widget draws other points (zoomed in: the whole image), and only then', async () => {
    const { gw, image, time } = screen();
    const at = time.goTo(1000);
    const [first] = sent('at');
    gw.handle({ op: 'at', id: first.id, t: 1000, ch: first.ch!, val: first.ch!.map(() => null), meta: first.ch!.map(() => null), src: first.ch!.map(() => null), err: first.ch!.map(() => null) } as never);
    await at;
    gw.unsubscribe(image);
    gw.subscribe(['ca://IMG'], { 'ca://IMG': 256 }); // the same points: shown already
    await settled();
    expect(sent('at').length).toBe(1);
    const zoomed = gw.subscribe(['ca://IMG']);
    await settled();
    const again = sent('at');
    expect(again.length).toBe(2);
    expect(again[1].ch).toEqual(['ca://IMG']);
    expect(again[1].pts).toBeUndefined(); // the whole image
    gw.unsubscribe(zoomed);
    time.close();
  });
});

