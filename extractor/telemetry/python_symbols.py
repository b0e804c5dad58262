"""Symbolic argument values: what a Python expression is, as far as its file says, in a JSON form
that survives the fact cache, and what it becomes once a call site binds the parameters it reads.

A metric's name often reaches the constructor through a parameter (a wrapper class forwarding
``name``, a factory function building ``f"app_{suffix}"``). The per-file scanner cannot know the
callers, so it compiles each argument into a *symbolic value* that keeps parameter references
open; the extract step substitutes the arguments of each call site (:func:`substitute`) and reads
the result (:func:`strings`, :func:`items`, :func:`numbers`).

Forms (JSON lists, so facts stay path-free and serialisable)::

    ["lit", v]          a constant (str, int, float, bool, None; "+Inf" for infinity)
    ["param", name]     a parameter of the enclosing function
    ["attr", name]      a parameter of the enclosing class's __init__, read through ``self.x``
    ["fmt", [parts]]    string concatenation (an f-string)
    ["seq", [items]]    a list/tuple/set display; an item ["star", v] is ``*v``
    ["dict", {k: v}]    keyword arguments gathered for a ``**kwargs`` parameter
    ["add", a, b]       ``a + b`` (strings or sequences: decided when read)
    ["alt", [values]]   any of these (branches, conditional expressions, several assignments)
    ["unk", text]       not known statically; ``text`` says what it was
    ["ext", text]       a name the file imports (``PREFIX``, ``consts.PREFIX``) or a constant of one of
                        its classes (``Names.QUEUE``): the extract step reads it in the module that
                        defines it (:mod:`.python_values`); until then, and when it cannot, it is
                        ``["unk", text]``
    ["call", text, callee, [args], {kwargs}]
                        a call of a function the file imports or defines (``metric_name("x")``):
                        the extract step reads what that function returns, else ``["unk", text]``
    ["from", v]         ``v``, given by the outermost call site (marks what a factory's caller
                        decides; transparent to every reader)
"""

from __future__ import annotations

import math
from typing import Any

Sym = list

_INF = "+Inf"
# what is unknown until the extract step reads it, and is read like ["unk", text] if it cannot
_UNKNOWN = frozenset({"unk", "ext", "call"})
MAX_UNKNOWN_TEXT = 80


def lit(value: Any) -> Sym:
    return ["lit", value]


def unk(text: str) -> Sym:
    return ["unk", text[:MAX_UNKNOWN_TEXT]]


def alt(values: list[Sym]) -> Sym:
    flat: list[Sym] = []
    for value in values:
        for item in (value[1] if value[0] == "alt" else [value]):
            if item not in flat:
                flat.append(item)
    return flat[0] if len(flat) == 1 else ["alt", flat]


def parts(sym: Any):
    """Every symbolic value inside ``sym``, itself included (depth-first)."""
    stack = [sym]
    while stack:
        current = stack.pop()
        if not isinstance(current, list) or not current:
            continue
        yield current
        _push_inner(stack, current)


def _push_inner(stack: list[Any], current: list[Any]) -> None:
    """The symbolic values directly inside ``current``, pushed on ``stack``."""
    tag = current[0]
    if tag in ("fmt", "seq", "alt"):
        stack.extend(current[1])
    elif tag == "add":
        stack.extend(current[1:])
    elif tag in ("star", "from"):
        stack.append(current[1])
    elif tag == "dict":
        stack.extend(current[1].values())
    elif tag == "call":
        stack.extend(current[3])
        stack.extend(current[4].values())


def refs(sym: Any) -> set[tuple[str, str]]:
    """The ``("param"|"attr", name)`` references left open in ``sym``."""
    return {(part[0], part[1]) for part in parts(sym) if part[0] in ("param", "attr")}


def open_tags(syms: list[Any]) -> set[str]:
    """Which kinds of reference (``"param"``, ``"attr"``) stay open anywhere in ``syms``: what
    :func:`refs` says without naming them (read for every recorded call)."""
    found: set[str] = set()
    stack = list(syms)
    while stack:
        current = stack.pop()
        if not isinstance(current, list) or not current:
            continue
        tag = current[0]
        if tag == "param" or tag == "attr":
            found.add(tag)
        else:
            _push_inner(stack, current)
    return found


