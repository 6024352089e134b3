import { describe, expect, it } from 'vitest';
import type { Screen } from '../screen';
import type { Loaded, WriteResult } from './api';
import { draftNames, loadDraft, saveDraft } from './drafts';
import { ScreenEditor, type Store } from './editor.svelte';
import { addWidgets, moveWidgets, toScreen } from './model';

const size = (): [number, number] => [2, 2];

/** The store contract in memory: revisions, 409 on a stale base, 422 on a widget without type. */
class MemoryStore implements Store {
  revisions: { screen: Screen; by: string }[] = [];
  down = false;
  /** while set, a save is stored at once but answered only when it resolves (the answer is slower than the watch) */
  gate: Promise<void> | null = null;
  /** while set, a load answers only when it resolves */
  loadGate: Promise<void> | null = null;
  loads = 0;

  put(screen: Screen, by = 'other'): number {
    this.revisions.push({ screen, by });
    return this.revisions.length;
  }

  async load(): Promise<Loaded | null> {
    this.loads++;
    const at = this.revisions.length;
    if (this.loadGate) await this.loadGate;
    const last = this.revisions[at - 1];
    return last ? { screen: structuredClone(last.screen), revision: at, editable: true } : null;
  }

  async loadNow(): Promise<Loaded | null> {
    const last = this.revisions.at(-1);
    return last ? { screen: structuredClone(last.screen), revision: this.revisions.length, editable: true } : null;
  }

  async save(_name: string, screen: Screen, base: number): Promise<WriteResult> {
    if (this.down) return { ok: false, error: 'store_unavailable', reason: 'NATS is down' };
    if (base !== this.revisions.length) return { ok: false, error: 'conflict', revision: this.revisions.length, by: this.revisions.at(-1)?.by ?? '', at: 'then' };
    const bad = screen.widgets.findIndex((w) => !w.type);
    if (bad >= 0) return { ok: false, error: 'invalid', pointer: `/widgets/${bad}/type`, reason: 'required' };
    const revision = this.put(structuredClone(screen), 'me');
    if (this.gate) await this.gate;
    return { ok: true, name: 'n', revision, at: 'now', by: 'me' };
  }

  async remove(): Promise<WriteResult> {
    return { ok: true, name: 'n', revision: this.put({ title: 'x', widgets: [] }), at: 'now', by: 'me' };
  }

  async revert(_name: string, revision: number, base: number): Promise<WriteResult> {
    if (base !== this.revisions.length) return { ok: false, error: 'conflict', revision: this.revisions.length, by: '', at: '' };
    const r = this.put(structuredClone(this.revisions[revision - 1].screen), 'me');
    return { ok: true, name: 'n', revision: r, at: 'now', by: 'me' };
  }
}

function setup(storage: Storage = window.localStorage) {
  storage.clear();
  const store = new MemoryStore();
  const first: Screen = { title: 'S', widgets: [{ type: 'label', channels: ['ca://A'] }] };
  store.put(first, 'alice');
  const ed = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
  ed.open('s', structuredClone(first), 1);
  return { store, ed, storage };
}

