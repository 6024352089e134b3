"""Macros the way Phoebus expands them, in the terms of the imported screen.

Phoebus gives every display, group and embedded display an ordered list of
macro specifications (``X=$(A)``, ``A=$(B)``, ``B=$(X)``); each is expanded in
turn against the values known at that point (those of the container, then the
ones before it), and a display's or group's own specifications override what it
inherits. The values an opener passes (an open-display action, a launcher) are
not known when a display is imported: a reference to one stays in the screen as
``$(NAME)`` and the browser fills it when the screen opens.

So an :class:`Env` maps a name to a text *in screen terms*: literal text mixed
with references the browser resolves. Substitution is one pass over the source
text (a value already in screen terms is never expanded again: its references
name the opener's macros, not this scope's), nested references
(``$($(INNER))``) resolved inside out, as Phoebus does. Phoebus's swap example
(``X=$(A)``, ``A=$(B)``, ``B=$(X)``) gives ``A`` = the display's ``B`` and
``B`` = the display's ``A``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: Macro names Phoebus accepts (a letter first; dots, dashes, brackets allowed).
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-\[\]]*$")
#: Names the screen schema accepts for a screen's or link's macros.
SCREEN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
#: A reference, for scanning what is left in a screen.
REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.\-\[\]]*)(?:=[^()]*)?\)|"
                       r"\$\{([A-Za-z_][A-Za-z0-9_.\-\[\]]*)(?:=[^{}]*)?\}")  # fmt: skip
MAX_VALUE_CHARS = 1000
MAX_TEXT_CHARS = 100_000

Env = dict[str, str]
#: A widget property a reference may name when no macro does (``$(pv_name)``).
Fallback = Callable[[str], str | None]


def _closing(text: str, pos: int) -> int:
    """The index of the brace closing the one at ``pos`` (nesting, ``\\``
    escapes skipped), or -1."""
    closing = ")" if text[pos] == "(" else "}"
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == closing:
            return i
        if c in "({":
            i = _closing(text, i)
            if i < 0:
                return -1
        i += 1
    return -1


def substitute(text: str, env: Env, fallback: Fallback | None = None) -> str:
    """``text`` with each reference to a name of ``env`` replaced by its value
    (``fallback`` asked for names ``env`` lacks), others kept as written
    (default included) for the browser. One pass: values are not rescanned."""
    if "$" not in text or len(text) > MAX_TEXT_CHARS:
        return text
    out: list[str] = []
    i = 0
    while True:
        start = text.find("$", i)
        if start < 0 or start + 1 >= len(text):
            break
        if text[start + 1] not in "({" or (start > 0 and text[start - 1] == "\\"):
            out.append(text[i : start + 1])
            i = start + 1
            continue
        end = _closing(text, start + 1)
        if end < 0:
            break
        out.append(text[i:start])
        body = text[start + 2 : end]
        if "$" in body:
            body = substitute(body, env, fallback)
        name, sep, default = body.partition("=")
        value = env.get(name)
        if value is None and fallback is not None and NAME.match(name):
            value = fallback(name)
        if value is not None:
            out.append(value)
        else:
            brace = text[start + 1]
            close = ")" if brace == "(" else "}"
            out.append(f"${brace}{name}{sep}{default}{close}")
        i = end + 1
    out.append(text[i:])
    return "".join(out)


def apply_specs(
    specs: Iterable[tuple[str, str]],
    env: Env,
    fixed: frozenset[str] = frozenset(),
    inherit: bool = True,
) -> Env:
    """The values inside a container whose own ``specs`` (in order) apply over
    ``env`` (Phoebus's ``Macros.expandValues``): each expanded against the values
    so far. Names in ``fixed`` (given on the command line) keep their value.
    ``inherit`` false (BOY's ``include_parent_macros``) starts from ``fixed``
    alone."""
    out = dict(env) if inherit else {k: v for k, v in env.items() if k in fixed}
    for name, spec in specs:
        if name in fixed or not NAME.match(name):
            continue
        out[name] = substitute(spec, out)[:MAX_VALUE_CHARS]
    return out


def references(text: str) -> set[str]:
    """The macro names ``text`` still refers to."""
    if "$" not in text:
        return set()
    return {a or b for a, b in REFERENCE.findall(text)}
