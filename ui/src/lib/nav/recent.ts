/** Screens opened lately in this browser (the screen list offers them first), kept in localStorage. */
export interface Recent {
  name: string;
  query: string;
  title: string;
  /** when it was opened (ms since the epoch) */
  at: number;
}

const KEY = 'synoptic-recent';
export const MAX_RECENT = 12;

type Store = Pick<Storage, 'getItem' | 'setItem'> | null;

function store(): Store {
  try {
    return window.localStorage;
  } catch {
    return null; // storage off (a private window's policy): nothing is kept
  }
}

/** The screens opened lately, newest first. */
export function recentScreens(s: Store = store()): Recent[] {
  try {
    const list = JSON.parse(s?.getItem(KEY) ?? '[]') as unknown;
    return Array.isArray(list) ? list.filter((r) => r && typeof r.name === 'string').slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

/** Note that a screen was opened (with its macros), moving it first. */
export function noteOpened(entry: Omit<Recent, 'at'>, s: Store = store(), now = Date.now()): void {
  const rest = recentScreens(s).filter((r) => !(r.name === entry.name && r.query === entry.query));
  try {
    s?.setItem(KEY, JSON.stringify([{ ...entry, at: now }, ...rest].slice(0, MAX_RECENT)));
  } catch {
    // full or refused: the list is a convenience
  }
}
