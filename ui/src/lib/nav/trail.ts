/**
 * The back path of a linked site: a screen opened from a link remembers the
 * screens it was opened from (their names, macros and titles), kept in the
 * browser history entry itself, so that Back, Forward and a reload keep it.
 */
import type { Macros } from '../macros';

/** One screen on the way: its name, the query (macros) it was opened with, its title. */
export interface Crumb {
  name: string;
  query: string;
  title: string;
}

/** Context key: a function giving the screen a widget stands on, as a crumb (null: not a page's screen). */
export const HERE = Symbol('synoptic-here');

/** How many screens a back path keeps (the oldest drop off). */
export const MAX_TRAIL = 20;

/** The hash route of a screen opened with `macros`. */
export function screenHash(screen: string, macros: Macros = {}): string {
  const query = new URLSearchParams(macros).toString();
  return `#/screen/${encodeURIComponent(screen)}${query ? `?${query}` : ''}`;
}

/** The back path of the current history entry (empty when the screen was not opened from a link). */
export function currentTrail(state: unknown = history.state): Crumb[] {
  const trail = (state as { trail?: unknown } | null)?.trail;
  return Array.isArray(trail) ? (trail.filter((c) => c && typeof c.name === 'string') as Crumb[]) : [];
}

/** Open `hash` in this page, the screen `from` (with its own back path) added to the new entry's back path. */
export function navigate(hash: string, from: Crumb | null, trail: Crumb[] = currentTrail()): void {
  const next = from ? [...trail, from].slice(-MAX_TRAIL) : [];
  history.pushState({ trail: next }, '', hash);
  dispatchEvent(new HashChangeEvent('hashchange'));
}
