/**
 * Phoebus formula channels (`=expression`, `eq://expression`): a small parser (no
 * `eval`) into a tree, evaluated from the live values of the channels it names in
 * backquotes (`` `sim://sine` ``; single quotes as in older formulas). Operators:
 * `+ - * / % ^ **`, comparisons, `&& || !` (`and or not`), `? :`. Functions: the
 * Java Math ones (abs, sqrt, sin, atan2, pow, min, max, …), `round`, `rnd(x)`
 * (random in [0, x)), `if(c, a, b)`, `indexOf(e)` (an enum's index), `highestSeverity(…)` (the highest alarm
 * severity of its arguments, 0-3) and `majorAlarm(c, v)` / `minorAlarm(c, v)`
 * (`v` with a MAJOR / MINOR alarm while `c` is true). A result carries the highest
 * severity of the values it was computed from.
 */

/** A value in a formula: a number, string or number array, with its alarm severity (0-3). */
export interface Operand {
  v: number | string | number[];
  sev: number;
}

export type Node =
  | { k: 'num'; v: number }
  | { k: 'str'; v: string }
  | { k: 'ch'; uri: string }
  | { k: 'un'; op: string; a: Node }
  | { k: 'bin'; op: string; a: Node; b: Node }
  | { k: 'if'; c: Node; a: Node; b: Node }
  | { k: 'call'; fn: string; args: Node[] };

export class FormulaError extends Error {}

const MAX_LENGTH = 4000;
const MAX_DEPTH = 64;

/** The expression of a formula channel URI, or null when the URI is not one. */
export function formulaText(uri: string): string | null {
  if (uri.startsWith('=')) return uri.slice(1);
  if (uri.startsWith('eq://')) return uri.slice(5);
  return null;
}

/** A bare name in a formula's backquotes is a Channel Access PV (Phoebus's default). */
export function inputUri(name: string): string {
  const n = name.trim();
  return n.includes('://') || n.startsWith('=') ? n : `ca://${n}`;
}

type Token = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'ch'; v: string } | { t: 'id'; v: string } | { t: 'op'; v: string };

