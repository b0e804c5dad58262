"""Function-like macros of C/C++ written out without a preprocessor: a use's arguments split as the
preprocessor splits them, and the use written out with one definition (``#p`` a string literal of
the argument, ``a##b`` pasted, ``__VA_ARGS__`` the rest; the macros a lookup defines that the
expansion uses written out in turn).

archdiff never runs a preprocessor on the code it reads: what a step needs written out (metrics
defined through a system's macros, :mod:`extractor.telemetry.cpp_macros`; class members declared
by accessor macros, :func:`extractor.cpp.includes.rescan_with_included_macros`) is written out
here, one use at a time, with the one definition the system gives the macro.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

_BODY_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


class MacroDefinition(msgspec.Struct, frozen=True, array_like=True):
    """A function-like ``#define NAME(params) body`` (continuations joined, comments dropped)."""

    name: str
    line: int
    params: tuple[str, ...]  # "__VA_ARGS__" for `...`; a named variadic (`args...`) as "args..."
    body: str


class MacroUse(msgspec.Struct, frozen=True, array_like=True):
    """``NAME(args)`` at the start of a line at namespace scope: maybe a use of some file's macro."""

    name: str
    line: int
    args: tuple[str, ...]  # as written, split as the preprocessor splits them


# a number, read as the preprocessor reads one (a pp-number): its digit separators (`100'000`, C++14) begin
# no character literal
_PP_NUMBER = r"(?<![\w.])\.?\d(?:[eEpP][+-]|'?[\w.])*"
_ARG_LEXEMES = re.compile(_PP_NUMBER + r'|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[(),]', re.S)


def arguments(text: str, start: int) -> tuple[tuple[str, ...] | None, int]:
    """The arguments of the parentheses opened just before ``start``, split at the commas outside
    inner parentheses (braces and angle brackets do not group, for the preprocessor), and where
    they close."""
    depth = 0
    args: list[str] = []
    begin = start
    for m in _ARG_LEXEMES.finditer(text, start):
        token = m.group()
        if token == "(":
            depth += 1
        elif token == ")":
            if depth == 0:
                args.append(text[begin:m.start()])
                return tuple(" ".join(_BODY_COMMENT.sub(" ", a).split()) for a in args), m.end()
            depth -= 1
        elif token == "," and depth == 0:
            args.append(text[begin:m.start()])
            begin = m.end()
    return None, len(text)


_BODY_TOKENS = re.compile(_PP_NUMBER + r'|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|##|#|[A-Za-z_]\w*|\s+|.', re.S)
_MAX_DEPTH = 8


def expand(use: MacroUse, definition: MacroDefinition, lookup: Callable[[str], MacroDefinition | None],
           excluded: frozenset[str] = frozenset(), depth: int = 0) -> str | None:
    """The use written out with ``definition`` (and the macros ``lookup`` defines that its
    expansion uses, but not those being written out), or None when its arguments do not fit the
    definition's parameters."""
    if depth > _MAX_DEPTH:
        return None
    params = definition.params
    variadic = bool(params) and (params[-1] == "__VA_ARGS__" or params[-1].endswith("..."))
    args = list(use.args)
    if args == [""] and not params:
        args = []
    fixed = len(params) - variadic
    if len(args) < fixed or (not variadic and len(args) != fixed):
        return None
    values = dict(zip(params[:fixed], args))
    if variadic:
        values[params[-1].removesuffix("...") if params[-1] != "__VA_ARGS__" else "__VA_ARGS__"] = \
            ", ".join(args[fixed:])
    tokens = _BODY_TOKENS.findall(definition.body)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "#":
            j = _next_word(tokens, i + 1)
            if j is not None and tokens[j] in values:
                out.append(_stringify(values[tokens[j]]))
                i = j + 1
                continue
        if token == "##":
            while out and out[-1].isspace():
                out.pop()
            j = _next_word(tokens, i + 1)
            if j is not None:
                out.append(values.get(tokens[j], tokens[j]))
                i = j + 1
                continue
        out.append(values.get(token, token) if not token.isspace() else " ")
        i += 1
    written = "".join(out)
    return _expand_inner(written, lookup, excluded | {use.name}, depth)


def _next_word(tokens: list[str], i: int) -> int | None:
    while i < len(tokens) and tokens[i].isspace():
        i += 1
    return i if i < len(tokens) else None


def _stringify(argument: str) -> str:
    return '"' + argument.replace("\\", "\\\\").replace('"', '\\"') + '"'


_INNER_USE = re.compile(r"\b([A-Za-z_]\w*)[ \t]*\(")


def _expand_inner(text: str, lookup: Callable[[str], MacroDefinition | None], excluded: frozenset[str],
                  depth: int) -> str:
    """``text`` with the uses of the macros ``lookup`` defines written out (the preprocessor's
    rescan), but not of those in ``excluded``."""
    out = []
    pos = 0
    for m in _INNER_USE.finditer(text):
        if m.start() < pos or m.group(1) in excluded:
            continue
        definition = lookup(m.group(1))
        if definition is None:
            continue
        args, end = arguments(text, m.end())
        inner = expand(MacroUse(m.group(1), 0, args), definition, lookup, excluded, depth + 1) \
            if args is not None else None
        if inner is None:
            continue
        out.append(text[pos:m.start()])
        out.append(inner)
        pos = end
    out.append(text[pos:])
    return "".join(out)
