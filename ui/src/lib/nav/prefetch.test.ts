import { afterEach, describe, expect, it, vi } from 'vitest';
import { forgetScreens, MAX_AGE_MS, MAX_ENTRIES, prefetchScreen, takePrefetched, type SaveWatcher } from './prefetch';
import type { ScreenFrame } from '../transport/protocol';

/** A screen API answering every read with a screen titled by its name, counting the reads. */
function api() {
  const reads: string[] = [];
  const fetcher = (async (url: string) => {
    reads.push(String(url));
    const name = decodeURIComponent(String(url).split('/').pop()!);
    if (name === 'missing') return new Response('{}', { status: 404, statusText: 'Not Found' });
    return new Response(JSON.stringify({ title: name, widgets: [] }), { status: 200 });
  }) as typeof fetch;
  return { reads, fetcher };
}

/** Save notices as a gateway gives them, and the watched names. */
function watcher() {
  const listeners = new Map<string, (f: ScreenFrame) => void>();
  const w: SaveWatcher = {
    watchScreen(name, listener) {
      listeners.set(name, listener);
      return () => listeners.delete(name);
    },
  };
  const saved = (name: string) => listeners.get(name)?.({ op: 'screen', name, rev: 2, by: 'ann', at: '' } as unknown as ScreenFrame);
  return { w, listeners, saved };
}

const settled = () => new Promise((r) => setTimeout(r, 0));

describe('screens read ahead for links', () => {
  afterEach(() => {
    forgetScreens();
    vi.useRealTimers();
  });

  it('gives the document once, at once when it is in, and follows its saves meanwhile', async () => {
    const { reads, fetcher } = api();
    const { w, listeners } = watcher();
    prefetchScreen('vacuum', w, false, fetcher);
    prefetchScreen('vacuum', w, false, fetcher); // held: not read twice
    expect(reads).toEqual(['api/screens/vacuum']);
    expect(listeners.has('vacuum')).toBe(true);
    await settled();
    const taken = takePrefetched('vacuum');
    expect(taken?.screen?.title).toBe('vacuum');
    expect(takePrefetched('vacuum')).toBeNull();
    await settled();
    expect(listeners.has('vacuum')).toBe(false); // the opened screen follows its saves itself
  });

  it('hands over a read still on its way', async () => {
    const { fetcher } = api();
    prefetchScreen('rf', null, false, fetcher);
    const taken = takePrefetched('rf');
    expect(taken?.screen).toBeNull();
    expect((await taken!.promise).title).toBe('rf');
  });

  it('drops a screen saved since it was read, and all of them when this page writes', async () => {
    const { reads, fetcher } = api();
    const { w, saved } = watcher();
    prefetchScreen('a', w, false, fetcher);
    prefetchScreen('b', w, false, fetcher);
    await settled();
    saved('a');
    expect(takePrefetched('a')).toBeNull();
    prefetchScreen('a', w, false, fetcher); // read again
    expect(reads.filter((r) => r.endsWith('/a'))).toHaveLength(2);
    forgetScreens();
    expect(takePrefetched('a')).toBeNull();
    expect(takePrefetched('b')).toBeNull();
  });

  it('keeps no failed read (the opened screen reads and reports it itself)', async () => {
    const { fetcher } = api();
    prefetchScreen('missing', null, false, fetcher);
    await settled();
    await settled();
    expect(takePrefetched('missing')).toBeNull();
  });

  it('holds at most MAX_ENTRIES: shown links wait, a link pointed at makes room', async () => {
    const { reads, fetcher } = api();
    for (let i = 0; i < MAX_ENTRIES + 2; i++) prefetchScreen(`s${i}`, null, false, fetcher);
    expect(reads).toHaveLength(MAX_ENTRIES);
    prefetchScreen('pointed', null, true, fetcher);
    await settled();
    expect(takePrefetched('s0')).toBeNull(); // the oldest made room
    expect(takePrefetched('pointed')?.screen?.title).toBe('pointed');
  });

  it('gives nothing older than MAX_AGE_MS', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { fetcher } = api();
    prefetchScreen('old', null, false, fetcher);
    await settled();
    vi.setSystemTime(Date.now() + MAX_AGE_MS + 1);
    expect(takePrefetched('old')).toBeNull();
  });
});
