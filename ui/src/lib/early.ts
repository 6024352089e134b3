/**
 * What index.html started before the app's code loaded (to open a screen sooner):
 * the fetch of the screen named by the URL, the WebSocket, and the screen's
 * subscription on it, sent when the socket opens with the channel list cached for
 * that screen (or when the screen file is in, without one; a cached list the file
 * contradicts is dropped and the file's sent). Each can be taken once; later navigations fetch, connect and subscribe as usual.
 */
interface Early {
  /** the response, and its body parsed (null when not ok) */
  screen?: { name: string; response: Promise<Response>; body: Promise<unknown> };
  socket?: { ws: WebSocket; frames: unknown[] };
  /** the subscription index.html sent (request `id`, channels `ch`), until the app adopts it */
  sub?: { ws: WebSocket; id: number; ch: string[] };
  /** a subscription went out (index.html's or the app's): index.html sends none after it */
  subSent?: boolean;
  /** index.html's attempt to subscribe (when the socket is open and a channel list is in) */
  subscribe?: () => void;
  /** request ids of subscriptions index.html sent from its cache and dropped (the screen file differs) */
  dropped?: number[];
  /** resolved when index.html's subscription has left, or none will (main.ts mounts the app after it) */
  ready?: Promise<void>;
}

function early(): Early {
  return ((globalThis as { __synopticEarly?: Early }).__synopticEarly ??= {});
}

/** The early fetch of screen `name` (its response, and its body parsed), or null (taken, another screen, none). */
export function takeEarlyScreen(name: string): { response: Promise<Response>; body: Promise<unknown> } | null {
  const e = early();
  if (!e.screen || e.screen.name !== name) return null;
  const screen = e.screen;
  e.screen = undefined;
  return screen;
}

/** The early WebSocket if it goes to `url` and is not closing, with the frames it received so far; else null. */
export function takeEarlySocket(url: string): { ws: WebSocket; frames: unknown[] } | null {
  const e = early();
  const socket = e.socket;
  e.socket = undefined;
  if (!socket) return null;
  if (socket.ws.url !== url || socket.ws.readyState > 1) {
    socket.ws.close();
    e.sub = undefined;
    e.subSent = true;
    return null;
  }
  return socket;
}

/** The early socket opened after the app took it: index.html sends its subscription now if it can. */
export function earlySocketOpened(): void {
  early().subscribe?.();
}

/**
 * The request id of the subscription index.html sent on `ws` when it asked for
 * the same set of channels as `uris` (the app takes it as its own: its snapshot
 * answers it; the gateway keys a subscription by its set), else null.
 */
export function adoptEarlySub(ws: WebSocket, uris: readonly string[]): number | null {
  const e = early();
  const sub = e.sub;
  if (!sub || sub.ws !== ws || !sameSet(sub.ch, uris)) return null;
  e.sub = undefined;
  return sub.id;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return set.size === a.length && b.every((u) => set.has(u));
}

/** Whether `id` is the request id of a subscription index.html sent from its cache and then dropped (the screen file differs): its answers are not the screen's. */
export function isDroppedEarlySub(id: number | null): boolean {
  return id !== null && !!early().dropped?.includes(id);
}

/** Whether `id` is the request id of index.html's subscription on `ws`, not yet adopted. */
export function isEarlySub(ws: WebSocket | null, id: number | null): boolean {
  const sub = early().sub;
  return !!sub && sub.ws === ws && sub.id === id;
}

/**
 * The app sends a subscription of its own: index.html sends none from now on, and
 * its subscription, if it sent one, is given up; returns that one's request id.
 */
export function abandonEarlySub(): number | null {
  const e = early();
  e.subSent = true;
  const id = e.sub?.id ?? null;
  e.sub = undefined;
  return id;
}
