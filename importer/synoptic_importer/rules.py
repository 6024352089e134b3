"""Rules of ``.bob``/``.opi`` widgets as screen rules. A rule's boolean expression
over ``pv0``, ``pvSev0``, ``pvStr0`` … (``pv0 > 5 && pv1 == 0``, ``!(pv0!=0)``) is
parsed into a small tree (never evaluated here): a single comparison of one PV
with a constant becomes a plain rule on that channel, anything else a formula
channel over the rule's channels (``=`ca://X`>5 && `ca://Y`==0``), which the
browser evaluates. Rules whose value is itself an expression (``out_exp``), that
set an unsupported property, or whose expression uses what the formula language
lacks are reported as skipped."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from xml.etree.ElementTree import Element

from synoptic_importer.style import colour

#: ``pvSev0`` codes: Phoebus counts 0 OK, 1 minor, 2 major, 3 invalid, 4 undefined;
#: BOY 0 OK, 1 major, 2 minor, -1 invalid.
_SEVERITY = {
    "bob": {"0": "none", "1": "minor", "2": "major", "3": "invalid",
            "4": "disconnected", "-1": "invalid"},
    "opi": {"0": "none", "1": "major", "2": "minor", "-1": "invalid"},
}  # fmt: skip
_PROPS = {"visible": "visible", "foreground_color": "fg", "background_color": "bg",
          "text": "text"}  # fmt: skip
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<str>\"[^\"]{0,200}\"|'[^']{0,200}')"
    r"|(?P<var>pv(?:Sev|Str|Int|Legacy)?\d{1,2})\b"
    r"|(?P<word>and|or|not|true|false)\b"
    r"|(?P<op>===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!()]))"
)
MAX_EXPRESSION = 500


class UnsupportedError(ValueError):
    """An expression this module cannot convert."""


@dataclass(frozen=True)
class Var:
    kind: str  # "" value, "Sev" severity, "Str" text
    index: int


@dataclass(frozen=True)
class Const:
    value: float | str


@dataclass(frozen=True)
class Op:
    op: str  # a comparison, "&&", "||", "!", or arithmetic
    args: tuple[Var | Const | Op, ...]


Node = Var | Const | Op


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise UnsupportedError(f"unexpected {text[pos : pos + 10]!r}")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "word":
            kind, value = {"and": ("op", "&&"), "or": ("op", "||"), "not": ("op", "!"),
                           "true": ("num", "1"), "false": ("num", "0")}[value]  # fmt: skip
        out.append((kind, {"===": "==", "!==": "!="}.get(value, value)))
        pos = match.end()
    return out


@lru_cache(maxsize=4096)
def parse(text: str) -> Node:
    """The tree of a rule expression; :class:`UnsupportedError` when it is not one.
    Trees are immutable, so a display's repeated expressions share one."""
    if len(text) > MAX_EXPRESSION:
        raise UnsupportedError("expression too long")
    tokens = _tokens(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos][1] if pos < len(tokens) and tokens[pos][0] == "op" else None

    def binary(next_: Callable[[], Node], ops: tuple[str, ...]) -> Callable[[], Node]:
        def run() -> Node:
            nonlocal pos
            node = next_()
            while (op := peek()) in ops:
                pos += 1
                node = Op(op or "", (node, next_()))
            return node

        return run

    def unary() -> Node:
        nonlocal pos
        if peek() in ("!", "-"):
            op = tokens[pos][1]
            pos += 1
            inner = unary()
            if (
                op == "-"
                and isinstance(inner, Const)
                and isinstance(inner.value, float)
            ):
                return Const(-inner.value)
            return Op("!" if op == "!" else "neg", (inner,))
        if peek() == "(":
            pos += 1
            node = disjunction()
            if peek() != ")":
                raise UnsupportedError("unbalanced parentheses")
            pos += 1
            return node
        if pos >= len(tokens):
            raise UnsupportedError("unexpected end")
        kind, value = tokens[pos]
        pos += 1
        if kind == "num":
            return Const(float(value))
        if kind == "str":
            return Const(value[1:-1])
        if kind == "var":
            match = re.fullmatch(r"pv(Sev|Str|Int|Legacy)?(\d+)", value)
            assert match is not None
            sub = match.group(1) or ""
            if sub == "Legacy":
                raise UnsupportedError("pvLegacySev")
            return Var("" if sub == "Int" else sub, int(match.group(2)))
        raise UnsupportedError(f"unexpected {value!r}")

    product = binary(unary, ("*", "/", "%"))
    total = binary(product, ("+", "-"))
    comparison = binary(total, ("<", "<=", ">", ">="))
    equality = binary(comparison, ("==", "!="))
    conjunction = binary(equality, ("&&",))
    disjunction = binary(conjunction, ("||",))
    node = disjunction()
    if pos != len(tokens):
        raise UnsupportedError(f"unexpected {tokens[pos][1]!r}")
    return node


