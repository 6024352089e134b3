import { render } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import Host from '../testing/Host.svelte';
import { Gateway } from '../transport/gateway.svelte';
import type { MetaMsg } from '../transport/protocol';
import { tableView } from './table';

const nd = (values: number[]) => ({ data: Float64Array.from(values), shape: [values.length] });
const TABLE_META: MetaMsg = {
  dt: 'table', shape: [], w: true,
  cols: [{ name: 'name', label: 'Name', dt: 'str' }, { name: 'pos', label: 'Position', dt: 'f8' }],
};
const ok = (values: number[]) => ({ data: Uint8Array.from(values), shape: [values.length] });

describe('table view', () => {
  it('shows an NTTable as rows in the metadata column order with its labels', () => {
    const view = tableView({ pos: nd([1.5, -2]), name: ['M0', 'M1'] }, TABLE_META);
    expect(view.headings).toEqual(['Name', 'Position']);
    expect(view.rows).toEqual([['M0', '1.500'], ['M1', '-2']]);
    expect(view.hidden).toBe(0);
  });

  it('shows bool columns (bytes on the wire) as true/false', () => {
    const meta: MetaMsg = { ...TABLE_META, cols: [{ name: 'ok', label: 'ok', dt: 'bool' }] };
    expect(tableView({ ok: ok([1, 0]) }, meta).rows).toEqual([['true'], ['false']]);
  });

  it('caps the rows and says how many are hidden', () => {
    const view = tableView({ name: ['a', 'b', 'c'], pos: nd([1, 2, 3]) }, TABLE_META, 2);
    expect(view.rows.length).toBe(2);
    expect(view.hidden).toBe(1);
  });

  it('shows any other structure as field/value rows', () => {
    const view = tableView(
      { position: 1.5, moving: false, limits: { low: -10, high: 10 }, rows: [{ q: 1 }], trace: nd([1, 2]) },
      { dt: 'struct', shape: [], w: true },
    );
    expect(view.headings).toEqual(['field', 'value']);
    expect(view.rows).toEqual([
      ['position', '1.500'], ['moving', 'false'], ['limits.low', '-10'], ['limits.high', '10'],
      ['rows[0].q', '1'], ['trace', '[2] 1, 2'],
    ]);
  });

  it('shows nothing for scalars, an array as one row per element', () => {
    expect(tableView(3, null).headings).toEqual([]);
    expect(tableView(nd([1.5, 2]), null)).toEqual({ headings: ['index', 'value'], rows: [['0', '1.500'], ['1', '2']], hidden: 0 });
    expect(tableView(['a', 'b'], null, 1).rows).toEqual([['0', 'a']]);
  });
});

describe('table widget', () => {
  it('renders the rows of the committed value', () => {
    const pending: (() => void)[] = [];
    const gw = new Gateway({ schedule: (cb) => pending.push(cb) });
    gw.handle({ op: 'hello', ver: 1, gw: 'g', user: 'u', write: false });
    const sub = gw.subscribe(['pva://T']);
    const { container } = render(Host, { props: { gateway: gw, spec: { type: 'table', channels: ['pva://T'] } } });
    gw.handle({ op: 'snap', id: sub.requestId, sid: 1, ch: sub.uris,
      val: [{ v: { name: ['M0'], pos: nd([4.25]) }, t: 1, sev: 0, c: true }], meta: [TABLE_META] });
    pending.splice(0).forEach((cb) => cb());
    const cells = [...container.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells).toEqual(['M0', '4.250']);
    expect([...container.querySelectorAll('th')].map((th) => th.textContent)).toEqual(['Name', 'Position']);
  });
});
