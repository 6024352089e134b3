import { describe, expect, it } from 'vitest';
import { apply, canRedo, canUndo, createHistory, push, redo, reset, undo } from './history';

describe('history', () => {
  it('undoes and redoes steps in order', () => {
    let h = createHistory(0);
    h = apply(h, (n) => n + 1);
    h = apply(h, (n) => n * 10);
    expect(h.present).toBe(10);
    h = undo(h);
    expect(h.present).toBe(1);
    h = undo(h);
    expect(h.present).toBe(0);
    expect(canUndo(h)).toBe(false);
    expect(undo(h)).toBe(h);
    h = redo(redo(h));
    expect(h.present).toBe(10);
    expect(canRedo(h)).toBe(false);
  });

  it('a new step after undo drops the redo branch', () => {
    let h = push(push(createHistory('a'), 'b'), 'c');
    h = undo(h);
    h = push(h, 'd');
    expect(h.present).toBe('d');
    expect(canRedo(h)).toBe(false);
    expect(undo(h).present).toBe('b');
  });

  it('keeps at least 100 steps and drops the oldest beyond its limit', () => {
    let h = createHistory(0);
    for (let i = 1; i <= 250; i++) h = push(h, i);
    let n = 0;
    while (canUndo(h)) {
      h = undo(h);
      n++;
    }
    expect(n).toBe(200);
    expect(h.present).toBe(50);
    const small = createHistory(0, 3);
    let s = small;
    for (let i = 1; i <= 5; i++) s = push(s, i);
    expect(s.past).toEqual([2, 3, 4]);
  });

  it('steps with the same merge key in a row are one undo step', () => {
    let h = createHistory({ x: 0 });
    h = push(h, { x: 1 }, 'drag');
    h = push(h, { x: 2 }, 'drag');
    h = push(h, { x: 3 }, 'drag');
    expect(undo(h).present).toEqual({ x: 0 });
    h = push(h, { x: 4 }, 'other');
    expect(undo(h).present).toEqual({ x: 3 });
    // an undo ends a merge run
    h = push(undo(h), { x: 5 }, 'other');
    expect(undo(h).present).toEqual({ x: 3 });
  });

  it('the same document is no step; reset clears both stacks', () => {
    const doc = { a: 1 };
    const h = createHistory(doc);
    expect(apply(h, (d) => d)).toBe(h);
    const r = reset(push(h, { a: 2 }), { a: 3 });
    expect(r.present).toEqual({ a: 3 });
    expect(canUndo(r) || canRedo(r)).toBe(false);
  });
});
