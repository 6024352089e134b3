/**
 * One screen being edited: the undo history of its document, the selection, the
 * local draft, and the save flow against the store (conflict → reload or
 * overwrite; invalid → the pointer; store down → the draft stays).
 */
import type { Screen } from '../screen';
import type { ScreensApi, WriteResult } from './api';
import { clearDraft, saveDraft, type Draft } from './drafts';
import { apply as applyCmd, canRedo, canUndo, createHistory, redo, reset, undo, type History } from './history';
import { byId, describeChanges, fromScreen, toScreen, type EditorDoc } from './model';
import { prune, type Selection } from './selection';

/** The store calls the editor needs (ScreensApi, or a test's in-memory store). */
export type Store = Pick<ScreensApi, 'load' | 'save' | 'remove' | 'revert'>;

export type SaveStatus =
  | { kind: 'idle' }
  | { kind: 'saving' }
  | { kind: 'saved'; revision: number; at: string }
  | { kind: 'conflict'; revision: number; by: string; at: string }
  | { kind: 'invalid'; pointer: string; reason: string }
  | { kind: 'error'; error: string; reason: string };

export interface EditorOptions {
  store: Store;
  storage: Storage | null;
  size: (type: string) => [number, number];
  /** how long after the last change the draft is written (ms) */
  draftDelayMs?: number;
  /** how long a read of the store may hold the queue of store calls (ms; default 20 s) */
  loadTimeoutMs?: number;
}

export class ScreenEditor {
  name = $state('');
  /** the store revision this document is based on (0: not in the store yet) */
  base = $state(0);
  history = $state.raw<History<EditorDoc>>(createHistory({ head: { title: 'New screen' }, widgets: [], seq: 1 }));
  selection = $state.raw<Selection>([]);
  status = $state.raw<SaveStatus>({ kind: 'idle' });
  /** the document differs from what the store holds at `base` */
  dirty = $state(false);
  /** the draft could not be written (storage full or blocked) */
  draftFailed = $state(false);

