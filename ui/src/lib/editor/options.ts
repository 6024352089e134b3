/**
 * What the property panel offers for a widget type, read from the screen JSON
 * Schema itself (the one contract): its options with their kinds, limits and
 * defaults, and how many channels it takes.
 */
import schema from '../../../../schemas/synoptic_schemas/json/screen.schema.json';

export interface Field {
  key: string;
  kind: 'boolean' | 'number' | 'integer' | 'string' | 'enum' | 'value' | 'colour' | 'font';
  choices?: string[];
  min?: number;
  max?: number;
  default?: unknown;
  description?: string;
}

type Node = Record<string, unknown>;

function resolve(node: Node | undefined): Node {
  let n = node ?? {};
  for (let depth = 0; typeof n.$ref === 'string' && depth < 8; depth++) {
    const path = (n.$ref as string).replace(/^#\//, '').split('/');
    let target: unknown = schema;
    for (const p of path) target = (target as Node)?.[p];
    n = { ...(target as Node), ...Object.fromEntries(Object.entries(n).filter(([k]) => k !== '$ref')) };
  }
  return n;
}

function appliesTo(rule: Node, type: string): boolean {
  const t = ((rule.if as Node)?.properties as Node)?.type as Node | undefined;
  if (!t) return false;
  return t.const === type || (Array.isArray(t.enum) && t.enum.includes(type));
}

function rulesFor(type: string): Node[] {
  const widget = (schema.$defs as Node).widget as Node;
  return ((widget.allOf as Node[]) ?? []).filter((r) => appliesTo(r, type)).map((r) => r.then as Node);
}

/** Every widget type the schema allows. */
export const WIDGET_TYPES: readonly string[] = ((schema.$defs as Node).widget_type as { enum: string[] }).enum;

const defs = schema.$defs as Node;

/**
 * The fields of an object schema, in schema order; a nested object's members
 * become `outer.inner` fields, a colour or font reference its own kind.
 */
function fieldsOf(def: Node, prefix = ''): Field[] {
  const props = (def.properties as Record<string, Node>) ?? {};
  return Object.entries(props).flatMap(([name, raw]): Field[] => {
    const key = prefix + name;
    if (raw.$ref === '#/$defs/colour') return [{ key, kind: 'colour', description: resolve(raw).description as string | undefined }];
    if (raw.$ref === '#/$defs/font') return [{ key, kind: 'font', description: resolve(raw).description as string | undefined }];
    const p = resolve(raw);
    if (p.type === 'object' && p.properties) return fieldsOf(p, `${key}.`);
    if (p.type === 'array') return []; // lists (an importer's symbols, items, tabs): not a form field
    const f: Field = { key, kind: 'string', description: p.description as string | undefined, default: p.default };
    if (Array.isArray(p.enum)) return [{ ...f, kind: 'enum', choices: p.enum.map(String) }];
    if (Array.isArray(p.type)) return [{ ...f, kind: 'value' }];
    if (p.type === 'boolean' || p.type === 'number' || p.type === 'integer' || p.type === 'string') f.kind = p.type;
    if (typeof p.minimum === 'number') f.min = p.minimum;
    if (typeof p.maximum === 'number') f.max = p.maximum;
    return [f];
  });
}

/** The options a widget type takes, in schema order. */
export function optionFields(type: string): Field[] {
  for (const then of rulesFor(type)) {
    const ref = ((then.properties as Node)?.options as Node) ?? null;
    if (ref) return fieldsOf(resolve(ref));
  }
  return [];
}

/** A widget's `style` members (colours, font, alignment, border …), in schema order. */
export const STYLE_FIELDS: readonly Field[] = fieldsOf(defs.style as Node);

function enumIn(def: Node): string[] {
  for (const alt of (def.anyOf as Node[]) ?? []) if (Array.isArray(alt.enum)) return alt.enum.map(String);
  return [];
}

/** A grid layout's settings (columns, row height, gap), in schema order, without its `type`. */
export const GRID_FIELDS: readonly Field[] = fieldsOf(defs.layout as Node).filter((f) => f.key !== 'type');

/** A canvas layout's settings (size, scale, background), in schema order, without its `type`. */
export const CANVAS_FIELDS: readonly Field[] = fieldsOf(defs.canvas_layout as Node).filter((f) => f.key !== 'type');

/** The named colours the schema accepts (Phoebus's), offered beside #rrggbb. */
export const NAMED_COLOUR_CHOICES: readonly string[] = enumIn(defs.colour as Node);

/** The named fonts the schema accepts (Phoebus's). */
export const NAMED_FONT_CHOICES: readonly string[] = enumIn(defs.font as Node);

/** What a rule has: its comparison fields (channel, on, op, value) and what it sets. */
export const RULE_FIELDS: { readonly test: readonly Field[]; readonly set: readonly Field[] } = (() => {
  const all = fieldsOf(defs.rule as Node);
  return { test: all.filter((f) => !f.key.startsWith('set.')), set: all.filter((f) => f.key.startsWith('set.')).map((f) => ({ ...f, key: f.key.slice(4) })) };
})();

/** The severities a severity rule compares with (ordered). */
export const SEVERITIES: readonly string[] = ['none', 'minor', 'major', 'invalid', 'disconnected'];

/** Options the schema requires for a type (a button's `value`). */
export function requiredOptions(type: string): string[] {
  for (const then of rulesFor(type)) {
    const ref = ((then.properties as Node)?.options as Node) ?? null;
    if (ref) return (resolve(ref).required as string[]) ?? [];
  }
  return [];
}

/** How many channels a type takes: [min, max] (max Infinity when unbounded). */
export function channelRange(type: string): [number, number] {
  let min = 0;
  let max = Infinity;
  for (const then of rulesFor(type)) {
    const ch = (then.properties as Node)?.channels as Node | undefined;
    if (!ch) continue;
    if (typeof ch.minItems === 'number') min = Math.max(min, ch.minItems);
    if (typeof ch.maxItems === 'number') max = Math.min(max, ch.maxItems);
  }
  return [min, max];
}

/** A typed value from a text field of kind `value` (number, boolean or string). */
export function parseValue(text: string): number | boolean | string {
  const t = text.trim();
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && Number.isFinite(Number(t))) return Number(t);
  return text;
}
