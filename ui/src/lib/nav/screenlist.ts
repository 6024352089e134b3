/**
 * The screen list with a few hundred screens: found by words (in the name, title, description or the
 * file an imported screen came from, every word somewhere) or by a channel it shows (the gateway's
 * answer, {@link ChannelHit}), grouped by the display set it was imported with and, inside a set, by
 * folder, the set's home first; while a query is typed, best matches first.
 */
import type { ChannelHit, ScreenEntry } from '../screen';

/** One folder of a set (`''`: the set's root), its screens, home first then by file. */
export interface Folder {
  folder: string;
  screens: ScreenEntry[];
}

/** Screens of one set (`set` null: those not imported with a set). */
export interface Group {
  set: string | null;
  home: ScreenEntry | null;
  folders: Folder[];
  count: number;
}

/** Whether `e` holds every word of `query` (case ignored). */
export function matches(e: ScreenEntry, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = `${e.name} ${e.title} ${e.description ?? ''} ${e.file ?? ''}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

function folderOf(file: string): string {
  const at = file.lastIndexOf('/');
  return at < 0 ? '' : file.slice(0, at);
}

/**
 * How well `e` matches `query`: 0 by its name or title, 1 by its description or file, 2 + its place
 * among `hits` by a channel it shows, null not at all.
 */
export function rankOf(e: ScreenEntry, query: string, hits: Map<string, number>): number | null {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return 0;
  const named = `${e.name} ${e.title}`.toLowerCase();
  if (words.every((w) => named.includes(w))) return 0;
  if (matches(e, query)) return 1;
  const at = hits.get(e.name);
  return at === undefined ? null : 2 + at;
}

/**
 * The screens matching `query` (by words, or by a channel among `hits`), by set (screens of no set
 * first), then folder; while a query is typed, sets, folders and screens with the best match first.
 */
export function groupScreens(entries: ScreenEntry[], query = '', hits: ChannelHit[] = []): Group[] {
  const hitAt = new Map(hits.map((h, i) => [h.name, i]));
  const rank = new Map<string, number>();
  const sets = new Map<string | null, ScreenEntry[]>();
  for (const e of entries) {
    const r = rankOf(e, query, hitAt);
    if (r === null) continue;
    rank.set(e.name, r);
    const key = e.set ?? null;
    const list = sets.get(key);
    if (list) list.push(e);
    else sets.set(key, [e]);
  }
  const best = (list: ScreenEntry[]) => Math.min(...list.map((e) => rank.get(e.name) ?? 0));
  const keys = [...sets.keys()].sort((a, b) => best(sets.get(a)!) - best(sets.get(b)!) || (a === null ? -1 : b === null ? 1 : a.localeCompare(b)));
  return keys.map((set) => {
    const list = sets.get(set)!;
    const folders = new Map<string, ScreenEntry[]>();
    for (const e of list) {
      const f = set === null ? '' : folderOf(e.file ?? '');
      const l = folders.get(f);
      if (l) l.push(e);
      else folders.set(f, [e]);
    }
    const order = (e: ScreenEntry) => `${e.home ? 0 : 1}${e.file ?? ''}\u0000${e.name}`;
    const byRank = (a: ScreenEntry, b: ScreenEntry) => rank.get(a.name)! - rank.get(b.name)! || order(a).localeCompare(order(b));
    return {
      set,
      home: list.find((e) => e.home) ?? null,
      count: list.length,
      folders: [...folders.entries()].sort(([a, x], [b, y]) => best(x) - best(y) || a.localeCompare(b)).map(([folder, screens]) => ({ folder, screens: screens.sort(byRank) })),
    };
  });
}
