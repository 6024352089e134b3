/**
 * Serves the browser-side channels of this tab (./kinds.ts): local values shared
 * by name across every screen open in the tab (kept while the tab lives), simulated
 * channels on timers, and
 * formulas re-evaluated when a value they read is committed. Each channel runs while
 * a subscription holds it (counted) and stops with the last.
 */
import type { ChannelState } from '../channel.svelte';
import type { MetaMsg, ValueMsg } from '../protocol';
import { evaluate, formulaInputs, formulaText, parseFormula, type Node, type Operand } from './formula';
import { isBrowserSide } from './kinds';
import { coerce, parseLocal, parseSim, type LocValue } from './values';

/** What the engine needs of the gateway: channel states, and a way to publish their values. */
export interface Host {
  channel(uri: string): ChannelState;
  /** publish a value (with metadata on the first) to the widgets at the next frame */
  deliver(ch: ChannelState, value: ValueMsg, meta: MetaMsg | null): void;
}

interface Local {
  value: LocValue;
  meta: MetaMsg;
  users: Set<ChannelState>;
}

interface Running {
  count: number;
  stop: () => void;
}

const nowNs = () => Date.now() * 1e6;
const errorMeta = (why: string): MetaMsg => ({ dt: 'str', shape: [], w: false, desc: why });

export class BrowserChannels {
  #host: Host;
  #locals = new Map<string, Local>();
  #running = new Map<string, Running>();

  constructor(host: Host) {
    this.#host = host;
  }

  /** Start serving `uri` (or count one more user of it). */
  acquire(uri: string): void {
    const run = this.#running.get(uri);
    if (run) {
      run.count++;
      return;
    }
    const ch = this.#host.channel(uri);
    let stop: () => void;
    try {
      stop = uri.startsWith('loc://') ? this.#startLocal(ch) : uri.startsWith('sim://') ? this.#startSim(ch) : this.#startFormula(ch);
    } catch (e) {
      // a malformed channel: shown disconnected, with the reason as its description
      this.#host.deliver(ch, { v: null, t: nowNs(), sev: 3, c: false, st: (e as Error).message }, errorMeta((e as Error).message));
      stop = () => {};
    }
    this.#running.set(uri, { count: 1, stop });
  }

  /** One user fewer of `uri`; stops it with the last. */
  release(uri: string): void {
    const run = this.#running.get(uri);
    if (!run || --run.count > 0) return;
    this.#running.delete(uri);
    run.stop();
  }

  /** Write a local channel (every channel of that name sees it); throws for a value of the wrong type. */
  write(uri: string, v: unknown): void {
    const spec = parseLocal(uri);
    const local = this.#locals.get(spec.name);
    if (!local) throw new Error(`${uri} is not open`);
    local.value = coerce(local.meta, v);
    for (const ch of local.users) this.#host.deliver(ch, { v: local.value, t: nowNs(), sev: 0, c: true }, null);
  }

  #startLocal(ch: ChannelState): () => void {
    const spec = parseLocal(ch.uri);
    let local = this.#locals.get(spec.name);
    if (!local) {
      local = { value: spec.value, meta: spec.meta, users: new Set() }; // the first declaration's initial value wins
      this.#locals.set(spec.name, local);
    }
    local.users.add(ch);
    this.#host.deliver(ch, { v: local.value, t: nowNs(), sev: 0, c: true }, local.meta);
    const name = spec.name;
    // the value stays for the life of the tab: a screen opened from this one (or this one
    // opened again) finds what was written, not the initial value
    return () => this.#locals.get(name)?.users.delete(ch);
  }

  #startSim(ch: ChannelState): () => void {
    const sim = parseSim(ch.uri);
    let k = 0;
    let last: LocValue | null = null;
    const tick = (meta: MetaMsg | null) => {
      const v = sim.next(k++);
      if (v === null) this.#host.deliver(ch, { v: last, t: nowNs(), sev: 3, c: false }, meta);
      else this.#host.deliver(ch, { v: (last = v), t: nowNs(), sev: 0, c: true }, meta);
    };
    tick(sim.meta);
    if (!sim.periodMs) return () => {};
    const timer = setInterval(() => tick(null), sim.periodMs);
    return () => clearInterval(timer);
  }

  #startFormula(ch: ChannelState): () => void {
    const tree: Node = parseFormula(formulaText(ch.uri) ?? '');
    const inputs = formulaInputs(tree);
    const states = new Map(inputs.map((u) => [u, this.#host.channel(u)]));
    const local = inputs.filter(isBrowserSide);
    for (const u of local) this.acquire(u);
    let first = true;
    let queued = false;
    const lookup = (uri: string): Operand | null => operand(states.get(uri)?.current ?? null);
    const compute = () => {
      queued = false;
      const r = evaluate(tree, lookup);
      if (!r) return;
      const v = Array.isArray(r.v) ? r.v : r.v;
      const meta: MetaMsg | null = first ? { dt: typeof v === 'string' ? 'str' : 'f8', shape: Array.isArray(v) ? [v.length] : [], w: false, native: 'formula' } : null;
      first = false;
      this.#host.deliver(ch, { v, t: nowNs(), sev: r.sev, c: true }, meta);
    };
    // an input's commit runs its painters inside the gateway's frame: evaluate just after it
    const schedule = () => {
      if (queued) return;
      queued = true;
      queueMicrotask(compute);
    };
    const unwatch = [...states.values()].map((s) => s.watch(schedule));
    return () => {
      for (const u of unwatch) u();
      for (const u of local) this.release(u);
    };
  }
}

/** A committed value as a formula operand, null when there is none. */
function operand(value: ValueMsg | null): Operand | null {
  if (!value || value.v === null || value.v === undefined) return null;
  const v = value.v;
  const sev = value.c === false ? 3 : value.sev;
  if (typeof v === 'number' || typeof v === 'string') return { v, sev };
  if (typeof v === 'bigint' || typeof v === 'boolean') return { v: Number(v), sev };
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return { v: Array.from(v as ArrayLike<number>, Number), sev };
  return null;
}
