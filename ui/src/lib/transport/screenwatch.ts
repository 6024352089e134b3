/** Screens whose saves this page follows (`watch` requests, `screen` frames). */
import { nextId } from './ids';
import type { ClientFrame, ScreenFrame } from './protocol';

export type ScreenListener = (frame: ScreenFrame) => void;

export class ScreenWatch {
  #listeners = new Map<string, Set<ScreenListener>>();
  /** request ids of `watch` frames: an error answering one is not the page's error */
  #ids = new Set<number>();
  readonly #send: (frame: ClientFrame) => void;
  readonly #flowing: () => boolean;

  /** `flowing`: whether the current socket carries requests (else they are sent when it does). */
  constructor(send: (frame: ClientFrame) => void, flowing: () => boolean) {
    this.#send = send;
    this.#flowing = flowing;
  }

  /** Follow saves of screen `name` until the returned function is called. */
  watch(name: string, listener: ScreenListener): () => void {
    let set = this.#listeners.get(name);
    const added = !set;
    if (!set) this.#listeners.set(name, (set = new Set()));
    set.add(listener);
    if (added && this.#flowing()) this.send();
    return () => {
      set.delete(listener);
      if (set.size || this.#listeners.get(name) !== set) return;
      this.#listeners.delete(name);
      if (this.#flowing()) this.send();
    };
  }

  /** Whether any screen is followed. */
  get any(): boolean {
    return this.#listeners.size > 0;
  }

  /** Send the watched set (on a new socket, or when it changed). */
  send(): void {
    const id = nextId();
    this.#ids.add(id);
    this.#send({ op: 'watch', id, screens: [...this.#listeners.keys()] });
  }

  /** A `screen` frame: its listeners hear it. */
  deliver(frame: ScreenFrame): void {
    for (const listener of this.#listeners.get(frame.name) ?? []) listener(frame);
  }

  /** The answer to request `id` came (an ack, or an error): whether it was a `watch`. */
  answered(id: number): boolean {
    return this.#ids.delete(id);
  }
}
