/**
 * Widget actions (the screen schema's `actions`): open a screen, write a value,
 * open a web page. Where an opened screen goes follows Phoebus: the action's
 * target (replace this page, a new tab, a new window), changed by the click's
 * modifiers as Phoebus changes it (Ctrl: a tab; Shift or the middle button: a
 * window; Ctrl+Shift: replace).
 */
import type { Macros } from '../macros';
import type { Gateway } from '../transport/gateway.svelte';
import { navigate, screenHash, type Crumb } from './trail';
import { prefetchScreen, subscribeAhead } from './prefetch';

export type Target = 'replace' | 'tab' | 'window';

export type Action =
  | { type: 'open'; screen: string; macros?: Macros; target?: Target; label?: string }
  | { type: 'write'; channel: string; value: number | string | boolean; label?: string; confirm?: string }
  | { type: 'url'; url: string; label?: string };

/** What the screen around a widget gives its actions: the macros it passes on, where it is, the gateway. */
export interface ActionContext {
  macros: Macros;
  here: Crumb | null;
  gateway: Gateway;
}

/** The words of an action in a menu or on a button. */
export function actionLabel(a: Action): string {
  if (a.label) return a.label;
  if (a.type === 'open') return `Open ${a.screen}`;
  if (a.type === 'write') return `Write ${a.value} to ${a.channel}`;
  return a.url;
}

/** Where an open action goes for a click with these modifiers. */
export function targetOf(a: { target?: Target }, ev?: Pick<MouseEvent, 'ctrlKey' | 'metaKey' | 'shiftKey' | 'button'> | null): Target {
  if (ev) {
    const shortcut = ev.ctrlKey || ev.metaKey;
    if (shortcut && ev.shiftKey) return 'replace';
    if (shortcut) return 'tab';
    if (ev.shiftKey || ev.button === 1) return 'window';
  }
  return a.target ?? 'replace';
}

/**
 * Open a screen with `macros` (the opener's, then the action's own) where `target` says;
 * in this page, its channels are subscribed at once through `gateway` when it was read ahead.
 */
export function openScreen(screen: string, macros: Macros, target: Target, here: Crumb | null, gateway?: Gateway): void {
  const hash = screenHash(screen, macros);
  if (target === 'replace' && gateway) subscribeAhead(screen, macros, gateway);
  if (target === 'replace') navigate(hash, here);
  else if (target === 'tab') window.open(`${location.pathname}${location.search}${hash}`, '_blank', 'noopener');
  else window.open(`${location.pathname}${location.search}${hash}`, '_blank', 'noopener,popup,width=900,height=700');
}

/** Run one action; a write answers with its result (after the confirmation it may ask). */
export async function runAction(a: Action, ctx: ActionContext, ev?: MouseEvent | null): Promise<string> {
  if (a.type === 'open') {
    openScreen(a.screen, { ...ctx.macros, ...(a.macros ?? {}) }, targetOf(a, ev), ctx.here, ctx.gateway);
    return '';
  }
  if (a.type === 'url') {
    if (/^https?:\/\//.test(a.url)) window.open(a.url, '_blank', 'noopener');
    return '';
  }
  if (a.confirm && !window.confirm(a.confirm)) return 'cancelled';
  const r = await ctx.gateway.put(a.channel, a.value);
  return r.ok ? 'written' : `${r.err ?? 'error'}${r.msg ? `: ${r.msg}` : ''}`;
}

/**
 * A small menu of actions at a point (for a widget's context menu, or a click
 * on a widget holding several); closed by a choice, Escape or a click elsewhere.
 */
export function showActionMenu(actions: Action[], ctx: ActionContext, x: number, y: number): () => void {
  const menu = document.createElement('ul');
  menu.className = 'action-menu';
  menu.setAttribute('role', 'menu');
  const close = () => {
    menu.remove();
    removeEventListener('pointerdown', outside, true);
    removeEventListener('keydown', escape, true);
  };
  const outside = (e: Event) => {
    if (!menu.contains(e.target as Node)) close();
  };
  const escape = (e: KeyboardEvent) => {
    if (e.key === 'Escape') close();
  };
  for (const a of actions) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.setAttribute('role', 'menuitem');
    button.textContent = actionLabel(a);
    button.addEventListener('click', (e) => {
      close();
      void runAction(a, ctx, e);
    });
    item.append(button);
    menu.append(item);
  }
  menu.style.left = `${Math.max(0, Math.min(x, innerWidth - 200))}px`;
  menu.style.top = `${Math.max(0, y)}px`;
  document.body.append(menu);
  addEventListener('pointerdown', outside, true);
  addEventListener('keydown', escape, true);
  (menu.querySelector('button') as HTMLButtonElement | null)?.focus();
  return close;
}

/**
 * A widget's own actions on its box: its context menu lists them; with `click`
 * a click runs the only one, or opens the menu of several. Returns the release.
 */
export function attachActions(el: HTMLElement, actions: Action[], click: boolean, ctx: () => ActionContext): () => void {
  let close: (() => void) | null = null;
  const menu = (e: MouseEvent) => {
    e.preventDefault();
    close?.();
    close = showActionMenu(actions, ctx(), e.clientX, e.clientY);
  };
  const onClick = (e: MouseEvent) => {
    if ((e.target as HTMLElement).closest('button, input, select, a, textarea')) return;
    if (actions.length === 1) void runAction(actions[0], ctx(), e);
    else menu(e);
  };
  // the screens it opens in this page are read when it is pointed at
  const pointed = () => {
    for (const a of actions) if (a.type === 'open' && (a.target ?? 'replace') === 'replace') prefetchScreen(a.screen, ctx().gateway, true);
  };
  el.addEventListener('contextmenu', menu);
  if (click) {
    el.addEventListener('pointerenter', pointed);
    el.addEventListener('click', onClick);
    el.classList.add('has-actions');
    el.setAttribute('data-actions', String(actions.length));
  }
  return () => {
    close?.();
    el.removeEventListener('contextmenu', menu);
    el.removeEventListener('click', onClick);
    el.removeEventListener('pointerenter', pointed);
  };
}
