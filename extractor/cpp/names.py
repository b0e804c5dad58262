"""Names and texts read off tree-sitter nodes, shared by the C/C++ scanner and its registration
readers: node text, lines, a written name reduced to the name C++ lookup uses, callee texts."""

from __future__ import annotations

import functools
import re
from typing import Any

_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
SPACES = re.compile(r"\s+")
_SIMPLE_NAME = re.compile(r"~?\w+(?:::~?\w+)*")
CALLEE_TYPES = frozenset({"identifier", "qualified_identifier", "template_function", "field_expression"})
# a name written as macros are (`DISALLOW_COPY_AND_ASSIGN`, `Q_DISABLE_COPY`, `GTEST_DISALLOW_COPY_AND_ASSIGN_`)
MACRO_NAME = re.compile(r"_*[A-Z][A-Z0-9_]*")


def text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def line(node: Any) -> int:
    return node.start_point[0] + 1


_BEFORE_SYMBOL = re.compile(r"(?<=[\w>]) (?=[*&\[<])|(?<=[*&<]) (?=[*&>])")  # `T *` -> `T*`, `char * *` -> `char**`


@functools.lru_cache(maxsize=8192)  # the same names come back all the time (`std::move`, `TORCH_CHECK`)
def clean_name(raw: str) -> str:
    """`Foo<T>::bar`, `operator ()`, `~ Foo` -> `Foo::bar`, `operator()`, `~Foo`."""
    if _SIMPLE_NAME.fullmatch(raw):
        return raw
    op = ""
    at = raw.find("operator")
    if at >= 0 and (at == 0 or not (raw[at - 1].isalnum() or raw[at - 1] == "_")):
        raw, op = raw[:at], SPACES.sub(" ", raw[at:].strip())
        # `operator new`, `operator bool`, `operator const char*` (a conversion function's type) keep one space
        # between words; symbol operators lose theirs
        op = _BEFORE_SYMBOL.sub("", op) if re.match(r"operator [A-Za-z_]", op) else op.replace(" ", "")
    while True:
        stripped = _TEMPLATE_ARGS.sub("", raw)
        if stripped == raw:
            break
        raw = stripped
    parts = [p for p in raw.replace(" ", "").replace("\n", "").replace("\t", "").split("::") if p]
    if op:
        parts.append(op)
    return "::".join(parts)


def split_top_level(text: str) -> list[str]:
    """``text`` split on the commas outside brackets (`int[2] size=[1, 1]` stays one piece)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    parts.append("".join(current))
    return parts


def split_args(args_text: str) -> list[str]:
    """Top-level comma-separated pieces of an argument list's text, spaces removed."""
    return [SPACES.sub("", a) for a in split_top_level(args_text) if a.strip()]


def callee_text(fn: Any) -> str:
    t = fn.type
    if t in CALLEE_TYPES:
        written = text(fn)
        if len(written) > 200:
            return ""
        if t == "field_expression":
            field = fn.child_by_field_name("field")
            arg = fn.child_by_field_name("argument")
            operator = fn.child_by_field_name("operator")
            op = operator.type if operator is not None else "->" if b"->" in fn.text else "."
            if field is None:
                return ""
            return (SPACES.sub("", text(arg)) if arg is not None and len(arg.text) < 60 else "?") \
                + op + clean_name(text(field))
        return clean_name(written)
    return ""
