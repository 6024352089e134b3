/**
 * A list kept sorted as items come and go, without sorting it again and without
 * copying it: the items are held in chunks of a few hundred, so a change costs a
 * binary search and a move within one chunk (O(log n + chunk)), whatever the
 * list's length. A storm of thousands of changes a second over a list of tens of
 * thousands touches only the chunks it lands in. The comparison must be a total
 * order (no two items equal) that does not change while an item is held: an item
 * that changes is removed as it was and added as it is.
 */

/** What a table reads of its rows: how many, and the few in view. */
export interface Rows<T> {
  readonly length: number;
  /** the rows `start` to `end` (exclusive; default: to the last) as a new array */
  slice(start?: number, end?: number): T[];
}

/** Items per chunk when a list is made; a chunk twice this long is split. */
const CHUNK = 256;

export class SortedList<T> implements Rows<T> {
  /** the items in order, in chunks (none empty) */
  #chunks: T[][] = [];
  #length = 0;
  /** the items as one array (made when read, dropped on a change) */
  #flat: T[] | null = [];
  readonly #compare: (a: T, b: T) => number;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  /** The items, in order, as one array (made on the first read after a change: O(n)). */
  get items(): readonly T[] {
    if (this.#flat === null) this.#flat = this.#chunks.flat();
    return this.#flat;
  }

  get length(): number {
    return this.#length;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const chunk of this.#chunks) yield* chunk;
  }

  /** Hold exactly `items` (sorted once). */
  reset(items: Iterable<T>): void {
    const all = [...items].sort(this.#compare);
    this.#chunks = [];
    for (let i = 0; i < all.length; i += CHUNK) this.#chunks.push(all.slice(i, i + CHUNK));
    this.#length = all.length;
    this.#flat = null;
  }

  /** The items `start` to `end` (exclusive; default: to the last) as a new array. */
  slice(start = 0, end = this.#length): T[] {
    start = Math.max(0, start);
    end = Math.min(this.#length, end);
    const out: T[] = [];
    let offset = 0;
    for (const chunk of this.#chunks) {
      if (offset >= end) break;
      const next = offset + chunk.length;
      if (next > start) for (let i = Math.max(start, offset); i < Math.min(end, next); i++) out.push(chunk[i - offset]);
      offset = next;
    }
    return out;
  }

  /** The items `start` to `end` as rows, read when drawn (nothing copied now). */
  view(start: number, end: number): Rows<T> {
    const length = Math.max(0, end - start);
    return { length, slice: (a = 0, b = length) => this.slice(start + Math.max(0, a), start + Math.min(length, b)) };
  }

  /** The first index whose item does not sort before `item` (binary search). */
  lowerBound(item: T): number {
    return this.partition((x) => this.#compare(x, item) < 0);
  }

  /** The first index where `before(item)` is false; `before` holds for a prefix of the list. */
  partition(before: (item: T) => boolean): number {
    const chunks = this.#chunks;
    const lo = this.#firstChunk(before);
    let offset = 0;
    for (let c = 0; c < lo; c++) offset += chunks[c].length;
    if (lo === chunks.length) return offset;
    return offset + bisect(chunks[lo], before);
  }

  /**
   * Remove `removed` (items held, compared as they were when added) and add `added`.
   * An item of `removed` that is not held is ignored.
   */
  update(removed: readonly T[], added: readonly T[]): void {
    if (!removed.length && !added.length) return;
    for (const item of removed) this.#remove(item);
    for (const item of added) this.#insert(item);
    this.#flat = null;
  }

  /** The chunk that holds `item`'s place: the first whose last item does not sort before it. */
  #chunkFor(item: T): number {
    return this.#firstChunk((last) => this.#compare(last, item) < 0);
  }

  /** The first chunk whose last item `before` is false for (`before` holds for a prefix). */
  #firstChunk(before: (item: T) => boolean): number {
    const chunks = this.#chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (before(chunk[chunk.length - 1])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #insert(item: T): void {
    const chunks = this.#chunks;
    this.#length++;
    if (!chunks.length) {
      chunks.push([item]);
      return;
    }
    const c = Math.min(this.#chunkFor(item), chunks.length - 1);
    const chunk = chunks[c];
    chunk.splice(bisect(chunk, (x) => this.#compare(x, item) < 0), 0, item);
    if (chunk.length >= 2 * CHUNK) chunks.splice(c + 1, 0, chunk.splice(CHUNK));
  }

  #remove(item: T): void {
    const chunks = this.#chunks;
    let c = this.#chunkFor(item);
    let at = c < chunks.length ? bisect(chunks[c], (x) => this.#compare(x, item) < 0) : -1;
    if (at < 0 || chunks[c][at] !== item) {
      // compared otherwise than it was added: found by identity (slow, never expected)
      c = chunks.findIndex((chunk) => chunk.includes(item));
      if (c < 0) return;
      at = chunks[c].indexOf(item);
    }
    const chunk = chunks[c];
    chunk.splice(at, 1);
    this.#length--;
    if (!chunk.length) chunks.splice(c, 1);
    else if (chunk.length < CHUNK / 4 && c + 1 < chunks.length && chunk.length + chunks[c + 1].length < 2 * CHUNK)
      chunks.splice(c, 2, chunk.concat(chunks[c + 1])); // no run of tiny chunks
  }
}

/** The first index of `items` where `before` is false (it holds for a prefix). */
function bisect<T>(items: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(items[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