/** The same value with every object's keys in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversedKeys(v)]));
}

const label = { type: 'label' as const, channels: ['ca://B'], x: 1, y: 5, w: 2, h: 2 };

describe('ScreenEditor', () => {
  it('an edit is dirty and kept as a draft; undo back to the stored document clears it', () => {
    const { ed, storage } = setup();
    expect(ed.dirty).toBe(false);
    ed.apply((d) => addWidgets(d, [label]).doc);
    expect(ed.dirty).toBe(true);
    expect(loadDraft(storage, 's')!.screen.widgets).toHaveLength(2);
    expect(loadDraft(storage, 's')!.base).toBe(1);
    ed.undo();
    expect(ed.dirty).toBe(false);
    expect(loadDraft(storage, 's')).toBeNull();
    ed.redo();
    expect(ed.doc.widgets).toHaveLength(2);
  });

  it('a draft survives a reload: a new editor opens it, dirty, on its base revision', () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => addWidgets(d, [label]).doc);
    const again = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    const loaded = { screen: store.revisions[0].screen, revision: 1 };
    again.open('s', loaded.screen, loaded.revision, loadDraft(storage, 's'));
    expect(again.dirty).toBe(true);
    expect(again.doc.widgets).toHaveLength(2);
    expect(draftNames(storage)).toEqual(['s']);
  });

  it('saves: a new revision, clean, no draft', async () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 3, 0));
    const r = await ed.save('moved');
    expect(r.ok).toBe(true);
    expect(ed.base).toBe(2);
    expect(ed.dirty).toBe(false);
    expect(ed.status).toEqual({ kind: 'saved', revision: 2, at: 'now' });
    expect(store.revisions[1].screen.widgets[0]).toMatchObject({ x: 4, y: 1 });
    expect(loadDraft(storage, 's')).toBeNull();
  });

  it('a stale base is a conflict; overwrite writes over the newer revision', async () => {
    const { ed, store } = setup();
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    ed.apply((d) => moveWidgets(d, ['w1'], 1, 0));
    await ed.save('mine');
    expect(ed.status).toEqual({ kind: 'conflict', revision: 2, by: 'bob', at: 'then' });
    expect(ed.dirty).toBe(true);
    await ed.overwrite('mine, over bob');
    expect(ed.status.kind).toBe('saved');
    expect(store.revisions).toHaveLength(3);
    expect(store.revisions[2].screen.title).toBe('S');
  });

  it('a write whose answer was lost is found on retry: the conflict holding this very document is a save', async () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 3, 0));
    const sent = toScreen(ed.doc);
    store.put(reversedKeys(sent) as Screen, 'me'); // stored (its keys in another order), the answer lost
    const r = await ed.save('retry');
    expect(r).toMatchObject({ ok: true, revision: 2 });
    expect(ed.status).toEqual({ kind: 'saved', revision: 2, at: 'then' });
    expect(ed.dirty).toBe(false);
    expect(store.revisions).toHaveLength(2);
    expect(loadDraft(storage, 's')).toBeNull();
    ed.apply((d) => moveWidgets(d, ['w1'], 1, 0));
    store.put(structuredClone(store.revisions[1].screen), 'bob'); // same content, but not the document being saved
    expect((await ed.save('again')).ok).toBe(false);
    expect(ed.status.kind).toBe('conflict');
  });

  it('a conflict resolved by reload takes the store’s document and drops the draft', async () => {
    const { ed, store, storage } = setup();
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    ed.apply((d) => moveWidgets(d, ['w1'], 1, 0));
    await ed.save('mine');
    expect(await ed.reload()).toBe(true);
    expect(ed.doc.head.title).toBe('theirs');
    expect(ed.base).toBe(2);
    expect(ed.dirty).toBe(false);
    expect(loadDraft(storage, 's')).toBeNull();
  });

  it('invalid: the pointer comes back; store down: the draft stays', async () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => addWidgets(d, [{ ...label, type: '' as never }]).doc);
    await ed.save('bad');
    expect(ed.status).toEqual({ kind: 'invalid', pointer: '/widgets/1/type', reason: 'required' });
    store.down = true;
    ed.apply((d) => moveWidgets(d, ['w1'], 1, 0));
    await ed.save('while down');
    expect(ed.status).toMatchObject({ kind: 'error', error: 'store_unavailable' });
    expect(loadDraft(storage, 's')!.screen.widgets[0]).toMatchObject({ x: 2 });
  });

  it('a save from elsewhere is adopted only when nothing is edited here', async () => {
    const { ed, store } = setup();
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    await ed.external(2);
    expect(ed.doc.head.title).toBe('theirs');
    ed.apply((d) => addWidgets(d, [label]).doc);
    store.put({ title: 'third', widgets: [] }, 'bob');
    await ed.external(3);
    expect(ed.doc.head.title).toBe('theirs');
  });

  it('reverts to an old revision as a new one', async () => {
    const { ed, store } = setup();
    store.put({ title: 'two', widgets: [] }, 'bob');
    await ed.reload();
    await ed.revert(1);
    expect(store.revisions).toHaveLength(3);
    expect(ed.doc.head.title).toBe('S');
    expect(ed.base).toBe(3);
  });

  it('storage that refuses the draft is reported, not thrown', () => {
    const full = { ...window.localStorage, setItem: () => { throw new Error('QuotaExceededError'); }, getItem: () => null, removeItem: () => {}, clear: () => {}, key: () => null, length: 0 } as unknown as Storage;
    expect(saveDraft(full, { name: 's', base: 1, screen: { title: 't', widgets: [] }, at: 0 })).toBe(false);
    const store = new MemoryStore();
    const ed = new ScreenEditor({ store, storage: full, size, draftDelayMs: 0 });
    ed.open('s', { title: 'S', widgets: [] }, 0);
    ed.apply((d) => addWidgets(d, [label]).doc);
    expect(ed.draftFailed).toBe(true);
  });
});

describe('ScreenEditor canSave', () => {
  it('a stored screen with no change has nothing to save; an edit can be saved, and an edit back cannot', async () => {
    const { ed } = setup();
    expect(ed.canSave).toBe(false);
    ed.apply((d) => moveWidgets(d, [ed.doc.widgets[0].id], 1, 0));
    expect(ed.canSave).toBe(true);
    ed.apply((d) => moveWidgets(d, [ed.doc.widgets[0].id], -1, 0)); // a new document equal to the store's
    expect(ed.dirty).toBe(true);
    expect(ed.canSave).toBe(false);
    ed.apply((d) => addWidgets(d, [label]).doc);
    expect((await ed.save('added')).ok).toBe(true);
    expect(ed.canSave).toBe(false); // saved: the store holds it
  });

  it('a new screen can always be saved, blank or not; so can a draft of a revision older than the store', () => {
    const { ed, store, storage } = setup();
    const fresh = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    fresh.open('', { title: 'New', widgets: [] }, 0);
    expect(fresh.canSave).toBe(true);
    const gone = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    gone.open('t', { title: 'T', widgets: [] }, 0);
    expect(gone.canSave).toBe(true);
    ed.apply((d) => addWidgets(d, [label]).doc);
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    const later = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    later.open('s', store.revisions[1].screen, 2, loadDraft(storage, 's'));
    expect(later.canSave).toBe(true);
  });
});

describe('ScreenEditor change summary', () => {
  it('describes the edits since the store’s copy', () => {
    const { ed } = setup();
    expect(ed.changeSummary()).toBe('');
    ed.apply((d) => addWidgets(d, [label]).doc);
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    expect(ed.changeSummary()).toBe('added 1 label; moved 1 widget');
  });
});

/** A promise and its resolve: the test decides when an answer arrives. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Bob saved revision 2; its frame came and its read is held until `g.open()`. */
function bobSavedWhileReading() {
  const { ed, store } = setup();
  store.put({ title: 'theirs', widgets: [] }, 'bob');
  const g = gate();
  store.loadGate = g.promise;
  return { ed, store, g, seen: ed.external(2) };
}

