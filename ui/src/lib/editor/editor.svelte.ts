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
  /** the name the last save went to (a new screen's is not its name until saved) */
  #target = '';
  #timer: ReturnType<typeof setTimeout> | null = null;

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

  /** What changed since the store's copy, in words ('' for nothing): a save's default summary. */
  changeSummary(): string {
    return describeChanges(this.#saved, this.doc);
  }

  /** Start from a screen of the store (base = its revision), or from a draft of it. */
  open(name: string, screen: Screen, base: number, draft?: Draft | null): void {
    this.name = name;
    this.base = draft ? draft.base : base;
    const stored = fromScreen(screen, this.#opts.size);
    this.#saved = draft && draft.base !== base ? null : stored;
    this.history = reset(this.history, draft ? fromScreen(draft.screen, this.#opts.size) : stored);
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
    const draft: Draft = { name: this.name, base: this.base, screen: toScreen(this.doc), at: Date.now() };
    this.draftFailed = !saveDraft(this.#opts.storage, draft);
  }

  /** Save the document under `name` (a new screen's name is given here). */
  async save(summary: string, name = this.name, base = this.base): Promise<WriteResult> {
    const doc = this.doc;
    this.#target = name;
    this.status = { kind: 'saving' };
    const result = await this.#opts.store.save(name, toScreen(doc), base, summary);
    if (result.ok) {
      if (name !== this.name) clearDraft(this.#opts.storage, this.name);
      this.name = name;
      this.base = result.revision;
      this.#saved = doc;
      this.dirty = this.doc !== doc;
      this.status = { kind: 'saved', revision: result.revision, at: result.at };
      if (!this.dirty) clearDraft(this.#opts.storage, name);
      else this.flushDraft();
    } else {
      this.status = statusOf(result);
      this.flushDraft(); // whatever went wrong, the edits stay in the draft
    }
    return result;
  }

  /** After a conflict: write this document over the newer revision. */
  overwrite(summary: string): Promise<WriteResult> {
    const base = this.status.kind === 'conflict' ? this.status.revision : this.base;
    return this.save(summary, this.#target || this.name, base);
  }

  /** After a conflict (or any time): drop the edits and take what the store holds. */
  async reload(): Promise<boolean> {
    const loaded = await this.#opts.store.load(this.name);
    if (!loaded) return false;
    clearDraft(this.#opts.storage, this.name);
    this.open(this.name, loaded.screen, loaded.revision);
    return true;
  }

  /** The store's copy changed (a `screen` frame): adopt it when nothing is edited here. */
  async external(revision: number): Promise<void> {
    if (revision <= this.base || this.dirty) return;
    await this.reload();
  }

  async revert(revision: number): Promise<WriteResult> {
    const result = await this.#opts.store.revert(this.name, revision, this.base);
    if (result.ok) await this.reload();
    else this.status = statusOf(result);
    return result;
  }

  async remove(): Promise<WriteResult> {
    const result = await this.#opts.store.remove(this.name, this.base);
    if (result.ok) {
      clearDraft(this.#opts.storage, this.name);
      this.dirty = false;
    } else this.status = statusOf(result);
    return result;
  }
}

function statusOf(result: WriteResult): SaveStatus {
  if (result.ok) return { kind: 'saved', revision: result.revision, at: result.at };
  if (result.error === 'conflict') return { kind: 'conflict', revision: result.revision, by: result.by, at: result.at };
  if (result.error === 'invalid') return { kind: 'invalid', pointer: result.pointer, reason: result.reason };
  return { kind: 'error', error: result.error, reason: result.reason };
}
