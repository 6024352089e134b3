/**
 * A display set uploaded from the browser (docs/protocol.md, POST /api/sites/import): a chosen folder
 * is zipped here (only the files an import reads: displays, plot files, pictures), a chosen zip is sent
 * as it is; the gateway imports it as linked screens and answers with the site report.
 */
import { zipSync } from 'fflate';
import { forgetScreens } from '../nav/prefetch';

/** What the gateway reads of a set (the rest of a folder is never sent). */
export const KEPT = /\.(bob|opi|wj|plt|png|jpe?g|gif|svg|webp)$/i;
/** The largest upload the gateway takes. */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

export type SiteAction = 'created' | 'updated' | 'unchanged' | 'kept' | 'forbidden' | 'failed';

export interface SiteScreen {
  name: string;
  file: string;
  action: SiteAction;
  revision?: number;
  reason?: string;
}

export interface TypeCount {
  widgets: number;
  mapped: number;
  as: Record<string, number>;
  reasons: Record<string, number>;
}

/** The site report (synoptic_importer.sitereport.SiteReport.as_dict). */
export interface SiteReport {
  set: string;
  home: string | null;
  files: number;
  screens: { name: string; file: string; title: string; widgets: number; placeholders: number; links: number; home: boolean; macros: string[] }[];
  widgets: number;
  mapped: number;
  placeholders: number;
  mapped_pct: number;
  types: Record<string, TypeCount>;
  links: { resolved?: number; at_open?: number; outside?: number; outside_list?: { file: string; path: string }[] };
  channels: Record<string, number>;
  macros: Record<string, number>;
  skipped: Record<string, number>;
  refused: { file: string; reason: string; line: number | null }[];
  warnings: string[];
}

export interface SiteResult {
  set: string;
  home: string | null;
  dry_run: boolean;
  report: SiteReport;
  counts: Partial<Record<SiteAction, number>>;
  ignored: string[];
  screens: SiteScreen[];
}

/** A folder's files (as a browser's folder input gives them, each with its path) zipped under the folder's name. */
export function zipFolder(files: File[]): Promise<{ name: string; zip: Uint8Array; count: number }> {
  return (async () => {
    const members: Record<string, Uint8Array> = {};
    let name = 'site';
    let total = 0;
    for (const f of files) {
      const path = (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name;
      const parts = path.split('/');
      if (parts.length > 1) name = parts[0];
      if (!KEPT.test(path) || parts.some((p) => p.startsWith('.'))) continue;
      total += f.size;
      if (total > MAX_UPLOAD_BYTES) throw new Error(`the folder's displays and pictures exceed ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB`);
      members[path] = new Uint8Array(await f.arrayBuffer());
    }
    const count = Object.keys(members).length;
    if (!count) throw new Error('no .bob, .opi or .wj display in that folder');
    return { name, zip: zipSync(members, { level: 6 }), count };
  })();
}

/** Options of one set import. */
export interface SiteOptions {
  set?: string;
  overwrite?: boolean;
  dryRun?: boolean;
}

/** Send a zipped set to the gateway; the result, or an Error with the gateway's reason. */
export async function importSite(zip: Blob | Uint8Array, file: string, opts: SiteOptions, token: string | null, fetcher: typeof fetch = (...a) => fetch(...a)): Promise<SiteResult> {
  const query = new URLSearchParams({ file });
  if (opts.set) query.set('set', opts.set);
  if (opts.overwrite) query.set('overwrite', '1');
  if (opts.dryRun) query.set('dry_run', '1');
  const headers: Record<string, string> = { 'Content-Type': 'application/zip' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const body = zip instanceof Uint8Array ? new Blob([zip as BlobPart]) : zip;
  const res = await fetcher(`api/sites/import?${query}`, { method: 'POST', body, headers, cache: 'no-store' }).finally(forgetScreens); // screens read ahead for links may be what it replaced
  if (!res.ok) {
    let reason = `${res.status} ${res.statusText}`;
    try {
      const answer = (await res.json()) as { reason?: string; error?: string };
      reason = answer.reason ?? answer.error ?? reason;
    } catch {
      // not JSON: the status says it
    }
    throw new Error(reason);
  }
  return (await res.json()) as SiteResult;
}
