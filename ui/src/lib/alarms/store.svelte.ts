/**
 * The alarms as this page holds them: the counts every screen's header shows, and
 * (while an alarm page or summary widget is open) the listed alarms, kept from the
 * gateway's `alarms` frames (docs/protocol.md). One store per page; it follows the
 * list only while something needs it, the counts always.
 */
import type { Gateway } from '../transport/gateway.svelte';
import type { AlarmsFrame, AlarmState } from '../transport/protocol';
import { SortedList, type Rows } from './sorted';

export const SEVERITY_NAMES = ['NONE', 'MINOR', 'MAJOR', 'INVALID'] as const;

/**
 * Milliseconds of an animation frame spent placing changes in the sorted list: a
 * storm's thousands are placed over a few frames (the rest wait for the next), so
 * the page keeps drawing at the display's rate.
 */
export const SETTLE_BUDGET_MS = 3;
/** Items placed between looks at the clock. */
const SETTLE_STEP = 64;
/** The area tree's counts are drawn again at most this often (ms): a storm changes them every frame. */
export const COUNTS_EVERY_MS = 250;

/**
 * The state with its times as numbers: msgpack gives 64-bit integers (ns since the
 * epoch) as BigInt, which no arithmetic here mixes with numbers (ns as a double keeps
 * a quarter of a microsecond). In place (no copy per state: a storm brings
 * thousands a second): the state was decoded for this page.
 */
export function normalise(s: AlarmState): AlarmState {
  const n = (x: unknown) => (typeof x === 'bigint' ? Number(x) : (x as number));
  s.since = n(s.since);
  s.t = n(s.t);
  s.at = n(s.at);
  s.n = n(s.n);
  if (typeof s.v === 'bigint') s.v = Number(s.v);
  if (s.ack) s.ack.t = n(s.ack.t);
  if (s.shelf) {
    s.shelf.t = n(s.shelf.t);
    s.shelf.until = n(s.shelf.until);
  }
  return s;
}

/** Listed: active (latched severity above 0) or shelved, and still in the tree. */
export function isListed(s: AlarmState): boolean {
  return !s.gone && (s.lat > 0 || s.shelf !== undefined);
}

/** Active, not acknowledged, not shelved: what the header counts and what sounds. */
export function isUnacknowledged(s: AlarmState): boolean {
  return !s.gone && s.lat > 0 && !s.ackd && s.shelf === undefined;
}

/** Most severe first, then most recent first; shelved alarms last. */
export function compareAlarms(a: AlarmState, b: AlarmState): number {
  const shelved = Number(a.shelf !== undefined) - Number(b.shelf !== undefined);
  if (shelved) return shelved;
  const acked = Number(a.ackd) - Number(b.ackd);
  if (acked) return acked;
  return b.lat - a.lat || b.since - a.since || (a.ch < b.ch ? -1 : a.ch > b.ch ? 1 : 0);
}

/** Whether `area` is `under` or below it (`under` empty: the whole tree). */
export function inArea(area: string, under: string): boolean {
  return !under || area === under || area.startsWith(under + '/');
}

/** What the alarm page's tree shows of an area: unacknowledged, active, worst latched severity. */
export type AreaCount = { unack: number; active: number; worst: number };

/** Counts per area node, kept as alarms come and go (every prefix of each alarm's area). */
export class AreaCounts {
  /** per node: unacknowledged, and active per latched severity (0 unused) */
  #nodes = new Map<string, { unack: number; bySev: number[] }>();
  /** each area's nodes, from everything ('') down (`Plant/Power` → '', `Plant`, `Plant/Power`) */
  #prefixes = new Map<string, string[]>();

  clear(): void {
    this.#nodes.clear();
  }

