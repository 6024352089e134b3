/**
 * The answers to index.html's subscription (../early.ts): its `snap` or `err`,
 * then the frames of its `sid`, held while the app has not yet taken that
 * subscription as its own. The app adopts it (the held frames are applied), or
 * subscribes otherwise and gives it up (the gateway is told to stop sending it).
 */
import { abandonEarlySub, adoptEarlySub, isDroppedEarlySub, isEarlySub } from '../early';
import { nextId } from './ids';
import type { ClientFrame, ServerFrame, SnapFrame } from './protocol';

/**
 * How long the answers to index.html's subscription are held for the app to adopt
 * (frames, ms): beyond, the page left that screen before showing it, and the
 * subscription is given up.
 */
export const EARLY_HOLD_FRAMES = 2000;
export const EARLY_HOLD_MS = 10_000;

export class EarlyAnswers {
  #frames: ServerFrame[] | null = null;
  /** the request id of index.html's subscription when the app gave it up (its snapshot is unsubscribed) */
  #abandoned: number | null = null;
  /** performance.now() when the first of `#frames` came */
  #heldAt = 0;
  readonly #send: (frame: ClientFrame) => void;

  constructor(send: (frame: ClientFrame) => void) {
    this.#send = send;
  }

  /** Keep `frame` (received on `ws`) if it answers index.html's subscription, until the app adopts it or gives it up. */
  hold(frame: ServerFrame, ws: WebSocket | null): boolean {
    const held = this.#frames;
    // held answers of a subscription index.html dropped (its cached channel list was not the screen's)
    const dropped = !!held && isDroppedEarlySub(held[0].op === 'snap' || held[0].op === 'err' ? held[0].id : null);
    if ((frame.op === 'snap' || frame.op === 'err') && isEarlySub(ws, frame.id) && (!held || dropped)) {
      if (dropped && held![0].op === 'snap') this.#send({ op: 'unsub', id: nextId(), sid: held![0].sid });
      this.#frames = [frame];
      this.#heldAt = performance.now();
      return true;
    }
    if (held) {
      const first = held[0];
      if (first.op === 'snap' && 'sid' in frame && frame.sid === first.sid) {
        held.push(frame);
        // the page never showed that screen (left before its grid was built): stop holding
        if (held.length > EARLY_HOLD_FRAMES || performance.now() - this.#heldAt > EARLY_HOLD_MS) {
          this.#frames = null;
          if (!isDroppedEarlySub(first.id)) this.#abandoned = abandonEarlySub();
          this.#send({ op: 'unsub', id: nextId(), sid: first.sid });
        }
        return true;
      }
    }
    return false;
  }

  /**
   * The app subscribes `uris` (without `pts`) on `ws`: the request id of
   * index.html's subscription of these channels, whose held answers go to `apply`
   * once the caller is done; or null, and index.html's subscription (if any) is
   * given up.
   */
  adopt(ws: WebSocket | null, uris: string[], pts: boolean, apply: (frame: ServerFrame) => void): number | null {
    const adopted = ws && !pts ? adoptEarlySub(ws, uris) : null;
    const held = this.#frames;
    this.#frames = null;
    if (adopted !== null) {
      // applied after the caller (a screen being built: a component's init) is done,
      // never inside it: a snapshot commits synchronously (flushSync)
      if (held) queueMicrotask(() => held.forEach(apply));
      return adopted;
    }
    const abandoned = abandonEarlySub();
    if (abandoned !== null) this.#abandoned = abandoned;
    const snap = held?.[0];
    if (snap?.op === 'snap' && snap.id === abandoned) this.#send({ op: 'unsub', id: nextId(), sid: snap.sid });
    return null;
  }

  /**
   * A snapshot no subscription of the app asked for: index.html's that the app gave up
   * (another set of channels, so another sid), or one it sent from its cache and
   * dropped (the screen file has other channels). The gateway is told to stop sending it.
   */
  orphan(frame: SnapFrame): void {
    if (frame.id !== null && (frame.id === this.#abandoned || isDroppedEarlySub(frame.id))) this.#send({ op: 'unsub', id: nextId(), sid: frame.sid });
  }

  /** The socket went, and index.html's subscription with it. */
  drop(): void {
    this.#frames = null;
  }
}