def substitute(sym: Any, binding: dict[tuple[str, str], Sym], depth: int = 0) -> Any:
    """``sym`` with every bound reference replaced by the caller's value; unbound ones stay."""
    if depth > 32 or not isinstance(sym, list) or not sym:
        return sym
    tag = sym[0]
    if tag in ("param", "attr"):
        return binding.get((tag, sym[1]), sym)
    if tag in ("fmt", "seq", "alt"):
        out = [substitute(v, binding, depth + 1) for v in sym[1]]
        return alt(out) if tag == "alt" else [tag, out]
    if tag == "add":
        return ["add", substitute(sym[1], binding, depth + 1), substitute(sym[2], binding, depth + 1)]
    if tag in ("star", "from"):
        return [tag, substitute(sym[1], binding, depth + 1)]
    if tag == "dict":
        return ["dict", {k: substitute(v, binding, depth + 1) for k, v in sym[1].items()}]
    if tag == "call":
        return ["call", sym[1], sym[2], [substitute(v, binding, depth + 1) for v in sym[3]],
                {k: substitute(v, binding, depth + 1) for k, v in sym[4].items()}]
    return sym


def unwrap(sym: Any) -> Any:
    while isinstance(sym, list) and sym and sym[0] == "from":
        sym = sym[1]
    return sym


def given_by_caller(sym: Any) -> bool:
    """Whether some part of ``sym`` comes from the outermost call site's arguments."""
    return any(part[0] == "from" for part in parts(sym))


def describe(sym: Any) -> str:
    """A short human text for an unresolved value (``{name}``-style, as in the name patterns)."""
    sym = unwrap(sym)
    if not isinstance(sym, list) or not sym:
        return str(sym)
    tag = sym[0]
    if tag == "param":
        return f"parameter {sym[1]}"
    if tag == "attr":
        return f"self attribute from parameter {sym[1]}"
    if tag in _UNKNOWN:
        return sym[1]
    if tag == "alt":
        return " | ".join(describe(v) for v in sym[1])
    if tag == "add":
        return f"{describe(sym[1])} + {describe(sym[2])}"
    if tag == "seq":
        return "[...]"
    return tag


# -- reading values ----------------------------------------------------------------------------

def strings(sym: Any, depth: int = 0) -> list[tuple[str, bool, str]]:
    """Every string ``sym`` can be: ``(text, dynamic, why)``; an unknown part shows as ``{...}``.

    ``None`` alternatives are dropped (``name = None`` before the branches that assign it).
    """
    sym = unwrap(sym)
    if depth > 16 or not isinstance(sym, list) or not sym:
        return []
    tag = sym[0]
    if tag == "lit":
        value = sym[1]
        if value is None:
            return []
        return [(value if isinstance(value, str) else _number_text(value), False, "")]
    if tag in ("param", "attr") or tag in _UNKNOWN:
        return [("{" + sym[1] + "}", True, describe(sym))]
    if tag == "alt":
        out: list[tuple[str, bool, str]] = []
        for value in sym[1]:
            for item in strings(value, depth + 1):
                if item not in out:
                    out.append(item)
        return out
    if tag in ("fmt", "add"):
        parts = sym[1] if tag == "fmt" else sym[1:]
        combos: list[tuple[str, bool, str]] = [("", False, "")]
        for part in parts:
            options = strings(part, depth + 1) or [("{?}", True, "unknown part")]
            combos = [(a + b, da or db, wa or wb) for a, da, wa in combos for b, db, wb in options][:64]
        return combos
    return [("{" + sym[0] + "}", True, describe(sym))]


def _number_text(value: Any) -> str:
    return str(value)


def items(sym: Any, depth: int = 0) -> list[Any] | None:
    """The element values of a sequence; None when it cannot be known. The last assignment wins
    among alternatives (the one that reaches a straight-line construction)."""
    sym = unwrap(sym)
    if depth > 16 or not isinstance(sym, list) or not sym:
        return None
    tag = sym[0]
    if tag == "seq":
        out: list[Any] = []
        for item in sym[1]:
            if isinstance(item, list) and item and item[0] == "star":
                inner = items(item[1], depth + 1)
                if inner is None:
                    return None
                out.extend(inner)
            else:
                out.append(item)
        return out
    if tag == "add":
        left, right = items(sym[1], depth + 1), items(sym[2], depth + 1)
        return None if left is None or right is None else left + right
    if tag == "alt":
        # Branches (``x if c else []``) and successive assignments: the last alternative that
        # is known and not empty is the one a straight-line construction sees.
        known = [r for r in (items(v, depth + 1) for v in sym[1]) if r is not None]
        filled = [r for r in known if r]
        if filled:
            return filled[-1]
        return [] if len(known) == len(sym[1]) else None
    if tag == "lit" and sym[1] is None:
        return []
    return None


def number(sym: Any) -> float | None:
    sym = unwrap(sym)
    if isinstance(sym, list) and sym and sym[0] == "lit":
        value = sym[1]
        if value == _INF:
            return math.inf
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def truth(sym: Any) -> bool | None:
    """The truth of a constant (options such as ``inprogress_labels=True``); None when unknown."""
    sym = unwrap(sym)
    if isinstance(sym, list) and sym and sym[0] == "lit":
        return bool(sym[1])
    if isinstance(sym, list) and sym and sym[0] == "seq":
        return bool(sym[1])
    return None
