/** Screen files (schemas/synoptic_schemas/json/screen.schema.json) and the HTTP API that serves them. */
import { pageFetch } from './token';
import { takeEarlyScreen } from './early';
import type { WidgetStyle } from './canvas/style';
import { normaliseUri } from './transport/channels';

export type WidgetType =
  | 'text' | 'label' | 'led' | 'gauge' | 'bar' | 'trend' | 'spectrum'
  | 'xy' | 'form' | 'input' | 'button' | 'command' | 'toggle' | 'menu' | 'section' | 'image' | 'table' | 'placeholder'
  | 'shape' | 'link' | 'embed' | 'tabs' | 'actions' | 'symbol' | 'clock' | 'alarms';

/** A widget's place on a canvas screen, in canvas pixels. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** While the channel's value (or severity) compares true, set these properties. */
export interface Rule {
  channel?: string;
  on?: 'value' | 'severity';
  op?: '==' | '!=' | '<' | '<=' | '>' | '>=';
  value?: number | string | boolean;
  set: { visible?: boolean; fg?: string; bg?: string; text?: string };
}

/** The canvas layout: absolute pixel boxes on a width × height canvas scaled to the window. */
export interface CanvasLayout {
  type: 'canvas';
  width: number;
  height: number;
  scale?: 'fit-width' | 'fit' | 'none';
  background?: string;
  /** not grid fields (so `layout.columns` reads as undefined on a canvas) */
  columns?: undefined;
  row_height?: undefined;
  gap?: undefined;
}

export interface GridLayout {
  type?: 'grid';
  columns?: number;
  row_height?: number;
  gap?: number;
}

export interface WidgetSpec {
  type: WidgetType;
  title?: string;
  channels?: string[];
  x?: number;
  y?: number;
  w?: number;
  h?: number;
  options?: Record<string, unknown>;
  box?: Box;
  style?: WidgetStyle;
  visible?: boolean;
  rules?: Rule[];
  /** what the widget does when used (open a screen, write, open a web page): see nav/actions.ts */
  actions?: unknown[];
  /** a click on the widget runs its actions */
  click?: boolean;
}

/** Where an imported screen comes from: its set, its file, the set's home, the digest of the import. */
export interface ScreenSource {
  set: string;
  file: string;
  home?: boolean;
  digest?: string;
}

export interface Screen {
  version?: 1;
  title: string;
  description?: string;
  layout?: GridLayout | CanvasLayout;
  macros?: Record<string, string>;
  widgets: WidgetSpec[];
  source?: ScreenSource;
}

/** One entry of the screen list. */
export interface ScreenEntry {
  name: string;
  title: string;
  description?: string;
  /** why the gateway refuses the file (it does not match the schema) */
  error?: string;
  /** the display set it was imported with, the file it came from, whether it is the set's home */
  set?: string;
  file?: string;
  home?: boolean;
}

/**
 * Every channel a screen shows, normalised and de-duplicated (the subscription
 * set), but for those only spectrum plots and images show: each subscribes its
 * channels at the resolution it draws (`sub.pts`), not the screen at full resolution.
 * index.html's early script builds the same list (keep them alike).
 */
export function screenChannels(screen: Screen): string[] {
  const set = new Set<string>();
  for (const w of screen.widgets) {
    for (const rule of w.rules ?? []) if (rule.channel) set.add(normaliseUri(rule.channel) ?? rule.channel);
    if (w.type === 'spectrum' || w.type === 'image') continue;
    for (const uri of w.channels ?? []) set.add(normaliseUri(uri) ?? uri);
  }
  return [...set];
}

/** GET /api/screens: the list; accepts a bare array or `{screens: [...]}`, entries as names or objects. */
export async function fetchScreenList(fetcher: typeof fetch = pageFetch): Promise<ScreenEntry[]> {
  const res = await fetcher('api/screens');
  if (!res.ok) throw new Error(`GET /api/screens: ${res.status} ${res.statusText}`);
  const body = await res.json();
  const list: unknown[] = Array.isArray(body) ? body : (body.screens ?? []);
  return list.map((e) =>
    typeof e === 'string'
      ? { name: e, title: e }
      : {
          name: String((e as ScreenEntry).name),
          title: String((e as ScreenEntry).title ?? (e as ScreenEntry).name),
          description: (e as ScreenEntry).description,
          error: (e as { valid?: boolean }).valid === false ? String((e as ScreenEntry).error ?? 'invalid screen') : undefined,
          ...(typeof (e as ScreenEntry).set === 'string' ? { set: (e as ScreenEntry).set, file: String((e as ScreenEntry).file ?? ''), home: (e as ScreenEntry).home === true } : {}),
        },
  );
}

/** A screen showing channels that hold a query's words (GET /api/channels/screens), best first. */
export interface ChannelHit {
  name: string;
  /** the first matching channels it shows */
  channels: string[];
  /** how many of its channels match */
  matches: number;
}

/** GET /api/channels/screens?q=: the screens showing a channel that holds every word of `query`, best first. */
export async function fetchChannelHits(query: string, fetcher: typeof fetch = pageFetch, signal?: AbortSignal): Promise<ChannelHit[]> {
  const res = await fetcher(`api/channels/screens?q=${encodeURIComponent(query)}&limit=100`, { signal });
  if (!res.ok) throw new Error(`GET /api/channels/screens: ${res.status} ${res.statusText}`);
  const body = (await res.json()) as { screens?: ChannelHit[] };
  return (body.screens ?? []).map((h) => ({ name: String(h.name), channels: (h.channels ?? []).map(String), matches: Number(h.matches) || 0 }));
}

/** GET /api/screens/<name>: one screen file (`early`: take index.html's fetch of it when that is the one). */
export async function fetchScreen(name: string, fetcher: typeof fetch = pageFetch, early = fetcher === pageFetch): Promise<Screen> {
  const started = early ? takeEarlyScreen(name) : null; // started (and parsed) by index.html
  const res = await (started?.response ?? fetcher(`api/screens/${encodeURIComponent(name)}`));
  if (!res.ok) throw new Error(`screen '${name}': ${res.status} ${res.statusText}`);
  const body = (await (started?.body ?? res.json())) as { screen?: Screen } & Screen;
  return (body.screen ?? body) as Screen;
}

/** A quick-look screen: one form of the given channels. */
export function quickLookScreen(uris: string[], title = 'Quick look'): Screen {
  return {
    version: 1,
    title,
    layout: { type: 'grid', columns: 12, row_height: 30, gap: 4 },
    widgets: [{ type: 'form', title, channels: uris, w: 12, h: Math.max(2, uris.length + 1) }],
  };
}

/** Parse pasted text (whitespace, comma or newline separated) into valid, normalised URIs and rejects. */
export function parseUriList(text: string): { uris: string[]; bad: string[] } {
  const uris: string[] = [];
  const bad: string[] = [];
  for (const token of text.split(/[\s,;]+/).filter(Boolean)) {
    const uri = normaliseUri(token);
    if (uri) {
      if (!uris.includes(uri)) uris.push(uri);
    } else bad.push(token);
  }
  return { uris, bad };
}