def _simple(node: Node) -> tuple[Var, str, float | str] | None:
    """``(var, op, constant)`` when the tree is one comparison of a PV with a
    constant (negations folded, a bare PV meaning ``!= 0``)."""
    negated = False
    while isinstance(node, Op) and node.op == "!":
        negated, node = not negated, node.args[0]
    if isinstance(node, Var):
        node = Op("!=", (node, Const(0.0)))
    if not isinstance(node, Op) or node.op not in _FLIP:
        return None
    a, b = node.args
    op = node.op
    if isinstance(a, Const) and isinstance(b, Var):
        a, b, op = b, a, _FLIP[op]
    if not (isinstance(a, Var) and isinstance(b, Const)):
        return None
    return a, (_NEGATE[op] if negated else op), b.value


def _formula(node: Node, uris: list[str], kind: str) -> str:
    """The tree in Phoebus formula syntax, PVs as backquoted channel names."""
    if isinstance(node, Const):
        if isinstance(node.value, str):
            return '"' + node.value.replace('"', "") + '"'
        return f"{int(node.value)}" if node.value.is_integer() else repr(node.value)
    if isinstance(node, Var):
        if node.index >= len(uris):
            raise UnsupportedError(f"no pv{node.index}")
        ref = f"`{uris[node.index]}`"
        if node.kind == "Sev":
            if kind != "bob":  # BOY counts severities in another order
                raise UnsupportedError("pvSev in a compound BOY expression")
            return f"highestSeverity({ref})"
        return ref
    if node.op == "!":
        inner = _formula(node.args[0], uris, kind)
        wrapped = isinstance(node.args[0], Op) and node.args[0].op not in ("!", "neg")
        return f"!{inner}" if wrapped else f"!({inner})"
    if node.op == "neg":
        return f"-({_formula(node.args[0], uris, kind)})"
    a, b = (_formula(x, uris, kind) for x in node.args)
    return f"({a} {node.op} {b})"


def _value(exp: Element, key: str) -> Any:
    holder = exp.find("value")
    if holder is None:
        return None
    if key in ("fg", "bg"):
        return colour(holder.find("color"))
    text = (holder.text or "").strip()
    if key == "visible":
        return {"true": True, "false": False}.get(text.lower())
    return text[:2000]


def rules_of(
    el: Element,
    channel_of: Callable[[str], str | None],
    kind: str = "bob",
    expand: Callable[[str], str] = lambda text: text,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The widget's rules as screen rules, and the names of those left out.
    ``channel_of(raw)`` converts a rule's PV name (None: not convertible);
    ``kind`` (``bob``/``opi``) says how ``pvSev`` counts; ``expand`` resolves
    macros in expressions."""
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    holder = el.find("rules")
    for rule in holder.findall("rule") if holder is not None and len(holder) else ():
        name = rule.get("name", "")
        try:
            out += _one_rule(rule, channel_of, kind, expand)
        except UnsupportedError as exc:
            skipped.append(f"rule {name!r} ({rule.get('prop_id', '?')}: {exc})")
    return out, skipped


def _one_rule(
    rule: Element,
    channel_of: Callable[[str], str | None],
    kind: str,
    expand: Callable[[str], str],
) -> list[dict[str, Any]]:
    key = _PROPS.get(rule.get("prop_id", ""))
    if key is None:
        raise UnsupportedError("property not supported")
    if rule.get("out_exp", "false") == "true":
        raise UnsupportedError("value is an expression")
    uris: list[str] = []
    for pv in rule:
        if pv.tag in ("pv_name", "pv"):
            uri = channel_of((pv.text or "").strip())
            if uri is None:
                raise UnsupportedError(f"channel {(pv.text or '').strip()[:80]!r}")
            uris.append(uri)
    if not uris:
        raise UnsupportedError("no channel")
    out = []
    for exp in rule.iterfind("exp"):
        value = _value(exp, key)
        if value is None:
            raise UnsupportedError("no value")
        node = parse(expand(exp.get("bool_exp", "")))
        if isinstance(node, Const):  # "true" closing a rule: the widget's own value
            continue
        out += entries_of(node, uris, kind, key, value)
    if not out:
        raise UnsupportedError("no expression")
    return out


def entries_of(node: Node, uris: list[str], kind: str, key: str,
               value: Any) -> list[dict[str, Any]]:  # fmt: skip
    """Screen rules setting ``key`` to ``value`` while ``node`` holds: a plain rule
    on one of ``uris`` when it can be (a severity range as one rule per severity
    in it; none when no severity of the format can match), else a formula
    channel."""
    simple = _simple(node)
    if simple is not None and simple[0].index < len(uris):
        var, op, const = simple
        channel = uris[var.index]
        if var.kind == "Sev" and not isinstance(const, str):
            return [{"channel": channel, "on": "severity", "op": "==", "value": name,
                     "set": {key: value}}
                    for code, name in _SEVERITY[kind].items()
                    if _compare(op, float(code), const)]  # fmt: skip
        if var.kind != "Sev" and (isinstance(const, str) or var.kind != "Str"):
            number = (
                const
                if isinstance(const, str) or not const.is_integer()
                else int(const)
            )
            return [
                {"channel": channel, "op": op, "set": {key: value}, "value": number}
            ]
    formula = _formula(node, uris, kind)
    if formula.startswith("(") and isinstance(node, Op) and node.op not in ("!", "neg"):
        formula = formula[1:-1]
    return [{"channel": f"={formula}", "set": {key: value}}]


def _compare(op: str, a: float, b: float) -> bool:
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b,
            ">": a > b, ">=": a >= b}[op]  # fmt: skip
