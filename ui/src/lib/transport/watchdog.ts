/**
 * Finding a hung gateway (process stopped, host frozen: TCP stays up and nothing
 * closes): a ping every `pingMs`, and a socket silent for `silenceMs` (or never
 * opened) given up. Any frame counts as an answer (on a busy socket the pong
 * queues behind data).
 */
export class Watchdog {
  /** performance.now() of the last frame received (or of the connect) */
  heardAt = 0;
  #timer: ReturnType<typeof setInterval> | null = null;
  readonly #pingMs: number;
  readonly #silenceMs: number;

  /** `pingMs` 0: no pings, no hang detection. */
  constructor(pingMs: number, silenceMs: number) {
    this.#pingMs = pingMs;
    this.#silenceMs = silenceMs;
  }

  /** Watch a new socket: `ping` while it is heard from, `silent` (once) when it is not. */
  start(ping: () => void, silent: () => void): void {
    this.stop();
    this.heardAt = performance.now();
    if (!this.#pingMs) return;
    this.#timer = setInterval(() => {
      if (performance.now() - this.heardAt > this.#silenceMs) {
        this.stop();
        silent();
      } else {
        ping();
      }
    }, this.#pingMs);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