  readonly #opts: EditorOptions;
  #saved: EditorDoc | null = null;
  /** what the opened draft said it changed */
  #draftSummary = '';
  /** the name the last save went to (a new screen's is not its name until saved) */
  #target = '';
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** how many times a document was opened (a reload replaces what a queued save would write) */
  #opened = 0;
  /** the store operations in flight, one after the other */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: EditorOptions) {
    this.#opts = opts;
  }

  get doc(): EditorDoc {
    return this.history.present;
  }

  get canUndo(): boolean {
    return canUndo(this.history);
  }

  get canRedo(): boolean {
    return canRedo(this.history);
  }

  /**
   * Whether a save would write something: a screen not in the store yet (or a
   * draft not compared with it) always can; one in the store only when the
   * document differs from the store's copy at `base`.
   */
  get canSave(): boolean {
    if (!this.name || this.base === 0 || !this.#saved) return true;
    return this.dirty && !sameScreen(toScreen(this.doc), toScreen(this.#saved));
  }

  /**
   * What changed since the store's copy, in words ('' for nothing): a save's
   * default summary, and the draft's. A draft restored on an older revision than
   * the store's says what its own session recorded.
   */
  changeSummary(): string {
    if (!this.#saved && this.base > 0) return this.#draftSummary;
    return describeChanges(this.#saved, this.doc);
  }

  /**
   * Start from a screen of the store (base = its revision), or from a draft of it.
   * A draft opened over the store's copy (not standing in for it) that holds
   * exactly what the store holds now is no change (a save that landed though its
   * answer was lost, say): it is dropped and the screen opens clean.
   */
  open(name: string, screen: Screen, base: number, draft?: Draft | null): void {
    const stored = fromScreen(screen, this.#opts.size);
    const restored = draft ? fromScreen(draft.screen, this.#opts.size) : null;
    if (draft && restored && screen !== draft.screen && base > 0 && draft.base <= base && sameScreen(toScreen(restored), toScreen(stored))) {
      clearDraft(this.#opts.storage, name);
      draft = null;
    }
    this.#opened++;
    this.name = name;
    this.base = draft ? draft.base : base;
    // a draft of a new screen, or of an older revision, is not compared with the store's copy
    this.#saved = draft && (draft.base !== base || base === 0) ? null : stored;
    this.#draftSummary = draft?.summary ?? '';
    this.history = reset(this.history, draft && restored ? restored : stored);
    this.selection = [];
    this.status = { kind: 'idle' };
    this.dirty = !!draft;
  }

  /** Run a command on the document as one undo step (steps with the same merge key in a row are one). */
  apply(command: (doc: EditorDoc) => EditorDoc, merge: string | null = null): void {
    const before = this.history;
    this.history = applyCmd(before, command, merge);
    if (this.history !== before) this.#changed();
  }

  undo(): void {
    this.history = undo(this.history);
    this.#changed();
  }

  redo(): void {
    this.history = redo(this.history);
    this.#changed();
  }

  select(sel: Selection): void {
    this.selection = sel;
  }

  #changed(): void {
    this.selection = prune(this.selection, (id) => !!byId(this.doc, id));
    this.dirty = this.doc !== this.#saved;
    if (this.#timer) clearTimeout(this.#timer);
    const delay = this.#opts.draftDelayMs ?? 250;
    if (delay <= 0) this.flushDraft();
    else this.#timer = setTimeout(() => this.flushDraft(), delay);
  }

  /** Write the draft now (or drop it when nothing differs from the store). */
  flushDraft(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.dirty) {
      clearDraft(this.#opts.storage, this.name);
      return;
    }
    const draft: Draft = { name: this.name, base: this.base, screen: toScreen(this.doc), at: Date.now(), summary: this.changeSummary() };
    this.draftFailed = !saveDraft(this.#opts.storage, draft);
  }

  /**
   * Save the document under `name` (a new screen's name is given here), based on
   * `base` (default: the revision the document is based on when the save runs).
   * Store operations run one at a time, in call order: the document at the call
   * is saved, unless a reload in flight replaces it first (then what it brought).
   */
  save(summary: string, name = this.name, base?: number): Promise<WriteResult> {
    this.#target = name;
    this.status = { kind: 'saving' };
    const clicked = this.doc;
    const opened = this.#opened;
    return this.#serial(async () => {
      // what was on screen at the click, unless a reload in flight replaced it meanwhile
      const doc = this.#opened === opened ? clicked : this.doc;
      const screen = toScreen(doc);
      let result = await this.#write(() => this.#opts.store.save(name, screen, base ?? this.base, summary));
      if (!result.ok && result.error === 'conflict') result = await this.#ownWrite(name, screen, result);
      if (result.ok) {
        if (name !== this.name) clearDraft(this.#opts.storage, this.name);
        this.name = name;
        this.base = result.revision;
        this.#saved = doc;
        // an edit made while the save was in flight is not in the store
        this.dirty = this.doc !== doc;
        this.status = { kind: 'saved', revision: result.revision, at: result.at };
        if (!this.dirty) clearDraft(this.#opts.storage, name);
        else this.flushDraft();
      } else {
        this.status = statusOf(result);
        this.flushDraft(); // whatever went wrong, the edits stay in the draft
      }
      return result;
    });
  }

  /**
   * A conflict whose newer revision holds exactly this document is our own earlier
   * write (one whose answer was lost, e.g. to a timeout): take it as saved.
   */
  async #ownWrite(name: string, screen: Screen, conflict: WriteResult & { error: 'conflict' }): Promise<WriteResult> {
    let stored: Awaited<ReturnType<Store['load']>>;
    try {
      stored = await this.#load(name);
    } catch {
      return conflict;
    }
    if (!stored || stored.revision !== conflict.revision || !sameScreen(stored.screen, screen)) return conflict;
    return { ok: true, name, revision: conflict.revision, at: conflict.at, by: conflict.by };
  }

  /** After a conflict: write this document over the newer revision. */
  overwrite(summary: string): Promise<WriteResult> {
    const base = this.status.kind === 'conflict' ? this.status.revision : this.base;
    return this.save(summary, this.#target || this.name, base);
  }

  /** After a conflict (or any time): drop the edits and take what the store holds. */
  reload(): Promise<boolean> {
    return this.#serial(() => this.#reload());
  }

  async #reload(): Promise<boolean> {
    const loaded = await this.#load(this.name);
    if (!loaded) return false;
    clearDraft(this.#opts.storage, this.name);
    this.open(this.name, loaded.screen, loaded.revision);
    return true;
  }

  /**
   * The store's copy changed (a `screen` frame). Decided after the store
   * operations in flight, so that the frame of this editor's own save (which may
   * come before the save's answer) is recognised as such:
   * - `ignored`: not newer than what the document is based on;
   * - `deleted`: the screen was deleted;
   * - `adopted`: nothing was edited here, the new revision is now the document;
   * - `announce`: there are edits here (or one was made while the revision was
   *   read, or it could not be read): the next save will meet the conflict.
   */
  external(revision: number, deleted = false): Promise<ExternalOutcome> {
    return this.#serial(async () => {
      if (revision <= this.base) return 'ignored';
      if (deleted) return 'deleted';
      if (this.dirty) return 'announce';
      const before = this.history;
      let loaded: Awaited<ReturnType<Store['load']>>;
      try {
        loaded = await this.#load(this.name);
      } catch {
        return 'announce';
      }
      if (!loaded || loaded.revision <= this.base) return 'ignored';
      if (this.history !== before) return 'announce';
      this.open(this.name, loaded.screen, loaded.revision);
      return 'adopted';
    });
  }

  revert(revision: number): Promise<WriteResult> {
    return this.#serial(async () => {
      const result = await this.#write(() => this.#opts.store.revert(this.name, revision, this.base));
      if (result.ok) await this.#reload();
      else this.status = statusOf(result);
      return result;
    });
  }

  remove(): Promise<WriteResult> {
    return this.#serial(async () => {
      const result = await this.#write(() => this.#opts.store.remove(this.name, this.base));
      if (result.ok) {
        clearDraft(this.#opts.storage, this.name);
        this.dirty = false;
      } else this.status = statusOf(result);
      return result;
    });
  }

  /** A read of the store, bounded: a read that never answers must not hold the saves queued behind it. */
  #load(name: string): ReturnType<Store['load']> {
    const ms = this.#opts.loadTimeoutMs ?? 20_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the screen store did not answer within ${ms / 1000} s`)), ms);
    });
    return Promise.race([this.#opts.store.load(name), late]).finally(() => clearTimeout(timer));
  }

  /** Run `op` after every store operation called before it. */
  #serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(op);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** A write whose store throws (a test's store, a bug) is a failure, never a save stuck in 'saving'. */
  async #write(op: () => Promise<WriteResult>): Promise<WriteResult> {
    try {
      return await op();
    } catch (e) {
      return { ok: false, error: 'failed', reason: (e as Error).message };
    }
  }
}

/** What a `screen` frame meant to the editor (ScreenEditor.external). */
export type ExternalOutcome = 'ignored' | 'deleted' | 'adopted' | 'announce';

/** Whether two screens hold the same JSON (member order aside). */
export function sameScreen(a: Screen, b: Screen): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0))) : x,
  );
}

function statusOf(result: WriteResult): SaveStatus {
  if (result.ok) return { kind: 'saved', revision: result.revision, at: result.at };
  if (result.error === 'conflict') return { kind: 'conflict', revision: result.revision, by: result.by, at: result.at };
  if (result.error === 'invalid') return { kind: 'invalid', pointer: result.pointer, reason: result.reason };
  return { kind: 'error', error: result.error, reason: result.reason };
}
