import { describe, expect, it } from 'vitest';
import type { ScreenEntry } from '../screen';
import { groupScreens, matches, rankOf } from './screenlist';
import { fetchChannelHits } from '../screen';

const entries: ScreenEntry[] = [
  { name: 'vacuum', title: 'Vacuum' },
  { name: 'ADCore--NDFileHDF5', title: 'HDF5 file', set: 'ADCore', file: 'NDFileHDF5.bob' },
  { name: 'ADCore--ADTop', title: 'Area detector', set: 'ADCore', file: 'ADTop.bob', home: true },
  { name: 'ADCore--plugins--NDStats', title: 'Statistics', set: 'ADCore', file: 'plugins/NDStats.bob' },
  { name: 'ibex--main', title: 'IBEX', set: 'ibex', file: 'main.opi', home: true },
];

describe('the screen list', () => {
  it('groups screens by set and folder, the home first, screens of no set first', () => {
    const groups = groupScreens(entries);
    expect(groups.map((g) => [g.set, g.count, g.home?.name ?? null])).toEqual([
      [null, 1, null],
      ['ADCore', 3, 'ADCore--ADTop'],
      ['ibex', 1, 'ibex--main'],
    ]);
    expect(groups[1].folders.map((f) => [f.folder, f.screens.map((s) => s.name)])).toEqual([
      ['', ['ADCore--ADTop', 'ADCore--NDFileHDF5']],
      ['plugins', ['ADCore--plugins--NDStats']],
    ]);
  });

  it('finds screens by every word, in name, title or file', () => {
    expect(groupScreens(entries, 'stat').flatMap((g) => g.folders.flatMap((f) => f.screens.map((s) => s.name)))).toEqual(['ADCore--plugins--NDStats']);
    expect(matches(entries[1], 'hdf5 adcore')).toBe(true);
    expect(matches(entries[1], 'hdf5 ibex')).toBe(false);
    expect(matches(entries[4], 'MAIN.OPI')).toBe(true);
    expect(groupScreens(entries, 'nothing like it')).toEqual([]);
  });

  it('finds screens by a channel they show, after those found by name or title, best hit first', () => {
    const hits = [
      { name: 'ibex--main', channels: ['ca://IN:LARMOR:DAE:RUNSTATE'], matches: 1 },
      { name: 'ADCore--NDFileHDF5', channels: ['ca://IN:LARMOR:DAE:X'], matches: 3 },
    ];
    const flat = (q: string) => groupScreens(entries, q, hits).flatMap((g) => g.folders.flatMap((f) => f.screens.map((s) => s.name)));
    expect(flat('larmor')).toEqual(['ibex--main', 'ADCore--NDFileHDF5']);
    // a screen whose title holds the query comes before those found by a channel
    const withTitle = groupScreens(entries, 'area', [{ name: 'ibex--main', channels: ['ca://AREA'], matches: 1 }]);
    expect(withTitle.map((g) => g.set)).toEqual(['ADCore', 'ibex']);
    const hitAt = new Map([['vacuum', 0]]);
    expect(rankOf(entries[0], 'vacuum', hitAt)).toBe(0);
    expect(rankOf(entries[1], 'ndfilehdf5', hitAt)).toBe(0);
    expect(rankOf(entries[2], 'adtop.bob', hitAt)).toBe(1);
    expect(rankOf(entries[3], 'sr:current', new Map([['ADCore--plugins--NDStats', 4]]))).toBe(6);
    expect(rankOf(entries[3], 'sr:current', hitAt)).toBe(null);
  });

  it('asks the gateway which screens show a channel', async () => {
    const asked: string[] = [];
    const fetcher = (async (url: string) => {
      asked.push(url);
      return new Response(JSON.stringify({ q: 'a b', total: 1, screens: [{ name: 'x', channels: ['ca://A:B'], matches: 2 }] }));
    }) as unknown as typeof fetch;
    expect(await fetchChannelHits('a b', fetcher)).toEqual([{ name: 'x', channels: ['ca://A:B'], matches: 2 }]);
    expect(asked).toEqual(['api/channels/screens?q=a%20b&limit=100']);
  });
});
