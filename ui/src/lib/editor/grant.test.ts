import { describe, expect, it } from 'vitest';
import { globToRegExp, mayEdit } from './grant';

describe('screen grants (shell-style globs)', () => {
  it('matches like fnmatch', () => {
    expect(mayEdit(['*'], 'epics-demo')).toBe(true);
    expect(mayEdit(['ops-*'], 'ops-main')).toBe(true);
    expect(mayEdit(['ops-*'], 'epics-demo')).toBe(false);
    expect(mayEdit(['a?c'], 'abc')).toBe(true);
    expect(mayEdit(['[ab]x'], 'bx')).toBe(true);
    expect(mayEdit(['[!ab]x'], 'bx')).toBe(false);
    expect(mayEdit([], 'x')).toBe(false);
    expect(globToRegExp('a.b').test('axb')).toBe(false); // a dot is literal
  });
});
