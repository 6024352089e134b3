/**
 * What the property panel shows for several selected widgets: the fields all of
 * their types have, and for each value the one they share or MIXED.
 */
import type { WidgetSpec } from '../screen';
import { channelRange, optionFields, type Field } from './options';

/** Several widgets hold different values here. */
export const MIXED: unique symbol = Symbol('mixed');
export type Shared<T> = T | typeof MIXED;

/** The value all of `values` share (objects compared by their JSON), or MIXED; undefined for none. */
export function common<T>(values: readonly T[]): Shared<T> | undefined {
  if (!values.length) return undefined;
  const key = (v: T) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
  const first = key(values[0]);
  return values.every((v) => key(v) === first) ? values[0] : MIXED;
}

/** The option fields every one of `types` has (same key, kind and choices), in the first type's order. */
export function commonFields(types: readonly string[]): Field[] {
  const [first, ...rest] = [...new Set(types)];
  if (first === undefined) return [];
  const sig = (f: Field) => `${f.key}|${f.kind}|${(f.choices ?? []).join(',')}`;
  const others = rest.map((t) => new Set(optionFields(t).map(sig)));
  return optionFields(first).filter((f) => others.every((o) => o.has(sig(f))));
}

/** How many channels all of `types` take: [the largest minimum, the smallest maximum]. */
export function commonRange(types: readonly string[]): [number, number] {
  const ranges = types.map(channelRange);
  return [Math.max(0, ...ranges.map((r) => r[0])), Math.min(...ranges.map((r) => r[1]))];
}

/**
 * The channels of several widgets by position: for each position that all of
 * them have, the URI they share or MIXED; `equalCount` when all have as many.
 */
export function commonChannels(specs: readonly WidgetSpec[]): { channels: Shared<string>[]; equalCount: boolean } {
  const counts = specs.map((s) => s.channels?.length ?? 0);
  const n = Math.min(...counts);
  const channels = Array.from({ length: n }, (_, i) => common(specs.map((s) => s.channels![i])) as Shared<string>);
  return { channels, equalCount: counts.every((c) => c === counts[0]) };
}

/** How many rules all of `specs` have (the panel edits those positions in each), and whether all have as many. */
export function commonRuleCount(specs: readonly WidgetSpec[]): { count: number; equalCount: boolean } {
  const counts = specs.map((s) => s.rules?.length ?? 0);
  return { count: Math.min(...counts), equalCount: counts.every((c) => c === counts[0]) };
}
