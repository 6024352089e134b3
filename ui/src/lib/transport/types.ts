/** The gateway client's public types: options, connection state, answers. */

/** What the connection is doing, as shown to the operator. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'bus-down' | 'closed';

/** The answer to a write. */
export interface PutResult {
  ok: boolean;
  err?: string;
  msg?: string;
  /** a command's output (absent for a put, or a command without output) */
  v?: unknown;
}

/** One channel's history as answered (docs/protocol.md, `hist`). */
export interface HistTrace {
  /** ms since the epoch */
  t: Float64Array;
  v: Float64Array;
  sev: Uint8Array;
  /** `code: message` when the channel (or part of its range) could not be served */
  error: string | null;
  /** bus, archive or archive+bus */
  src: string | null;
}

export interface GatewayOptions {
  /** WebSocket URL; default: `/ws` on the page's host. */
  url?: string;
  /** first reconnect delay in ms (doubles each failure, with ±50% jitter) */
  backoffMs?: number;
  /** longest reconnect delay in ms */
  maxBackoffMs?: number;
  /** schedules a render (default requestAnimationFrame) */
  schedule?: (cb: () => void) => void;
  /** the WebSocket constructor (tests pass their own server's client) */
  WebSocket?: typeof WebSocket;
  /** how long a put may wait for its reply, ms */
  putTimeoutMs?: number;
  /**
   * The page's current access token (null: none), sent in an `auth` frame as a
   * socket's first frame — never in the URL; `Gateway.renew` hands a renewed one
   * to the open socket.
   */
  token?: () => string | null;
  /**
   * DOM work allowed per animation frame, ms: channels left over are committed in
   * the next frame (oldest first), so a burst of thousands of updates never makes
   * one long frame. 0 = commit everything every frame.
   */
  frameBudgetMs?: number;
  /** ms between application pings on an open socket (0: none) */
  pingMs?: number;
  /**
   * ms without any frame (after a ping) or without opening, after which the
   * gateway counts as hung (process stopped, host frozen: TCP stays up) and the
   * client drops the socket and reconnects
   */
  silenceMs?: number;
}
