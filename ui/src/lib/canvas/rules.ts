/**
 * Widget rules: while a channel's value (or severity) compares true, a widget is
 * shown or hidden, or takes another colour or text. The first matching rule wins
 * per property; what no rule sets falls back to the widget's own.
 */
import type { ChannelState } from '../transport/channel.svelte';
import type { Rule } from '../screen';
import { cssColour } from './style';

const SEVERITIES: Record<string, number> = { none: 0, ok: 0, minor: 1, major: 2, invalid: 3, disconnected: 4 };

/** Whether one rule holds for the channel's committed value. */
export function ruleHolds(rule: Rule, ch: ChannelState): boolean {
  const value = ch.current;
  if (!value) return false;
  const op = rule.op ?? '!=';
  if (rule.on === 'severity') {
    const sev = value.c === false ? 4 : value.sev;
    const want = typeof rule.value === 'string' ? (SEVERITIES[rule.value.toLowerCase()] ?? 0) : Number(rule.value ?? 0);
    return compare(op, sev, want);
  }
  let v: unknown = value.v;
  const want = rule.value ?? 0;
  if (typeof want === 'string' && typeof v === 'number' && ch.currentMeta?.labels) v = ch.currentMeta.labels[v] ?? v; // an enum by its label
  if (typeof v === 'bigint' || typeof v === 'boolean') v = Number(v);
  if (typeof want === 'string' && typeof v === 'string') return compare(op, v, want);
  const x = Number(v);
  const y = Number(want);
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  return compare(op, x, y);
}

function compare<T extends number | string>(op: string, a: T, b: T): boolean {
  switch (op) {
    case '==': return a === b;
    case '!=': return a !== b;
    case '<': return a < b;
    case '<=': return a <= b;
    case '>': return a > b;
    case '>=': return a >= b;
  }
  return false;
}

/**
 * Apply `rules` to a widget's element whenever one of their channels commits;
 * returns the function that stops it. `visible`: the widget's own visibility.
 */
export function watchRules(el: HTMLElement, rules: Rule[], channels: ChannelState[], visible: boolean): () => void {
  const textEl = el.querySelector<HTMLElement>('.w-text, .w-link');
  const shape = el.classList.contains('t-shape');
  const baseFg = el.style.getPropertyValue('--w-fg');
  const baseBg = el.style.getPropertyValue('--w-bg');
  const ownText = textEl?.textContent ?? null;
  let shown = '';
  const apply = () => {
    let hidden: boolean | undefined;
    let fg: string | undefined;
    let bg: string | undefined;
    let text: string | undefined;
    rules.forEach((rule, k) => {
      if (!ruleHolds(rule, channels[k])) return;
      hidden ??= rule.set.visible === undefined ? undefined : !rule.set.visible;
      fg ??= rule.set.fg;
      bg ??= rule.set.bg;
      text ??= rule.set.text;
    });
    const key = `${hidden}|${fg}|${bg}|${text}`;
    if (key === shown) return; // DOM writes only on a change
    shown = key;
    el.hidden = hidden ?? !visible;
    if (shape) {
      // a shape is filled and stroked from its style's colours, not its box's
      setVar(el, '--w-fg', cssColour(fg) ?? baseFg);
      setVar(el, '--w-bg', cssColour(bg) ?? baseBg);
    } else {
      el.style.color = cssColour(fg) ?? '';
      el.style.backgroundColor = cssColour(bg) ?? '';
    }
    if (textEl && ownText !== null) textEl.textContent = text ?? ownText;
  };
  const stops = [...new Set(channels)].map((ch) => ch.watch(apply));
  return () => stops.forEach((stop) => stop());
}

function setVar(el: HTMLElement, name: string, value: string): void {
  if (value) el.style.setProperty(name, value);
  else el.style.removeProperty(name);
}