  /** Count `s` in (`sign` 1) or out (-1); only active, unshelved alarms count. */
  add(s: AlarmState, sign: 1 | -1): void {
    if (s.shelf !== undefined || s.lat <= 0) return;
    let prefixes = this.#prefixes.get(s.area);
    if (!prefixes) {
      const parts = s.area.split('/');
      prefixes = ['', ...parts.map((_, i) => parts.slice(0, i + 1).join('/'))];
      if (this.#prefixes.size > 100_000) this.#prefixes.clear(); // bounded: areas come from the tree
      this.#prefixes.set(s.area, prefixes);
    }
    const sev = Math.min(s.lat, 3);
    for (const key of prefixes) {
      let node = this.#nodes.get(key);
      if (!node) this.#nodes.set(key, (node = { unack: 0, bySev: [0, 0, 0, 0] }));
      node.bySev[sev] += sign;
      if (!s.ackd) node.unack += sign;
      if (sign < 0 && node.bySev[1] + node.bySev[2] + node.bySev[3] === 0) this.#nodes.delete(key);
    }
  }

  /** The counts under `area` ('': everything; undefined: nothing active there). */
  get(area: string): AreaCount | undefined {
    const node = this.#nodes.get(area);
    if (!node) return undefined;
    const { unack, bySev } = node;
    return { unack, active: bySev[1] + bySev[2] + bySev[3], worst: bySev[3] ? 3 : bySev[2] ? 2 : 1 };
  }

  /** A new map of every node of the tree with an active alarm. */
  snapshot(): Map<string, AreaCount> {
    const out = new Map<string, AreaCount>();
    for (const key of this.#nodes.keys()) if (key) out.set(key, this.get(key)!);
    return out;
  }
}

export class AlarmStore {
  /** active, unacknowledged and not shelved; active; shelved */
  unack = $state(0);
  active = $state(0);
  shelved = $state(0);
  /** whether the alarm service beats (false: the list may be old) */
  service = $state(true);
  /** whether the list is held (a page follows it) */
  loaded = $state(false);
  /**
   * bumped when the list changed, at most once per animation frame (the list itself
   * is not reactive: it can hold 100 000)
   */
  version = $state(0);
  /**
   * bumped when the counts per area changed, at most every `COUNTS_EVERY_MS` (the
   * area tree redraws on it, not on every frame of a storm)
   */
  countsVersion = $state(0);
  /** wall time (ms) of the frame that changed the list last */
  changedAt = 0;

  #byChannel = new Map<string, AlarmState>();
  /** the listed alarms in page order, as of the last settle */
  #sorted = new SortedList<AlarmState>(compareAlarms);
  #counts = new AreaCounts();
  /** channels changed since the last settle, with what the sorted list holds of them */
  #pending = new Map<string, AlarmState | undefined>();
  #bumpScheduled = false;
  /** the counts changed since `countsVersion` was bumped; when it was (performance.now) */
  #countsChanged = false;
  #countsAt = -Infinity;
  #countsTimer: ReturnType<typeof setTimeout> | undefined;
  #gateway: Gateway;
  #following = false;
  #listUsers = 0;
  #listener = (frame: AlarmsFrame) => this.apply(frame);
  #listeners = new Set<(frame: AlarmsFrame) => void>();

  constructor(gateway: Gateway) {
    this.#gateway = gateway;
  }

  /** Follow the counts (the header): from now on, for the page's life. */
  start(): void {
    if (this.#following) return;
    this.#following = true;
    this.#gateway.followAlarms(this.#listUsers > 0, this.#listener);
  }

  /** Follow the list while the returned function is not called (an alarm page, a widget). */
  useList(): () => void {
    if (this.#listUsers++ === 0) {
      this.#following = true;
      this.#gateway.followAlarms(true, this.#listener); // one follower: its mode changes
    }
    return () => {
      if (--this.#listUsers === 0) {
        this.#gateway.followAlarms(false, this.#listener);
        this.#reset([]);
        this.loaded = false;
        this.version++;
        this.#bumpCounts();
      }
    };
  }

  /** Called with every frame applied (tests and benchmarks time pages with it). */
  onFrame(listener: (frame: AlarmsFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Apply one `alarms` frame: the counts at once; the list's changes are held by
   * channel and placed in the sorted list once per animation frame (or when read).
   */
  apply(frame: AlarmsFrame): void {
    this.unack = frame.unack;
    this.active = frame.act;
    this.shelved = frame.shelved;
    this.service = frame.svc;
    let changed = false;
    if (frame.all && this.#listUsers > 0) {
      const listed: AlarmState[] = [];
      for (const raw of frame.all) {
        const s = normalise(raw);
        if (isListed(s)) listed.push(s);
      }
      this.#reset(listed);
      this.loaded = true;
      changed = true;
    }
    if (frame.up && this.#listUsers > 0) {
      for (const raw of frame.up) {
        const s = normalise(raw);
        const held = this.#byChannel.get(s.ch);
        if (held && held.n >= s.n) continue;
        if (!this.#pending.has(s.ch)) this.#pending.set(s.ch, held);
        if (isListed(s)) this.#byChannel.set(s.ch, s);
        else this.#byChannel.delete(s.ch);
        changed = true;
      }
    }
    if (changed) {
      this.changedAt = Date.now();
      this.#bump();
    }
    for (const listener of this.#listeners) listener(frame);
  }

  get(ch: string): AlarmState | undefined {
    return this.#byChannel.get(ch);
  }

  get size(): number {
    return this.#byChannel.size;
  }

  /**
   * Every listed alarm, sorted (kept sorted as alarms change: read only). While an
   * animation frame is due to place changes, as of the last frame (the page reads
   * on `version`, bumped once they are placed).
   */
  sorted(): readonly AlarmState[] {
    this.#settleUnlessDue();
    return this.#sorted.items;
  }

  /**
   * The listed alarms under `area` (empty: all) whose channel, description, area or
   * status contain `text`, as rows read when drawn: the whole list (no area, no text)
   * is a view of the sorted list, nothing copied however long it is.
   */
  filtered(area: string, text: string, shelved: boolean): Rows<AlarmState> {
    this.#settleUnlessDue();
    const needle = text.trim().toLowerCase();
    // shelved alarms sort last: the whole of either view is a slice
    const sorted = this.#sorted;
    const cut = sorted.partition((s) => s.shelf === undefined);
    if (!area && !needle) return shelved ? sorted.view(cut, sorted.length) : sorted.view(0, cut);
    const out: AlarmState[] = [];
    for (const s of shelved ? sorted.slice(cut) : sorted.slice(0, cut)) {
      if (
        inArea(s.area, area) &&
        (!needle ||
          s.ch.toLowerCase().includes(needle) ||
          (s.desc ?? '').toLowerCase().includes(needle) ||
          s.area.toLowerCase().includes(needle) ||
          s.st.toLowerCase().includes(needle))
      )
        out.push(s);
    }
    return out;
  }

  /** The first `count` active, unshelved alarms under `area`, most severe first. */
  worst(area: string, count: number): AlarmState[] {
    this.#settleUnlessDue();
    const out: AlarmState[] = [];
    for (const s of this.#sorted) {
      if (out.length >= count || s.shelf !== undefined) break;
      if (s.lat > 0 && inArea(s.area, area)) out.push(s);
    }
    return out;
  }

  /** The counts under `area` ('': everything), undefined when nothing is active there. */
  countOf(area: string): AreaCount | undefined {
    this.#settleUnlessDue();
    return this.#counts.get(area);
  }

  /** Counts per area node (every prefix of each alarm's area): unacknowledged, active, worst. */
  countsByArea(): Map<string, AreaCount> {
    this.#settleUnlessDue();
    return this.#counts.snapshot();
  }

  #reset(listed: AlarmState[]): void {
    this.#byChannel.clear();
    this.#pending.clear();
    this.#counts.clear();
    for (const s of listed) {
      this.#byChannel.set(s.ch, s);
      this.#counts.add(s, 1);
    }
    this.#sorted.reset(this.#byChannel.values());
    this.#countsChanged = true;
  }

  /** Place the held changes now, unless an animation frame is due to (it bumps `version`). */
  #settleUnlessDue(): void {
    if (!this.#bumpScheduled) this.#settle(Infinity);
  }

  /**
   * Place the held changes in the sorted list and the counts, for at most
   * `budgetMs` (the rest stay held, each with what the list holds of it).
   */
  #settle(budgetMs: number): void {
    const pending = this.#pending;
    if (!pending.size) return;
    const removed: AlarmState[] = [];
    const added: AlarmState[] = [];
    const until = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    let done = 0;
    for (const [ch, before] of pending) {
      pending.delete(ch); // (deleting the entry read is safe while iterating a Map)
      const now = this.#byChannel.get(ch);
      if (before !== now) {
        if (before) {
          removed.push(before);
          this.#counts.add(before, -1);
        }
        if (now) {
          added.push(now);
          this.#counts.add(now, 1);
        }
        this.#countsChanged = true;
      }
      if (++done % SETTLE_STEP === 0) {
        this.#sorted.update(removed, added);
        removed.length = 0;
        added.length = 0;
        if (performance.now() >= until) break;
      }
    }
    this.#sorted.update(removed, added);
  }

  /**
   * One `version` bump per animation frame, however many frames came; changes left
   * after the frame's budget are placed in the next frames.
   */
  #bump(): void {
    if (this.#bumpScheduled) return;
    this.#bumpScheduled = true;
    this.#gateway.schedule(() => {
      this.#bumpScheduled = false;
      this.#settle(SETTLE_BUDGET_MS);
      this.version++;
      this.#bumpCounts();
      if (this.#pending.size) this.#bump();
    });
  }

  /** Bump `countsVersion` if the counts changed, at most every `COUNTS_EVERY_MS`. */
  #bumpCounts(): void {
    if (!this.#countsChanged || this.#countsTimer !== undefined) return;
    const wait = this.#countsAt + COUNTS_EVERY_MS - performance.now();
    if (wait > 0) {
      this.#countsTimer = setTimeout(() => {
        this.#countsTimer = undefined;
        this.#bumpCounts();
      }, wait);
      return;
    }
    this.#countsChanged = false;
    this.#countsAt = performance.now();
    this.countsVersion++;
  }
}