describe('ScreenEditor races between a save, the `screen` frames and edits', () => {
  it('the frame of its own save comes before the answer, nothing edited: ignored, clean, no reload', async () => {
    const { ed, store, storage } = setup();
    const g = gate();
    store.gate = g.promise;
    const saving = ed.save('unchanged');
    await Promise.resolve();
    await Promise.resolve();
    expect(store.revisions).toHaveLength(2); // stored, the answer not back yet
    const seen = ed.external(2);
    g.open();
    expect((await saving).ok).toBe(true);
    expect(await seen).toBe('ignored');
    expect(store.loads).toBe(0);
    expect(ed.dirty).toBe(false);
    expect(ed.base).toBe(2);
    expect(ed.status).toMatchObject({ kind: 'saved', revision: 2 });
    expect(loadDraft(storage, 's')).toBeNull();
  });

  it('the frame of its own save comes before the answer, edits saved: not announced as someone else’s', async () => {
    const { ed, store } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    const g = gate();
    store.gate = g.promise;
    const saving = ed.save('moved');
    const seen = ed.external(2);
    g.open();
    await saving;
    expect(await seen).toBe('ignored');
    expect(ed.dirty).toBe(false);
    expect(ed.doc.widgets[0].spec.x).toBe(3);
  });

  it('an edit between the click and the answer stays unsaved, in the draft on the new base; undoing it is clean', async () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    const g = gate();
    store.gate = g.promise;
    const saving = ed.save('moved');
    ed.apply((d) => addWidgets(d, [label]).doc);
    const seen = ed.external(2);
    g.open();
    await saving;
    expect(await seen).toBe('ignored');
    expect(ed.base).toBe(2);
    expect(ed.dirty).toBe(true);
    expect(ed.changeSummary()).toBe('added 1 label');
    expect(loadDraft(storage, 's')).toMatchObject({ base: 2 });
    expect(loadDraft(storage, 's')!.screen.widgets).toHaveLength(2);
    ed.undo();
    expect(ed.dirty).toBe(false);
    expect(loadDraft(storage, 's')).toBeNull();
  });

  it('an edit while someone else’s revision is being read is kept and announced, not overwritten', async () => {
    const { ed, g, seen } = bobSavedWhileReading();
    await Promise.resolve();
    ed.apply((d) => addWidgets(d, [label]).doc);
    g.open();
    expect(await seen).toBe('announce');
    expect(ed.doc.head.title).toBe('S');
    expect(ed.doc.widgets).toHaveLength(2);
    expect(ed.dirty).toBe(true);
    expect(ed.base).toBe(1); // the next save meets the conflict
    await ed.save('mine');
    expect(ed.status).toMatchObject({ kind: 'conflict', revision: 2, by: 'bob' });
  });

  it('a save clicked while someone else’s revision is being read waits for it and saves on it', async () => {
    const { ed, store, g, seen } = bobSavedWhileReading();
    const saving = ed.save('again');
    expect(ed.status.kind).toBe('saving');
    g.open();
    expect(await seen).toBe('adopted');
    const r = await saving;
    expect(r).toMatchObject({ ok: true, revision: 3 });
    expect(store.revisions[2].screen.title).toBe('theirs');
    expect(ed.dirty).toBe(false);
    expect(ed.base).toBe(3);
  });

  it('two frames in a row: one read, the second is not newer than what it brought', async () => {
    const { ed, store } = setup();
    store.put({ title: 'two', widgets: [] }, 'bob');
    store.put({ title: 'three', widgets: [] }, 'bob');
    const [a, b] = await Promise.all([ed.external(2), ed.external(3)]);
    expect([a, b]).toEqual(['adopted', 'ignored']);
    expect(store.loads).toBe(1);
    expect(ed.doc.head.title).toBe('three');
    expect(ed.base).toBe(3);
  });

  it('a delete is named; a frame of a revision not newer than the base is ignored', async () => {
    const { ed } = setup();
    expect(await ed.external(1)).toBe('ignored');
    expect(await ed.external(2, true)).toBe('deleted');
  });

  it('a draft that matches the store (its save landed, the answer was lost) opens clean at the store’s revision', async () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    const draft = loadDraft(storage, 's')!;
    expect(draft.base).toBe(1);
    store.put(structuredClone(draft.screen), 'me'); // revision 2 holds the draft
    const again = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    const loaded = (await store.loadNow())!;
    again.open('s', loaded.screen, loaded.revision, loadDraft(storage, 's'));
    expect(again.dirty).toBe(false);
    expect(again.base).toBe(2);
    expect(loadDraft(storage, 's')).toBeNull();
    // a draft that differs from the store stays a draft, on its own base
    again.apply((d) => moveWidgets(d, ['w1'], 1, 0));
    const third = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    third.open('s', loaded.screen, loaded.revision, loadDraft(storage, 's'));
    expect(third.dirty).toBe(true);
    expect(third.doc.widgets[0].spec.x).toBe(4);
  });

  it('a draft standing in for an unreadable store is kept, even though it is the document opened', () => {
    const { ed, storage } = setup();
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    const draft = loadDraft(storage, 's')!;
    const again = new ScreenEditor({ store: new MemoryStore(), storage, size, draftDelayMs: 0 });
    again.open('s', draft.screen, draft.base, draft);
    expect(again.dirty).toBe(true);
    expect(loadDraft(storage, 's')).not.toBeNull();
  });

  it('a store that throws is a failed save with the edits in the draft, never stuck saving', async () => {
    const { ed, store, storage } = setup();
    store.save = () => Promise.reject(new Error('boom'));
    ed.apply((d) => moveWidgets(d, ['w1'], 2, 0));
    expect(await ed.save('x')).toMatchObject({ ok: false, error: 'failed', reason: 'boom' });
    expect(ed.status).toMatchObject({ kind: 'error', error: 'failed' });
    expect(ed.dirty).toBe(true);
    expect(loadDraft(storage, 's')).not.toBeNull();
  });
});

