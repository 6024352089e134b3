import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { actionLabel, attachActions, runAction, targetOf, type ActionContext } from './actions';
import { currentTrail, MAX_TRAIL, navigate, screenHash } from './trail';
import { noteOpened, recentScreens, MAX_RECENT } from './recent';
import type { Gateway } from '../transport/gateway.svelte';

const click = (mods: Partial<MouseEvent> = {}) => ({ ctrlKey: false, metaKey: false, shiftKey: false, button: 0, ...mods });

describe('where an opened screen goes (Phoebus: the target, changed by the modifiers)', () => {
  it('follows the target, Ctrl makes a tab, Shift or the middle button a window, Ctrl+Shift this page', () => {
    expect(targetOf({})).toBe('replace');
    expect(targetOf({ target: 'tab' }, click())).toBe('tab');
    expect(targetOf({ target: 'replace' }, click({ ctrlKey: true }))).toBe('tab');
    expect(targetOf({ target: 'tab' }, click({ shiftKey: true }))).toBe('window');
    expect(targetOf({}, click({ button: 1 }))).toBe('window');
    expect(targetOf({ target: 'window' }, click({ ctrlKey: true, shiftKey: true }))).toBe('replace');
  });

  it('names actions by their label, else by what they do', () => {
    expect(actionLabel({ type: 'open', screen: 's', label: 'Motor 1' })).toBe('Motor 1');
    expect(actionLabel({ type: 'open', screen: 's' })).toBe('Open s');
    expect(actionLabel({ type: 'write', channel: 'ca://X', value: 1 })).toBe('Write 1 to ca://X');
  });
});

describe('the back path of a linked site', () => {
  beforeEach(() => history.replaceState(null, '', '#/'));

  it('keeps the screens a link was used from in the history entry', () => {
    const changes: string[] = [];
    const on = () => changes.push(location.hash);
    addEventListener('hashchange', on);
    navigate(screenHash('b', { P: 'SR:' }), { name: 'a', query: '', title: 'A' });
    navigate(screenHash('c'), { name: 'b', query: 'P=SR%3A', title: 'B' });
    removeEventListener('hashchange', on);
    expect(location.hash).toBe('#/screen/c');
    expect(changes).toEqual(['#/screen/b?P=SR%3A', '#/screen/c']);
    expect(currentTrail().map((c) => c.name)).toEqual(['a', 'b']);
    navigate('#/', null); // not from a link: no back path
    expect(currentTrail()).toEqual([]);
  });

  it('keeps at most MAX_TRAIL screens', () => {
    const long = Array.from({ length: MAX_TRAIL + 5 }, (_, i) => ({ name: `s${i}`, query: '', title: '' }));
    navigate('#/screen/x', { name: 'last', query: '', title: '' }, long);
    expect(currentTrail()).toHaveLength(MAX_TRAIL);
    expect(currentTrail().at(-1)!.name).toBe('last');
  });
});

describe('actions', () => {
  let opened: unknown[][];
  beforeEach(() => {
    opened = [];
    vi.spyOn(window, 'open').mockImplementation((...args: unknown[]) => (opened.push(args), null));
    history.replaceState(null, '', '#/');
  });
  afterEach(() => vi.restoreAllMocks());
  const gateway = { put: vi.fn(async () => ({ ok: true })) } as unknown as Gateway;
  const ctx: ActionContext = { macros: { P: 'SR:' }, here: { name: 'home', query: '', title: 'Home' }, gateway };

  it("open here with the macros (the opener's, then the action's), in a tab, in a window", async () => {
    await runAction({ type: 'open', screen: 'sector', macros: { S: '01' } }, ctx);
    expect(location.hash).toBe('#/screen/sector?P=SR%3A&S=01');
    expect(currentTrail()).toEqual([{ name: 'home', query: '', title: 'Home' }]);
    await runAction({ type: 'open', screen: 'x', target: 'tab' }, ctx);
    await runAction({ type: 'open', screen: 'y' }, ctx, new MouseEvent('click', { shiftKey: true }));
    expect(opened.map((a) => [String(a[0]).split('#')[1], a[1], String(a[2]).includes('popup')])).toEqual([
      ['/screen/x?P=SR%3A', '_blank', false],
      ['/screen/y?P=SR%3A', '_blank', true],
    ]);
  });

  it('a write asks first when it says so; a web page opens only over http(s)', async () => {
    const ask = vi.spyOn(window, 'confirm').mockReturnValueOnce(false).mockReturnValueOnce(true);
    expect(await runAction({ type: 'write', channel: 'ca://X', value: 1, confirm: 'Sure?' }, ctx)).toBe('cancelled');
    expect(await runAction({ type: 'write', channel: 'ca://X', value: 1, confirm: 'Sure?' }, ctx)).toBe('written');
    expect(ask).toHaveBeenCalledTimes(2);
    expect(gateway.put).toHaveBeenCalledWith('ca://X', 1);
    await runAction({ type: 'url', url: 'javascript:alert(1)' }, ctx);
    await runAction({ type: 'url', url: 'https://example.org/' }, ctx);
    expect(opened.map((a) => a[0])).toEqual(['https://example.org/']);
  });

  it('a clickable widget runs its one action, lists several in a menu, and always in its context menu', () => {
    const el = document.createElement('div');
    document.body.append(el);
    const release = attachActions(el, [{ type: 'open', screen: 'a' }, { type: 'open', screen: 'b', label: 'B' }], true, () => ctx);
    el.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 5, clientY: 5 }));
    const items = [...document.querySelectorAll('.action-menu [role=menuitem]')].map((b) => b.textContent);
    expect(items).toEqual(['Open a', 'B']);
    (document.querySelector('.action-menu [role=menuitem]') as HTMLButtonElement).click();
    expect(location.hash).toBe('#/screen/a?P=SR%3A');
    expect(document.querySelector('.action-menu')).toBeNull();
    el.dispatchEvent(new MouseEvent('contextmenu', { bubbles: true }));
    expect(document.querySelector('.action-menu')).not.toBeNull();
    release();
    expect(document.querySelector('.action-menu')).toBeNull();
    el.remove();
  });
});

describe('recently opened screens', () => {
  it('keeps the newest first, once each (name and macros), at most MAX_RECENT', () => {
    const data = new Map<string, string>();
    const store = { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => void data.set(k, v) };
    noteOpened({ name: 'a', query: '', title: 'A' }, store, 1);
    noteOpened({ name: 'b', query: 'P=1', title: 'B' }, store, 2);
    noteOpened({ name: 'a', query: '', title: 'A' }, store, 3);
    expect(recentScreens(store).map((r) => [r.name, r.at])).toEqual([['a', 3], ['b', 2]]);
    for (let i = 0; i < 20; i++) noteOpened({ name: `s${i}`, query: '', title: '' }, store, 10 + i);
    expect(recentScreens(store)).toHaveLength(MAX_RECENT);
    expect(recentScreens(null)).toEqual([]);
  });
});
