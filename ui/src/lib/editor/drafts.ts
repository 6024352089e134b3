/**
 * Unsaved edits kept in localStorage (one draft per screen), so that a reload or
 * a closed tab loses nothing. Storage that is missing, full or blocked is reported
 * (false), never thrown.
 */
import type { Screen } from '../screen';

export interface Draft {
  /** screen name ('' for a new screen not yet named) */
  name: string;
  /** the store revision the edits started from (0: a new screen) */
  base: number;
  screen: Screen;
  /** when the draft was written (ms since the epoch) */
  at: number;
  /** what it changes, in words (ScreenEditor.changeSummary) */
  summary?: string;
}

const PREFIX = 'synoptic.draft:';
const NEW = '(new)';

export function draftKey(name: string): string {
  return PREFIX + (name || NEW);
}

export function saveDraft(storage: Storage | null, draft: Draft): boolean {
  if (!storage) return false;
  try {
    storage.setItem(draftKey(draft.name), JSON.stringify(draft));
    return true;
  } catch {
    return false;
  }
}

export function loadDraft(storage: Storage | null, name: string): Draft | null {
  let text: string | null = null;
  try {
    text = storage?.getItem(draftKey(name)) ?? null;
  } catch {
    return null;
  }
  if (!text) return null;
  try {
    const d = JSON.parse(text) as Draft;
    if (!d || typeof d !== 'object' || !d.screen || !Array.isArray(d.screen.widgets) || typeof d.base !== 'number') return null;
    return d;
  } catch {
    return null;
  }
}

export function clearDraft(storage: Storage | null, name: string): void {
  try {
    storage?.removeItem(draftKey(name));
  } catch {
    /* nothing kept, nothing to clear */
  }
}

/** Names of the screens with a draft in this browser. */
export function draftNames(storage: Storage | null): string[] {
  const out: string[] = [];
  try {
    if (!storage) return out;
    for (let i = 0; i < storage.length; i++) {
      const k = storage.key(i);
      if (k?.startsWith(PREFIX)) out.push(k === PREFIX + NEW ? '' : k.slice(PREFIX.length));
    }
  } catch {
    /* no storage: no drafts */
  }
  return out;
}
