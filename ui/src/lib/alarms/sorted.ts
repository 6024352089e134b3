/**
 * A list kept sorted as items come and go, without sorting it again: a few changes
 * are spliced in at their place (binary search), many at once are sorted among
 * themselves and merged in one copy of the list (O(n) moves, O(k log n) comparisons). The comparison must be a total order (no two items equal) that
 * does not change while an item is held: an item that changes is removed as it was
 * and added as it is.
 */
export class SortedList<T> {
  #items: T[] = [];
  readonly #compare: (a: T, b: T) => number;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  /** The items, in order (read only: the list owns the array). */
  get items(): readonly T[] {
    return this.#items;
  }

  get length(): number {
    return this.#items.length;
  }

  /** Hold exactly `items` (sorted once). */
  reset(items: Iterable<T>): void {
    this.#items = [...items].sort(this.#compare);
  }

  /** The first index whose item does not sort before `item` (binary search). */
  lowerBound(item: T): number {
    return this.partition((x) => this.#compare(x, item) < 0);
  }

  /** The first index where `before(item)` is false; `before` holds for a prefix of the list. */
  partition(before: (item: T) => boolean): number {
    let lo = 0;
    let hi = this.#items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.#items[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Remove `removed` (items held, compared as they were when added) and add `added`.
   * An item of `removed` that is not held is ignored. Every item is placed by binary
   * search; the array is copied once (a few changes: spliced in place).
   */
  update(removed: readonly T[], added: readonly T[]): void {
    if (removed.length + added.length <= 8) {
      for (const item of removed) this.#remove(item);
      for (const item of added) this.#items.splice(this.lowerBound(item), 0, item);
      return;
    }
    const items = this.#items;
    const drop: number[] = [];
    for (const item of removed) {
      const at = this.#indexOf(item);
      if (at >= 0) drop.push(at);
    }
    drop.sort((a, b) => a - b);
    const kept: T[] = new Array(items.length - drop.length);
    let o = 0;
    let from = 0;
    for (const at of drop) {
      if (at < from) continue; // the same item twice
      for (let x = from; x < at; x++) kept[o++] = items[x];
      from = at + 1;
    }
    for (let x = from; x < items.length; x++) kept[o++] = items[x];
    kept.length = o;
    this.#items = kept;
    if (!added.length) return;
    const fresh = [...added].sort(this.#compare);
    const out: T[] = new Array(kept.length + fresh.length);
    o = 0;
    from = 0;
    for (const item of fresh) {
      let lo = from;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.#compare(kept[mid], item) < 0) lo = mid + 1;
        else hi = mid;
      }
      for (let x = from; x < lo; x++) out[o++] = kept[x];
      out[o++] = item;
      from = lo;
    }
    for (let x = from; x < kept.length; x++) out[o++] = kept[x];
    this.#items = out;
  }

  /** Where `item` is held (-1: not held). */
  #indexOf(item: T): number {
    const at = this.lowerBound(item);
    if (this.#items[at] === item) return at;
    return this.#items.indexOf(item); // compared otherwise than it was added
  }

  #remove(item: T): void {
    const at = this.#indexOf(item);
    if (at >= 0) this.#items.splice(at, 1);
  }
}
