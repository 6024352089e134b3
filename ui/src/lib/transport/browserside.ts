/**
 * Channels the browser serves itself (local values, simulated channels, formulas;
 * ./local/kinds.ts): which of a screen's channels they are, when they count as
 * live, and the engine that serves them (its own chunk: loaded by the first screen
 * that uses one).
 */
import type { ChannelState, Liveness } from './channel.svelte';
import { normaliseUri } from './channels';
import type { BrowserChannels } from './local/engine';
import { isBrowserSide, isFormula, isLocalWritable, quotedInputs } from './local/kinds';
import type { MetaMsg, ValueMsg } from './protocol';
import type { PutResult } from './types';

/**
 * Split channels into those the gateway serves (with the ones formulas read, each
 * once) and those the browser serves itself.
 */
export function splitBrowserSide(uris: string[]): [string[], string[]] {
  const remote = new Set<string>();
  const local = new Set<string>();
  const add = (u: string, depth: number): void => {
    const key = normaliseUri(u) ?? u;
    if (!isBrowserSide(key)) {
      remote.add(key);
      return;
    }
    if (local.has(key)) return;
    local.add(key);
    if (isFormula(key) && depth < 8) for (const input of quotedInputs(key)) add(input, depth + 1);
  };
  for (const u of uris) add(u, 0);
  return [[...remote], [...uris.filter((u) => local.has(u))]];
}

/** Local and simulated channels are always live; a formula while every channel it reads is. */
export function browserLiveness(uri: string, channel: (uri: string) => ChannelState): Liveness {
  if (!isFormula(uri)) return { isLive: true };
  let inputs: ChannelState[] | null = null;
  return {
    get isLive() {
      inputs ??= quotedInputs(uri).map(channel);
      return inputs.every((c) => !c.isStale);
    },
  };
}

/** The browser-side channel engine of one gateway connection, loaded on first use. */
export class BrowserSide {
  #engine: Promise<BrowserChannels> | null = null;
  readonly #channel: (uri: string) => ChannelState;
  readonly #deliver: (ch: ChannelState, value: ValueMsg, meta: MetaMsg | null) => void;

  /** `deliver` shows a value at the next frame, like a gateway update. */
  constructor(channel: (uri: string) => ChannelState, deliver: (ch: ChannelState, value: ValueMsg, meta: MetaMsg | null) => void) {
    this.#channel = channel;
    this.#deliver = deliver;
  }

  /** The engine (its own chunk: loaded by the first screen that uses one). */
  engine(): Promise<BrowserChannels> {
    this.#engine ??= import('./local/engine').then(
      ({ BrowserChannels }) =>
        new BrowserChannels({
          channel: (u) => this.#channel(u),
          deliver: (ch, value, meta) => this.#deliver(ch, value, meta),
        }),
    );
    return this.#engine;
  }

  /** A write to a browser-side channel: local values take it (no write grant needed); the others are read-only. */
  async put(uri: string, v: unknown): Promise<PutResult> {
    if (!isLocalWritable(uri)) return { ok: false, err: 'read_only', msg: 'simulated and formula channels are read-only' };
    try {
      (await this.engine()).write(uri, v);
      return { ok: true };
    } catch (e) {
      return { ok: false, err: 'bad_value', msg: (e as Error).message };
    }
  }
}
