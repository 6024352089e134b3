/**
 * What the table widget shows of a value: a PV Access table (a map of columns,
 * `meta.cols` naming them) as rows, or any other structure as field/value rows.
 */
import { isNdArray } from '../transport/codec';
import type { MetaMsg } from '../transport/protocol';

export interface TableView {
  headings: string[];
  rows: string[][];
  /** rows the value has beyond `maxRows` (not shown) */
  hidden: number;
}

type Column = ArrayLike<unknown>;

function cell(x: unknown, prec: number): string {
  if (typeof x === 'number') return Number.isInteger(x) ? String(x) : x.toFixed(prec);
  if (typeof x === 'boolean') return x ? 'true' : 'false';
  if (typeof x === 'bigint') return x.toString();
  if (x === null || x === undefined) return '';
  return String(x);
}

function column(x: unknown): Column | null {
  if (isNdArray(x)) return x.data as Column;
  return Array.isArray(x) ? x : null;
}

/** Field paths and texts of a structure, nested fields as `a.b`, lists of structures as `a[0].b`. */
function flatten(value: unknown, prefix: string, out: string[][], prec: number): void {
  if (isNdArray(value)) {
    const data = value.data;
    const head = Array.from({ length: Math.min(data.length, 8) }, (_, i) => cell(data[i], prec));
    out.push([prefix, `[${value.shape.join('×')}] ${head.join(', ')}${data.length > 8 ? ', …' : ''}`]);
  } else if (Array.isArray(value) && value.some((v) => typeof v === 'object' && v !== null)) {
    value.forEach((v, i) => flatten(v, `${prefix}[${i}]`, out, prec));
  } else if (Array.isArray(value)) {
    out.push([prefix, value.map((v) => cell(v, prec)).join(', ')]);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out, prec);
  } else {
    out.push([prefix || 'value', cell(value, prec)]);
  }
}

/** The rows and headings to show for a value and its metadata. */
export function tableView(v: unknown, meta: MetaMsg | null, maxRows = 1000, prec = 3): TableView {
  if (isNdArray(v) || (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null))) {
    // an array: one row per element (Phoebus's array widget)
    const data = isNdArray(v) ? v.data : (v as unknown[]);
    const shown = Math.min(data.length, maxRows);
    const rows = Array.from({ length: shown }, (_, i) => [String(i), cell(data[i], prec)]);
    return { headings: ['index', 'value'], rows, hidden: data.length - shown };
  }
  if (typeof v !== 'object' || v === null) {
    return { headings: [], rows: [], hidden: 0 };
  }
  const map = v as Record<string, unknown>;
  const cols = meta?.dt === 'table' && meta.cols ? meta.cols : null;
  const names = cols ? cols.map((c) => c.name) : Object.keys(map);
  const columns = names.map((n) => column(map[n]));
  if (cols || (names.length > 0 && columns.every((c) => c !== null))) {
    const count = Math.max(0, ...columns.map((c) => c?.length ?? 0));
    const shown = Math.min(count, maxRows);
    const rows: string[][] = [];
    const bools = names.map((_, i) => cols?.[i]?.dt === 'bool'); // bool arrays arrive as bytes
    for (let r = 0; r < shown; r++) {
      rows.push(columns.map((c, i) => (c && r < c.length ? cell(bools[i] ? Boolean(c[r]) : c[r], prec) : '')));
    }
    const headings = cols ? cols.map((c) => c.label || c.name) : names;
    return { headings, rows, hidden: count - shown };
  }
  const rows: string[][] = [];
  flatten(map, '', rows, prec);
  return { headings: ['field', 'value'], rows: rows.slice(0, maxRows), hidden: Math.max(rows.length - maxRows, 0) };
}
