/**
 * The gateway's alarms API (docs/protocol.md, HTTP): acknowledge, unacknowledge,
 * shelve and unshelve on behalf of the signed-in user; the alarm tree. Every answer
 * comes back as a typed result, never a thrown error.
 */
import { pageFetch } from '../token';

export type AlarmOp = 'ack' | 'unack' | 'shelve' | 'unshelve';

export interface OpResult {
  ok: boolean;
  /** alarms whose state changed */
  n: number;
  /** channel → why it was not handled (denied, unknown, not_active …) */
  fail: Record<string, string>;
  /** a refusal of the whole request: forbidden, unavailable, bad_request … */
  error?: string;
  reason?: string;
}

async function json(response: Response): Promise<Record<string, unknown>> {
  try {
    return (await response.json()) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Ask the alarm service, through the gateway, to `op` these alarms. */
export async function alarmOp(op: AlarmOp, channels: string[], shelve?: { why: string; minutes: number }): Promise<OpResult> {
  try {
    const response = await pageFetch(`/api/alarms/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ch: channels, ...(shelve ?? {}) }),
    });
    const body = await json(response);
    if (response.ok) return { ok: Boolean(body.ok), n: Number(body.n ?? 0), fail: (body.fail as Record<string, string>) ?? {} };
    return { ok: false, n: 0, fail: (body.fail as Record<string, string>) ?? {}, error: String(body.error ?? response.status), reason: String(body.reason ?? '') };
  } catch (e) {
    return { ok: false, n: 0, fail: {}, error: 'unavailable', reason: (e as Error).message };
  }
}

/** A related screen of a tree node or channel. */
export interface RelatedScreen {
  title: string;
  screen?: string;
  macros?: Record<string, string>;
  url?: string;
}

export type TreeChannel = string | { ch: string; desc?: string; guidance?: string; screens?: RelatedScreen[]; enabled?: boolean; latch?: boolean };

/** One node of the alarm tree (alarm-tree.schema.json). */
export interface TreeNode {
  name: string;
  guidance?: string;
  screens?: RelatedScreen[];
  enabled?: boolean;
  latch?: boolean;
  channels?: TreeChannel[];
  patterns?: string[];
  children?: TreeNode[];
}

export interface LoadedTree {
  tree: TreeNode | null;
  revision: number;
  by: string;
  at: string;
  editable: boolean;
}

export async function loadTree(): Promise<LoadedTree | { error: string; reason: string }> {
  try {
    const response = await pageFetch('/api/alarms/tree');
    const body = await json(response);
    if (!response.ok) return { error: String(body.error ?? response.status), reason: String(body.reason ?? '') };
    return body as unknown as LoadedTree;
  } catch (e) {
    return { error: 'unavailable', reason: (e as Error).message };
  }
}

export type SaveResult =
  | { ok: true; revision: number; by: string; at: string }
  | { ok: false; error: string; reason: string; pointer?: string; by?: string; at?: string; revision?: number };

export async function saveTree(tree: unknown, base: number, summary: string): Promise<SaveResult> {
  try {
    const response = await pageFetch('/api/alarms/tree', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tree, base_revision: base, summary }),
    });
    const body = await json(response);
    if (response.ok) return { ok: true, revision: Number(body.revision), by: String(body.by ?? ''), at: String(body.at ?? '') };
    return { ok: false, error: String(body.error ?? response.status), reason: String(body.reason ?? ''), pointer: body.pointer as string | undefined,
      by: body.by as string | undefined, at: body.at as string | undefined, revision: body.revision as number | undefined };
  } catch (e) {
    return { ok: false, error: 'unavailable', reason: (e as Error).message };
  }
}

export interface ImportedTree {
  tree: TreeNode;
  report: { nodes: number; channels: number; skipped: Record<string, number>; warnings: string[] };
}

/** Convert a Phoebus alarm configuration (nothing is stored). */
export async function importPhoebus(file: File): Promise<ImportedTree | { error: string; reason: string; line?: number }> {
  try {
    const response = await pageFetch(`/api/alarms/tree/import?file=${encodeURIComponent(file.name)}`, { method: 'POST', body: await file.arrayBuffer() });
    const body = await json(response);
    if (!response.ok) return { error: String(body.error ?? response.status), reason: String(body.reason ?? ''), line: body.line as number | undefined };
    return body as unknown as ImportedTree;
  } catch (e) {
    return { error: 'unavailable', reason: (e as Error).message };
  }
}

/** The node at `path` (names joined by '/'), and the guidance and screens that apply to it: its own and those above. */
export function nodeAt(tree: TreeNode | null, path: string): { node: TreeNode | null; trail: TreeNode[] } {
  if (!tree) return { node: null, trail: [] };
  const names = path.split('/');
  if (names[0] !== tree.name) return { node: null, trail: [] };
  const trail = [tree];
  let node: TreeNode | undefined = tree;
  for (const name of names.slice(1)) {
    node = node.children?.find((c) => c.name === name);
    if (!node) return { node: null, trail };
    trail.push(node);
  }
  return { node, trail };
}

/** A listed channel's own entry in its node (desc, guidance, screens), if it has one. */
export function channelEntry(node: TreeNode | null, ch: string): Exclude<TreeChannel, string> | null {
  for (const entry of node?.channels ?? []) {
    if (typeof entry !== 'string' && entry.ch === ch) return entry;
  }
  return null;
}

/** The address of a related screen: a Synoptic screen (with its macros) or a web page. */
export function screenHref(s: RelatedScreen): string {
  if (s.url) return s.url;
  const query = new URLSearchParams(s.macros ?? {}).toString();
  return `#/screen/${encodeURIComponent(s.screen ?? '')}${query ? `?${query}` : ''}`;
}
