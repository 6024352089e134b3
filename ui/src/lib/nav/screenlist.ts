/**
 * The screen list with a few hundred screens: found by words (in the name, title, description or the
 * file an imported screen came from, every word somewhere), grouped by the display set it was imported
 * with and, inside a set, by folder, the set's home first.
 */
import type { ScreenEntry } from '../screen';

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

/** The screens matching `query`, by set (screens of no set first), then folder. */
export function groupScreens(entries: ScreenEntry[], query = ''): Group[] {
  const sets = new Map<string | null, ScreenEntry[]>();
  for (const e of entries) {
    if (!matches(e, query)) continue;
    const key = e.set ?? null;
    const list = sets.get(key);
    if (list) list.push(e);
    else sets.set(key, [e]);
  }
  const keys = [...sets.keys()].sort((a, b) => (a === null ? -1 : b === null ? 1 : a.localeCompare(b)));
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
    return {
      set,
      home: list.find((e) => e.home) ?? null,
      count: list.length,
      folders: [...folders.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([folder, screens]) => ({ folder, screens: screens.sort((a, b) => order(a).localeCompare(order(b))) })),
    };
  });
}
