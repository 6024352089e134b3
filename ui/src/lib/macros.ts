/**
 * Screen macros: `$(NAME)`, `${NAME}` and `$(NAME=default)` references in a screen's
 * channels, titles, texts, rules and links, expanded when the screen opens. The
 * values, highest first: the URL query of the screen's route, the macros of the link
 * or embed that opened it (with its opener's), the screen's own `macros`, the
 * reference's default. A reference with none of them stays as written.
 */
import type { Screen } from './screen';

export type Macros = Record<string, string>;

/** Context key: the macros in effect for the screen around a widget (what it passes on). */
export const MACROS = Symbol('synoptic-macros');

/** Rounds of expansion (a value may name another macro); beyond, the text is kept as is. */
const MAX_ROUNDS = 20;
const REFERENCE = /\$\(([^()=]+)(?:=([^()]*))?\)|\$\{([^{}=]+)(?:=([^{}]*))?\}/g;

/** `text` with its macro references expanded from `macros`. */
export function expandMacros(text: string, macros: Macros): string {
  if (!text.includes('$')) return text;
  let current = text;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = current.replace(REFERENCE, (whole, n1: string | undefined, d1: string | undefined, n2: string | undefined, d2: string | undefined) => {
      const name = (n1 ?? n2 ?? '').trim();
      const fallback = d1 ?? d2;
      if (Object.hasOwn(macros, name)) return macros[name];
      return fallback ?? whole;
    });
    if (next === current) return next;
    current = next;
  }
  return current;
}

/** Whether `text` holds a macro reference. */
export function hasMacros(text: string): boolean {
  return text.includes('$(') || text.includes('${');
}

/** The macros a route's query gives (`#/screen/name?P=SR02:&N=4`). */
export function queryMacros(query: string): Macros {
  const out: Macros = {};
  for (const [k, v] of new URLSearchParams(query)) if (/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(k)) out[k] = v;
  return out;
}

/** The macros in effect for a screen: its own, then the opener's, then the URL's (highest). */
export function effectiveMacros(screen: Screen, inherited: Macros = {}, url: Macros = {}): Macros {
  return { ...(screen.macros ?? {}), ...inherited, ...url };
}

function deep(value: unknown, macros: Macros): unknown {
  if (typeof value === 'string') return expandMacros(value, macros);
  if (Array.isArray(value)) return value.map((v) => deep(v, macros));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = k === 'macros' ? expandValues(v as Macros, macros) : deep(v, macros);
    return out;
  }
  return value;
}

function expandValues(m: Macros, macros: Macros): Macros {
  return Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, expandMacros(v, macros)]));
}

/**
 * The screen with every macro reference of its widgets expanded (a copy; the same
 * object when the screen holds none: the common grid screen costs one scan).
 */
export function expandScreen(screen: Screen, macros: Macros): Screen {
  if (!hasMacros(JSON.stringify(screen.widgets)) && !hasMacros(screen.title)) return screen;
  return { ...screen, title: expandMacros(screen.title, macros), widgets: deep(screen.widgets, macros) as Screen['widgets'] };
}
