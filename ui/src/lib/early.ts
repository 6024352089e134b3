/**
 * What index.html started before the app's code loaded (to open a screen sooner):
 * the fetch of the screen named by the URL and the WebSocket. Each can be taken
 * once; later navigations fetch and connect as usual.
 */
interface Early {
  screen?: { name: string; response: Promise<Response> };
  socket?: { ws: WebSocket; frames: unknown[] };
}

function early(): Early {
  return ((globalThis as { __synopticEarly?: Early }).__synopticEarly ??= {});
}

/** The response of the early fetch of screen `name`, or null (taken, another screen, none). */
export function takeEarlyScreen(name: string): Promise<Response> | null {
  const e = early();
  if (!e.screen || e.screen.name !== name) return null;
  const { response } = e.screen;
  e.screen = undefined;
  return response;
}

/** The early WebSocket if it goes to `url` and is not closing, with the frames it received so far; else null. */
export function takeEarlySocket(url: string): { ws: WebSocket; frames: unknown[] } | null {
  const e = early();
  const socket = e.socket;
  e.socket = undefined;
  if (!socket) return null;
  if (socket.ws.url !== url || socket.ws.readyState > 1) {
    socket.ws.close();
    return null;
  }
  return socket;
}