describe('a draft names its changes', () => {
  it('the draft keeps what changed; restored on an older revision, that is the save’s summary', () => {
    const { ed, store, storage } = setup();
    ed.apply((d) => addWidgets(d, [label]).doc);
    expect(loadDraft(storage, 's')!.summary).toBe('added 1 label');
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    const again = new ScreenEditor({ store, storage, size, draftDelayMs: 0 });
    again.open('s', store.revisions[1].screen, 2, loadDraft(storage, 's'));
    expect(again.base).toBe(1);
    expect(again.changeSummary()).toBe('added 1 label');
  });

  it('a restored draft of a new screen is a new screen of its widgets', () => {
    const storage = window.localStorage;
    storage.clear();
    const ed = new ScreenEditor({ store: new MemoryStore(), storage, size, draftDelayMs: 0 });
    ed.open('', { title: 'New', widgets: [] }, 0);
    ed.apply((d) => addWidgets(d, [label, label]).doc);
    const draft = loadDraft(storage, '')!;
    expect(draft.summary).toBe('added 2 labels');
    const again = new ScreenEditor({ store: new MemoryStore(), storage, size, draftDelayMs: 0 });
    again.open('', draft.screen, 0, draft);
    expect(again.dirty).toBe(true);
    expect(again.changeSummary()).toBe('new screen of 2 widgets');
  });
});

describe('a store read that never answers', () => {
  it('does not hold the saves queued behind it', async () => {
    const { store, storage } = setup();
    const ed = new ScreenEditor({ store, storage, size, draftDelayMs: 0, loadTimeoutMs: 30 });
    ed.open('s', structuredClone(store.revisions[0].screen), 1);
    store.put({ title: 'theirs', widgets: [] }, 'bob');
    store.loadGate = new Promise(() => {}); // hangs
    const seen = ed.external(2);
    const saving = ed.save('mine');
    expect(await seen).toBe('announce');
    expect(await saving).toMatchObject({ ok: false, error: 'conflict', revision: 2 });
    await expect(ed.reload()).rejects.toThrow('did not answer within 0.03 s');
  });
});
