/**
 * The gateway's screen store API (docs/protocol.md): read with revision and grant,
 * save and delete with optimistic concurrency, history, revert, the channel
 * directory and who this browser is. Every answer the editor must act on comes
 * back as a typed result, never a thrown error.
 */
import type { Screen } from '../screen';
import { forgetScreens } from '../nav/prefetch';

/** A saved revision. */
export interface Saved {
  name: string;
  revision: number;
  at: string;
  by: string;
}

export interface Revision {
  revision: number;
  at: string;
  by: string;
  summary: string;
  op: 'put' | 'delete';
}

/** What a write can come back with. */
export type WriteResult =
  | ({ ok: true } & Saved)
  | { ok: false; error: 'conflict'; revision: number; by: string; at: string }
  | { ok: false; error: 'invalid'; pointer: string; reason: string }
  | { ok: false; error: 'forbidden' | 'too_large' | 'bad_name' | 'store_unavailable' | 'not_found' | 'failed'; reason: string };

export interface Loaded {
  screen: Screen;
  revision: number;
  editable: boolean;
}

/** What an import did (docs/protocol.md, POST /api/import). */
export interface ImportReport {
  file: string;
  source: string;
  widgets: number;
  mapped: Record<string, number>;
  placeholders: Record<string, number>;
  reasons: Record<string, string>;
  skipped: string[];
  warnings: string[];
}

export interface Converted {
  name: string;
  screen: Screen;
  report: ImportReport;
}

export interface Whoami {
  user: string;
  write: boolean;
  screens: string[];
}

/**
 * The stored screen fails the schema (written into the store by another tool):
 * where (`pointer`), why, the revision whose raw JSON `revision()` returns for
 * repair, and whether this principal may edit it.
 */
export class InvalidStoredScreen extends Error {
  constructor(
    readonly pointer: string,
    readonly reason: string,
    readonly revision: number,
    readonly editable: boolean,
  ) {
    super(`422: ${reason}`);
  }
}

/** The longest the editor waits for a write's answer (the gateway gives up on the store after 12 s). */
export const WRITE_TIMEOUT_MS = 20_000;

/** A screen name the store accepts. */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The channel directory's answer: URIs best first, their description and units alongside. */
export interface ChannelMatches {
  channels: string[];
  total: number;
  desc: string[];
  unit: string[];
}

export class ScreensApi {
  constructor(
    /** the bearer token, or where to read the current one (it is renewed while the editor is open) */
    private readonly token: string | null | (() => string | null) = null,
    private readonly fetcher: typeof fetch = (...a) => fetch(...a),
    private readonly base = 'api',
    private readonly writeTimeoutMs = WRITE_TIMEOUT_MS,
  ) {}

  #req(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const token = typeof this.token === 'function' ? this.token() : this.token;
    if (token) headers.set('Authorization', `Bearer ${token}`);
    if (init.body && !headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
    return this.fetcher(`${this.base}/${path}`, { ...init, headers, cache: 'no-store' });
  }

