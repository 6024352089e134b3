/**
 * The alarms as this page holds them: the counts every screen's header shows, and
 * (while an alarm page or summary widget is open) the listed alarms, kept from the
 * gateway's `alarms` frames (docs/protocol.md). One store per page; it follows the
 * list only while something needs it, the counts always.
 */
import type { Gateway } from '../transport/gateway.svelte';
import type { AlarmsFrame, AlarmState } from '../transport/protocol';

export const SEVERITY_NAMES = ['NONE', 'MINOR', 'MAJOR', 'INVALID'] as const;

/**
 * The state with its times as numbers: msgpack gives 64-bit integers (ns since the
 * epoch) as BigInt, which no arithmetic here mixes with numbers (ns as a double keeps
 * a quarter of a microsecond).
 */
export function normalise(s: AlarmState): AlarmState {
  const n = (x: unknown) => (typeof x === 'bigint' ? Number(x) : (x as number));
  const out: AlarmState = { ...s, since: n(s.since), t: n(s.t), at: n(s.at), n: n(s.n) };
  if (typeof s.v === 'bigint') out.v = Number(s.v);
  if (s.ack) out.ack = { ...s.ack, t: n(s.ack.t) };
  if (s.shelf) out.shelf = { ...s.shelf, t: n(s.shelf.t), until: n(s.shelf.until) };
  return out;
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

export class AlarmStore {
  /** active, unacknowledged and not shelved; active; shelved */
  unack = $state(0);
  active = $state(0);
  shelved = $state(0);
  /** whether the alarm service beats (false: the list may be old) */
  service = $state(true);
  /** whether the list is held (a page follows it) */
  loaded = $state(false);
  /** bumped on every change of the list (the list itself is not reactive: it can hold 100 000) */
  version = $state(0);
  /** wall time (ms) of the frame that changed the list last */
  changedAt = 0;

  #byChannel = new Map<string, AlarmState>();
  #sorted: AlarmState[] | null = null;
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
        this.#byChannel.clear();
        this.#sorted = null;
        this.loaded = false;
        this.version++;
      }
    };
  }

  /** Called with every frame applied (tests and benchmarks time pages with it). */
  onFrame(listener: (frame: AlarmsFrame) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Apply one `alarms` frame. */
  apply(frame: AlarmsFrame): void {
    this.unack = frame.unack;
    this.active = frame.act;
    this.shelved = frame.shelved;
    this.service = frame.svc;
    let changed = false;
    if (frame.all && this.#listUsers > 0) {
      this.#byChannel.clear();
      for (const raw of frame.all) {
        const s = normalise(raw);
        if (isListed(s)) this.#byChannel.set(s.ch, s);
      }
      this.loaded = true;
      changed = true;
    }
    if (frame.up && this.#listUsers > 0) {
      for (const raw of frame.up) {
        const s = normalise(raw);
        const held = this.#byChannel.get(s.ch);
        if (held && held.n >= s.n) continue;
        if (isListed(s)) this.#byChannel.set(s.ch, s);
        else this.#byChannel.delete(s.ch);
        changed = true;
      }
    }
    if (changed) {
      this.#sorted = null;
      this.changedAt = Date.now();
      this.version++;
    }
    for (const listener of this.#listeners) listener(frame);
  }

  get(ch: string): AlarmState | undefined {
    return this.#byChannel.get(ch);
  }

  get size(): number {
    return this.#byChannel.size;
  }

  /** Every listed alarm, sorted (recomputed once per change). */
  sorted(): AlarmState[] {
    if (!this.#sorted) this.#sorted = [...this.#byChannel.values()].sort(compareAlarms);
    return this.#sorted;
  }

  /** The listed alarms under `area` (empty: all) whose channel, description, area or status contain `text`. */
  filtered(area: string, text: string, shelved: boolean): AlarmState[] {
    const needle = text.trim().toLowerCase();
    return this.sorted().filter(
      (s) =>
        (s.shelf !== undefined) === shelved &&
        inArea(s.area, area) &&
        (!needle ||
          s.ch.toLowerCase().includes(needle) ||
          (s.desc ?? '').toLowerCase().includes(needle) ||
          s.area.toLowerCase().includes(needle) ||
          s.st.toLowerCase().includes(needle)),
    );
  }

  /** Counts per area node (every prefix of each alarm's area): unacknowledged, active. */
  countsByArea(): Map<string, { unack: number; active: number; worst: number }> {
    const out = new Map<string, { unack: number; active: number; worst: number }>();
    for (const s of this.#byChannel.values()) {
      if (s.shelf !== undefined || s.lat === 0) continue;
      const parts = s.area.split('/');
      for (let i = 1; i <= parts.length; i++) {
        const key = parts.slice(0, i).join('/');
        let c = out.get(key);
        if (!c) out.set(key, (c = { unack: 0, active: 0, worst: 0 }));
        c.active++;
        if (!s.ackd) c.unack++;
        c.worst = Math.max(c.worst, s.lat);
      }
    }
    return out;
  }
}
