import { describe, expect, it } from 'vitest';
import type { ScreenEntry } from '../screen';
import { groupScreens, matches } from './screenlist';

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
});