  static #screen(name: string): string {
    return `screens/${encodeURIComponent(name)}`;
  }

  /** The screen, its revision and whether this principal may edit it; null when it does not exist; an {@link InvalidStoredScreen} thrown when the stored value fails the schema. */
  async load(name: string): Promise<Loaded | null> {
    const res = await this.#req(ScreensApi.#screen(name));
    if (res.status === 404) return null;
    if (res.status === 422) {
      const body = (await res.json().catch(() => ({}))) as { pointer?: unknown; reason?: unknown; revision?: unknown; editable?: unknown };
      if (typeof body.revision === 'number' && body.revision > 0) {
        throw new InvalidStoredScreen(String(body.pointer ?? ''), String(body.reason ?? 'invalid'), body.revision, body.editable === true);
      }
      throw new Error(`422: ${String(body.reason ?? 'invalid')}`);
    }
    if (!res.ok) throw new Error(await describe(res));
    const screen = (await res.json()) as Screen;
    return {
      screen,
      revision: Number(res.headers.get('X-Synoptic-Revision') ?? 0),
      editable: res.headers.get('X-Synoptic-Editable') === '1',
    };
  }

  save(name: string, screen: Screen, base: number, summary: string): Promise<WriteResult> {
    return this.#write(ScreensApi.#screen(name), 'PUT', { screen, base_revision: base, summary });
  }

  remove(name: string, base: number): Promise<WriteResult> {
    return this.#write(`${ScreensApi.#screen(name)}?base_revision=${base}`, 'DELETE');
  }

  revert(name: string, revision: number, base: number): Promise<WriteResult> {
    return this.#write(`${ScreensApi.#screen(name)}/revert`, 'POST', { revision, base_revision: base });
  }

  /** A Phoebus `.bob`, CS-Studio `.opi` or Taranta `.wj` file converted by the gateway (nothing stored): the screen, its suggested name and the coverage report; an Error with the gateway's reason (and line) when it cannot be. */
  async convert(file: string, data: Blob | ArrayBuffer): Promise<Converted> {
    const res = await this.#req(`import?file=${encodeURIComponent(file)}`, { method: 'POST', body: data, headers: { 'Content-Type': 'application/octet-stream' } });
    if (!res.ok) throw new Error(await describe(res));
    return (await res.json()) as Converted;
  }

  async history(name: string): Promise<Revision[]> {
    const res = await this.#req(`${ScreensApi.#screen(name)}/history`);
    if (!res.ok) throw new Error(await describe(res));
    return ((await res.json()) as { revisions: Revision[] }).revisions;
  }

  /** One kept revision's screen JSON as stored (not validated: an invalid one too, for repair). */
  async revision(name: string, revision: number): Promise<Screen> {
    const res = await this.#req(`${ScreensApi.#screen(name)}/revisions/${revision}`);
    if (!res.ok) throw new Error(await describe(res));
    return (await res.json()) as Screen;
  }

  /** Channels whose name, description or units hold every word of `query`, best first, with their description and units. */
  async channels(query: string, limit = 50): Promise<ChannelMatches> {
    const res = await this.#req(`channels?q=${encodeURIComponent(query)}&limit=${limit}`);
    if (!res.ok) throw new Error(await describe(res));
    const body = (await res.json()) as ChannelMatches;
    return { channels: body.channels, total: body.total, desc: body.desc ?? [], unit: body.unit ?? [] };
  }

  async whoami(): Promise<Whoami> {
    const res = await this.#req('whoami');
    if (!res.ok) throw new Error(await describe(res));
    return (await res.json()) as Whoami;
  }

  async #write(path: string, method: string, body?: unknown): Promise<WriteResult> {
    try {
      return await this.#writeOnce(path, method, body);
    } finally {
      forgetScreens(); // screens read ahead for links may be what this write replaced
    }
  }

  async #writeOnce(path: string, method: string, body?: unknown): Promise<WriteResult> {
    let res: Response;
    try {
      const signal = AbortSignal.timeout(this.writeTimeoutMs);
      res = await this.#req(path, { method, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (e) {
      const reason = (e as Error).name === 'TimeoutError'
        ? `the gateway did not answer within ${this.writeTimeoutMs / 1000} s (the write may have been stored: reload to see)`
        : `the gateway cannot be reached (${(e as Error).message})`;
      return { ok: false, error: 'store_unavailable', reason };
    }
    let answer: Record<string, unknown> = {};
    try {
      answer = (await res.json()) as Record<string, unknown>;
    } catch {
      /* a body that is not JSON: the status alone speaks */
    }
    if (res.ok) return { ok: true, ...(answer as unknown as Saved) };
    const reason = String(answer.reason ?? `${res.status} ${res.statusText}`);
    if (res.status === 409) return { ok: false, error: 'conflict', revision: Number(answer.revision), by: String(answer.by ?? ''), at: String(answer.at ?? '') };
    if (res.status === 422) return { ok: false, error: 'invalid', pointer: String(answer.pointer ?? ''), reason };
    const known = { 400: 'bad_name', 403: 'forbidden', 404: 'not_found', 413: 'too_large', 503: 'store_unavailable' } as const;
    return { ok: false, error: known[res.status as keyof typeof known] ?? 'failed', reason };
  }
}

async function describe(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { reason?: string; error?: string };
    return `${res.status}: ${body.reason ?? body.error ?? res.statusText}`;
  } catch {
    return `${res.status} ${res.statusText}`;
  }
}

/** The widget index a JSON pointer into a screen names (`/widgets/3/type` → 3), or null. */
export function widgetIndexOf(pointer: string): number | null {
  const m = /^\/widgets\/(\d+)(\/|$)/.exec(pointer);
  return m ? Number(m[1]) : null;
}
