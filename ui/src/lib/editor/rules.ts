/**
 * A widget's rules as the property panel edits them: pure list operations that
 * keep every rule valid for the schema (a rule always sets something).
 */
import type { Rule } from '../screen';
import { parseValue } from './options';

/** A new rule: while the (first) channel's value is not 0, show the widget. */
export function newRule(): Rule {
  return { op: '!=', value: 0, set: { visible: true } };
}

export function addRule(rules: readonly Rule[] | undefined): Rule[] {
  return [...(rules ?? []), newRule()];
}

/** The list without rule `i`; `undefined` when none is left (the widget drops `rules`). */
export function removeRule(rules: readonly Rule[] | undefined, i: number): Rule[] | undefined {
  const out = (rules ?? []).filter((_, k) => k !== i);
  return out.length ? out : undefined;
}

type Test = 'channel' | 'on' | 'op' | 'value';
type Effect = keyof Rule['set'];

/**
 * Rule `i` with one comparison field or one effect changed from the panel's text
 * ('' removes it; a value is typed: number, boolean or text). Switching `on`
 * gives a comparison value that fits it. An effect left alone is kept when the
 * last would be removed (a rule must set something).
 */
export function editRule(rules: readonly Rule[], i: number, field: Test | `set.${Effect}`, raw: string): Rule[] {
  const r: Rule = { ...rules[i], set: { ...rules[i].set } };
  if (field.startsWith('set.')) {
    const key = field.slice(4) as Effect;
    if (raw === '') {
      delete r.set[key];
      if (!Object.keys(r.set).length) return [...rules];
    } else if (key === 'visible') r.set.visible = raw === 'true';
    else r.set[key] = raw;
  } else {
    const key = field as Test;
    if (raw === '') delete r[key];
    else if (key === 'value') r.value = r.on === 'severity' ? raw : (parseValue(raw) as Rule['value']);
    else if (key === 'on') {
      r.on = raw as Rule['on'];
      r.value = raw === 'severity' ? 'minor' : 0;
    } else if (key === 'op') r.op = raw as Rule['op'];
    else r.channel = raw;
  }
  return rules.map((x, k) => (k === i ? r : x));
}
