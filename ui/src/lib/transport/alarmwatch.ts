/** Who on this page follows the alarms (`alarms` requests and frames, docs/protocol.md). */
import { nextId } from './ids';
import type { AlarmsFrame, ClientFrame } from './protocol';

export type AlarmsListener = (frame: AlarmsFrame) => void;

export class AlarmWatch {
  /** each listener, and whether it follows the whole list (else the counts) */
  #listeners = new Map<AlarmsListener, boolean>();
  /** request ids of `alarms` frames: an error answering one (a gateway without alarms) is not the page's error */
  #ids = new Set<number>();
  readonly #send: (frame: ClientFrame) => void;
  readonly #flowing: () => boolean;

  /** `flowing`: whether the current socket carries requests (else they are sent when it does). */
  constructor(send: (frame: ClientFrame) => void, flowing: () => boolean) {
    this.#send = send;
    this.#flowing = flowing;
  }

  /**
   * `listener` gets every `alarms` frame (the whole list first when `full`, else the
   * counts; then what changes) until the returned function is called.
   */
  follow(full: boolean, listener: AlarmsListener): () => void {
    this.#listeners.set(listener, full);
    if (this.#flowing()) this.send();
    return () => {
      if (!this.#listeners.delete(listener)) return;
      if (this.#flowing()) this.send();
    };
  }

  /** Whether anyone follows. */
  get any(): boolean {
    return this.#listeners.size > 0;
  }

  /** Ask what the page now follows (on a new socket, or when it changed). */
  send(): void {
    const id = nextId();
    this.#ids.add(id);
    const full = [...this.#listeners.values()].some(Boolean);
    this.#send(this.#listeners.size ? { op: 'alarms', id, full } : { op: 'alarms', id, off: true });
  }

  /** An `alarms` frame: every listener hears it. */
  deliver(frame: AlarmsFrame): void {
    if (frame.id !== undefined) this.#ids.delete(Number(frame.id));
    for (const listener of [...this.#listeners.keys()]) listener(frame);
  }

  /** The answer to request `id` was an error: whether it was an `alarms` request. */
  answered(id: number): boolean {
    return this.#ids.delete(id);
  }
}
