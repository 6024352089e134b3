/**
 * A trend's history: what the gateway answered for older times (`hist`), joined with
 * the live samples the channel keeps, and the CSV of what the trend shows.
 */
import type { Sample } from '../transport/channel.svelte';

/** Loaded history of one channel: times (ms since the epoch) and values. */
export interface Past {
  t: ArrayLike<number>;
  v: ArrayLike<number>;
}

/** The time ranges the picker offers, in seconds. */
export const RANGES: [label: string, seconds: number][] = [
  ['1 min', 60], ['5 min', 300], ['15 min', 900], ['1 h', 3600], ['6 h', 21600], ['1 day', 86400], ['7 days', 604800],
];

/**
 * Write `[t0, y0, t1, y1 …]` into `buf` (grown when too small): the loaded points older than
 * the first live sample, then the live samples. Returns the buffer and the number of points.
 */
export function joinPast(past: Past | null, live: readonly Sample[], buf: Float64Array): [Float64Array, number] {
  const firstLive = live.length ? live[0][0] : Infinity;
  let n = 0;
  if (past) while (n < past.t.length && past.t[n] < firstLive) n++;
  const total = n + live.length;
  if (buf.length < 2 * total) buf = new Float64Array(4 * total);
  for (let i = 0; i < n; i++) {
    buf[2 * i] = past!.t[i];
    buf[2 * i + 1] = past!.v[i];
  }
  for (let i = 0; i < live.length; i++) {
    buf[2 * (n + i)] = live[i][0];
    buf[2 * (n + i) + 1] = live[i][1];
  }
  return [buf, total];
}

/** CSV (`time,channel,value`, ISO times, oldest first per channel) of the points within `[from, to]`. */
export function toCsv(names: string[], series: { data: ArrayLike<number>; n: number }[], from: number, to: number): string {
  const lines = ['time,channel,value'];
  series.forEach(({ data, n }, k) => {
    const name = names[k].includes(',') || names[k].includes('"') ? `"${names[k].replaceAll('"', '""')}"` : names[k];
    for (let i = 0; i < n; i++) {
      const t = data[2 * i];
      if (t < from || t > to) continue;
      const v = data[2 * i + 1];
      lines.push(`${new Date(t).toISOString()},${name},${Number.isNaN(v) ? '' : v}`);
    }
  });
  return lines.join('\n') + '\n';
}

/** Offer `text` as a file download. */
export function download(name: string, text: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