const OPS = ['**', '==', '!=', '<=', '>=', '&&', '||', '+', '-', '*', '/', '%', '^', '<', '>', '!', '?', ':', '(', ')', ','];

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '`' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new FormulaError(`unclosed ${c} at ${i}`);
      out.push({ t: 'ch', v: text.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j++];
      }
      if (j >= text.length) throw new FormulaError(`unclosed string at ${i}`);
      out.push({ t: 'str', v: s });
      i = j + 1;
      continue;
    }
    const num = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
    if (num) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (!op) throw new FormulaError(`unexpected '${c}' at ${i}`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

const WORD_OPS: Record<string, string> = { and: '&&', or: '||', not: '!' };

/** Parse a formula's expression; FormulaError with the position on a syntax error. */
export function parseFormula(text: string): Node {
  if (text.length > MAX_LENGTH) throw new FormulaError(`longer than ${MAX_LENGTH} characters`);
  const tokens = tokenize(text).map((t) => (t.t === 'id' && Object.hasOwn(WORD_OPS, t.v) ? { t: 'op' as const, v: WORD_OPS[t.v] } : t));
  let pos = 0;
  let depth = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (v: string) => { const t = peek(); return t?.t === 'op' && t.v === v; };
  const expect = (v: string) => {
    if (!isOp(v)) throw new FormulaError(`expected '${v}'`);
    pos++;
  };
  const binary = (next: () => Node, ops: string[]) => (): Node => {
    let a = next();
    while (peek()?.t === 'op' && ops.includes(String(peek()!.v))) {
      const op = tokens[pos++].v as string;
      a = { k: 'bin', op, a, b: next() };
    }
    return a;
  };
  const primary = (): Node => {
    const tok = tokens[pos++];
    if (!tok) throw new FormulaError('unexpected end');
    if (tok.t === 'num') return { k: 'num', v: tok.v };
    if (tok.t === 'str') return { k: 'str', v: tok.v };
    if (tok.t === 'ch') return { k: 'ch', uri: inputUri(tok.v) };
    if (tok.t === 'id') {
      if (isOp('(')) {
        pos++;
        const args: Node[] = [];
        if (!isOp(')')) {
          args.push(expr());
          while (isOp(',')) {
            pos++;
            args.push(expr());
          }
        }
        expect(')');
        if (!Object.hasOwn(FUNCTIONS, tok.v)) throw new FormulaError(`unknown function '${tok.v}'`);
        return { k: 'call', fn: tok.v, args };
      }
      if (Object.hasOwn(CONSTANTS, tok.v)) return { k: 'num', v: CONSTANTS[tok.v] };
      return { k: 'ch', uri: inputUri(tok.v) }; // an unquoted PV name
    }
    if (tok.v === '(') {
      const e = expr();
      expect(')');
      return e;
    }
    throw new FormulaError(`unexpected '${tok.v}'`);
  };
  const unary = (): Node => {
    if (peek()?.t === 'op' && ['-', '+', '!'].includes(String(peek()!.v))) {
      const op = tokens[pos++].v as string;
      return { k: 'un', op, a: unary() };
    }
    return power();
  };
  const power = (): Node => {
    const a = primary();
    if (isOp('^') || isOp('**')) {
      pos++;
      return { k: 'bin', op: '^', a, b: unary() };
    }
    return a;
  };
  const mult = binary(unary, ['*', '/', '%']);
  const add = binary(mult, ['+', '-']);
  const cmp = binary(add, ['<', '<=', '>', '>=']);
  const eq = binary(cmp, ['==', '!=']);
  const and = binary(eq, ['&&']);
  const or = binary(and, ['||']);
  function expr(): Node {
    if (++depth > MAX_DEPTH) throw new FormulaError('nested too deeply');
    const c = or();
    let out = c;
    if (isOp('?')) {
      pos++;
      const a = expr();
      expect(':');
      out = { k: 'if', c, a, b: expr() };
    }
    depth--;
    return out;
  }
  const tree = expr();
  if (pos < tokens.length) throw new FormulaError(`unexpected '${String(tokens[pos].v)}'`);
  return tree;
}

/** The channels a formula reads, in order of appearance, each once. */
export function formulaInputs(tree: Node): string[] {
  const seen = new Set<string>();
  const walk = (n: Node): void => {
    if (n.k === 'ch') seen.add(n.uri);
    else if (n.k === 'un') walk(n.a);
    else if (n.k === 'bin') (walk(n.a), walk(n.b));
    else if (n.k === 'if') (walk(n.c), walk(n.a), walk(n.b));
    else if (n.k === 'call') n.args.forEach(walk);
  };
  walk(tree);
  return [...seen];
}

const CONSTANTS: Record<string, number> = { pi: Math.PI, PI: Math.PI, E: Math.E, true: 1, false: 0 };

const num = (o: Operand): number => (typeof o.v === 'number' ? o.v : typeof o.v === 'string' ? Number(o.v) : (o.v[0] ?? NaN));
const sevOf = (ops: Operand[]) => ops.reduce((m, o) => Math.max(m, o.sev), 0);
const math1 = (f: (x: number) => number) => (a: Operand[]) => f(num(a[0]));

type Fn = (args: Operand[]) => number | Operand;
const FUNCTIONS: Record<string, Fn> = {
  abs: math1(Math.abs), acos: math1(Math.acos), asin: math1(Math.asin), atan: math1(Math.atan),
  cbrt: math1(Math.cbrt), ceil: math1(Math.ceil), cos: math1(Math.cos), cosh: math1(Math.cosh),
  exp: math1(Math.exp), expm1: math1(Math.expm1), floor: math1(Math.floor), log: math1(Math.log),
  log10: math1(Math.log10), round: math1(Math.round), signum: math1(Math.sign), sin: math1(Math.sin),
  sinh: math1(Math.sinh), sqrt: math1(Math.sqrt), tan: math1(Math.tan), tanh: math1(Math.tanh),
  toDegrees: math1((x) => (x * 180) / Math.PI), toRadians: math1((x) => (x * Math.PI) / 180),
  atan2: (a) => Math.atan2(num(a[0]), num(a[1])),
  hypot: (a) => Math.hypot(...a.map(num)),
  pow: (a) => num(a[0]) ** num(a[1]),
  max: (a) => Math.max(...a.map(num)),
  min: (a) => Math.min(...a.map(num)),
  rnd: (a) => Math.random() * num(a[0] ?? { v: 1, sev: 0 }),
  if: (a) => (num(a[0]) ? a[1] : a[2]) ?? NaN,
  highestSeverity: (a) => ({ v: sevOf(a), sev: sevOf(a) }),
  indexOf: (a) => ({ v: num(a[0]), sev: a[0]?.sev ?? 0 }), // an enum's index: our enums are their index
  majorAlarm: (a) => ({ v: a[1]?.v ?? num(a[0]), sev: num(a[0]) ? 2 : 0 }),
  minorAlarm: (a) => ({ v: a[1]?.v ?? num(a[0]), sev: num(a[0]) ? 1 : 0 }),
};

/**
 * The value of a formula from the current values of its inputs (`lookup`: the
 * operand of a channel, null while it has none): null until every input has a value.
 */
export function evaluate(tree: Node, lookup: (uri: string) => Operand | null): Operand | null {
  const ev = (n: Node): Operand | null => {
    switch (n.k) {
      case 'num':
        return { v: n.v, sev: 0 };
      case 'str':
        return { v: n.v, sev: 0 };
      case 'ch':
        return lookup(n.uri);
      case 'un': {
        const a = ev(n.a);
        if (!a) return null;
        return { v: n.op === '-' ? -num(a) : n.op === '!' ? Number(!num(a)) : num(a), sev: a.sev };
      }
      case 'if': {
        const c = ev(n.c);
        if (!c) return null;
        return ev(num(c) ? n.a : n.b);
      }
      case 'bin': {
        const a = ev(n.a);
        const b = ev(n.b);
        if (!a || !b) return null;
        return { v: binary(n.op, a, b), sev: Math.max(a.sev, b.sev) };
      }
      case 'call': {
        const args: Operand[] = [];
        for (const x of n.args) {
          const v = ev(x);
          if (!v) return null;
          args.push(v);
        }
        const r = FUNCTIONS[n.fn](args);
        return typeof r === 'number' ? { v: r, sev: sevOf(args) } : r;
      }
    }
  };
  return ev(tree);
}

function binary(op: string, a: Operand, b: Operand): number | string {
  if (op === '+' && (typeof a.v === 'string' || typeof b.v === 'string')) return `${a.v}${b.v}`;
  if ((op === '==' || op === '!=') && typeof a.v === 'string' && typeof b.v === 'string') return Number((a.v === b.v) === (op === '=='));
  const x = num(a);
  const y = num(b);
  switch (op) {
    case '+': return x + y;
    case '-': return x - y;
    case '*': return x * y;
    case '/': return x / y;
    case '%': return x % y;
    case '^': return x ** y;
    case '<': return Number(x < y);
    case '<=': return Number(x <= y);
    case '>': return Number(x > y);
    case '>=': return Number(x >= y);
    case '==': return Number(x === y);
    case '!=': return Number(x !== y);
    case '&&': return Number(!!x && !!y);
    case '||': return Number(!!x || !!y);
  }
  throw new FormulaError(`unknown operator ${op}`);
}
