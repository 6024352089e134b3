/**
 * Undo/redo over immutable documents: each step is the document before a command
 * ran. Pure (every function returns a new History); bounded to `limit` steps, the
 * oldest dropped first. Steps with the same `merge` key in a row (a drag, typing
 * in one field) collapse into one.
 */

export interface History<T> {
  readonly past: readonly T[];
  readonly present: T;
  readonly future: readonly T[];
  readonly limit: number;
  /** merge key of the last step (null: the next step never merges) */
  readonly mergeKey: string | null;
}

/** Default number of undo steps kept. */
export const HISTORY_LIMIT = 200;

export function createHistory<T>(present: T, limit = HISTORY_LIMIT): History<T> {
  return { past: [], present, future: [], limit: Math.max(1, limit), mergeKey: null };
}

/**
 * Record `next` as the new present. A `merge` key equal to the previous step's
 * replaces the present without a new undo step; `next === present` is no step.
 */
export function push<T>(h: History<T>, next: T, merge: string | null = null): History<T> {
  if (next === h.present) return h;
  if (merge !== null && merge === h.mergeKey && h.past.length > 0) {
    return { ...h, present: next, future: [] };
  }
  const past = [...h.past, h.present];
  if (past.length > h.limit) past.splice(0, past.length - h.limit);
  return { ...h, past, present: next, future: [], mergeKey: merge };
}

/** Apply a command (a pure function of the document). */
export function apply<T>(h: History<T>, command: (doc: T) => T, merge: string | null = null): History<T> {
  return push(h, command(h.present), merge);
}

export function canUndo<T>(h: History<T>): boolean {
  return h.past.length > 0;
}

export function canRedo<T>(h: History<T>): boolean {
  return h.future.length > 0;
}

export function undo<T>(h: History<T>): History<T> {
  if (!h.past.length) return h;
  const present = h.past[h.past.length - 1];
  return { ...h, past: h.past.slice(0, -1), present, future: [h.present, ...h.future], mergeKey: null };
}

export function redo<T>(h: History<T>): History<T> {
  if (!h.future.length) return h;
  const [present, ...future] = h.future;
  return { ...h, past: [...h.past, h.present], present, future, mergeKey: null };
}

/** Replace the whole history with one document (after a load or a reload from the store). */
export function reset<T>(h: History<T>, present: T): History<T> {
  return createHistory(present, h.limit);
}
