/**
 * Screen documents read before they are opened: a link fetches the screen it opens
 * when it is shown (or pointed at), so that following it builds the screen at once,
 * in the click's own task, with no wait for the gateway. An entry is used once; the
 * page follows saves of the screens it holds (`watch`) and drops one on its save,
 * drops them all when it writes screens itself, and drops any older than MAX_AGE_MS.
 */
import { fetchScreen, screenChannels, type Screen } from '../screen';
import { effectiveMacros, expandScreen, queryMacros, type Macros } from '../macros';
import { pageFetch } from '../token';
import type { ScreenFrame } from '../transport/protocol';

/** How many screens are held at once (a screen of many links prefetches this many when shown). */
export const MAX_ENTRIES = 8;
/** An entry older than this is fetched again when opened. */
export const MAX_AGE_MS = 5 * 60_000;

/** What an entry needs of the gateway: following saves. */
export interface SaveWatcher {
  watchScreen(name: string, listener: (frame: ScreenFrame) => void): () => void;
}

interface Entry {
  promise: Promise<Screen>;
  /** the document, once in */
  screen: Screen | null;
  at: number;
  unwatch: () => void;
}

const entries = new Map<string, Entry>();

function drop(name: string): void {
  const e = entries.get(name);
  if (!e) return;
  entries.delete(name);
  e.unwatch();
}

/**
 * Start reading screen `name` unless it is held or on its way. `evict`: make room by
 * dropping the oldest entry (a link pointed at); without it a full cache reads nothing
 * (links shown). `fetcher`: the screen read (tests).
 */
export function prefetchScreen(name: string, watcher: SaveWatcher | null, evict = false, fetcher: typeof fetch = pageFetch): void {
  const held = entries.get(name);
  if (!name || (held && Date.now() - held.at < MAX_AGE_MS)) return;
  drop(name);
  if (entries.size >= MAX_ENTRIES) {
    if (!evict) return;
    drop(entries.keys().next().value as string);
  }
  const promise = fetchScreen(name, fetcher, false);
  // a save from now on makes the read stale: the entry goes (the screen is read again when opened)
  const entry: Entry = { promise, screen: null, at: Date.now(), unwatch: () => {} };
  entries.set(name, entry);
  entry.unwatch = watcher ? watcher.watchScreen(name, () => entries.get(name) === entry && drop(name)) : () => {};
  promise.then(
    (s) => void (entry.screen = s),
    () => entries.get(name) === entry && drop(name), // not cached: the opened screen reads (and reports) it itself
  );
}

/**
 * Take the entry for `name` (it is used once): the document when it is in, else the
 * read on its way; null when none is held (or it is too old).
 */
export function takePrefetched(name: string): { screen: Screen | null; promise: Promise<Screen> } | null {
  const e = entries.get(name);
  if (!e) return null;
  entries.delete(name);
  // the opened screen follows its saves from the same task on: stop following them
  // after it (so that the watched set does not change twice)
  setTimeout(e.unwatch, 0);
  if (Date.now() - e.at >= MAX_AGE_MS) return null;
  return { screen: e.screen, promise: e.promise };
}

/** What subscribing ahead needs of the gateway. */
export interface AheadSubscriber {
  subscribeAhead(uris: string[]): void;
  /** a screen of this tab shows the past: its next screen opens live, nothing is asked ahead */
  readonly rewound: boolean;
}

/**
 * A link followed in this page: when the screen it opens is held, subscribe its
 * channels (with the macros the link passes, as the opened screen will) now, so that
 * their values are on their way while the page changes and the screen is built.
 */
export function subscribeAhead(name: string, macros: Macros, gateway: AheadSubscriber): void {
  const e = entries.get(name);
  if (!e?.screen || gateway.rewound || Date.now() - e.at >= MAX_AGE_MS) return;
  // the opened screen's macros come from its address (queryMacros), over its own
  const url = queryMacros(new URLSearchParams(macros).toString());
  gateway.subscribeAhead(screenChannels(expandScreen(e.screen, effectiveMacros(e.screen, url))));
}

/** Drop every entry (this page saved, deleted or imported screens). */
export function forgetScreens(): void {
  for (const name of [...entries.keys()]) drop(name);
}

/** Schedule a prefetch for when the page is idle (after the screen showing the link is built); returns its cancel. */
export function prefetchWhenIdle(name: string, watcher: SaveWatcher | null): () => void {
  const run = () => prefetchScreen(name, watcher);
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback(run, { timeout: 1000 });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(run, 50);
  return () => clearTimeout(id);
}
