/** The selected widget ids, in the order they were picked (the first is the reference of align). */

export type Selection = readonly string[];

/** A click on a widget: plain replaces the selection, shift/ctrl toggles the widget in it. */
export function click(sel: Selection, id: string, additive: boolean): Selection {
  if (!additive) return sel.length === 1 && sel[0] === id ? sel : [id];
  return sel.includes(id) ? sel.filter((s) => s !== id) : [...sel, id];
}

/** A rubber band's result: the ids it meets, added to the selection when additive. */
export function band(sel: Selection, ids: readonly string[], additive: boolean): Selection {
  if (!additive) return [...ids];
  return [...sel, ...ids.filter((id) => !sel.includes(id))];
}

/** Drop ids that no longer exist (after undo, delete, reload). */
export function prune(sel: Selection, exists: (id: string) => boolean): Selection {
  const kept = sel.filter(exists);
  return kept.length === sel.length ? sel : kept;
}
