"""Metrics defined through the system's own function-like macros (no preprocessor is run).

Servers hide their metric boilerplate behind macros a header defines, and name each metric by
an identifier the macro stringifies::

    #define DEFINE_COUNTER_FAMILY(name, desc) \\
      auto& name##_family = Metrics::Instance().BuildCounter(#name, desc);
    #define DEFINE_COUNTER_INSTANCE(alias, name, ...) \\
      auto& COUNTER_##alias = name##_family.Add(__VA_ARGS__);

    DEFINE_COUNTER_FAMILY(request_status_total, "Total number of request status");
    DEFINE_COUNTER_INSTANCE(request_ok, request_status_total, {{"code", "OK"}});

No literal of the file that uses the macros names the metric, so neither the builder chains nor
the calls of a helper (``BuildCounter(name, desc)`` wrapping ``prometheus::BuildCounter()``) see
it. Here the per-file scanner keeps, of each file it reads, the function-like macros it defines
and the macros' uses at namespace scope (where a global metric is defined; a use inside a
function or class body is not read); the extract step writes each use out with the one
definition the system gives that macro (``#p`` a string literal of the argument, ``a##b`` pasted,
``__VA_ARGS__`` the rest, as the preprocessor splits arguments: at top-level commas between
parentheses, braces included) and scans a file's uses, written out one per line, as C++: what a
use's expansion defines is found where the use is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec


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


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)((?:[^\n\\]|\\\r?\n|\\.)*)", re.M)
_CONTINUATION = re.compile(r"\\\r?\n")
_BODY_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_MAX_BODY = 2000  # a longer macro defines code, not a metric


def macro_definitions(text: str) -> tuple[MacroDefinition, ...]:
    """The file's function-like macros whose body calls something with one of its parameters."""
    out = []
    for m in _DEFINE.finditer(text):
        body = _BODY_COMMENT.sub(" ", _CONTINUATION.sub(" ", m.group(3))).strip()
        if not body or len(body) > _MAX_BODY or "(" not in body:
            continue
        params = tuple("__VA_ARGS__" if p.strip() == "..." else p.strip() for p in m.group(2).split(","))
        if params == ("",):
            params = ()
        words = set(re.findall(r"\w+", body))
        if not any(p.rstrip(".") in words for p in params):
            continue
        out.append(MacroDefinition(m.group(1), text.count("\n", 0, m.start(1)) + 1, params, body))
    return tuple(out)


# what the scan of a file's text steps over: comments, literals, preprocessor lines, braces, and
# a call at the start of a line (a macro's use, the name upper-case first)
_LEXEMES = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
    r"|^[ \t]*#(?:[^\n\\]|\\\r?\n|\\.)*"
    r"|(?P<use>^[ \t]*(?P<name>[A-Z]\w*)[ \t]*\()|(?P<brace>[{}])", re.M | re.S)
_OPENS_NAMESPACE = re.compile(r'(?:\bnamespace(?:\s+[\w:]+)?(?:\s+\w+)*|\bextern\s+"C(?:\+\+)?")\s*$')


def macro_uses(text: str) -> tuple[MacroUse, ...]:
    """Calls at the start of a line, outside every brace but a namespace's or an ``extern "C"``
    block's, with their arguments (none when the parentheses do not close)."""
    out: list[MacroUse] = []
    scopes: list[bool] = []  # per open brace: True when it opens a namespace
    last = 0  # where the text since the last brace or semicolon starts
    pos = 0
    while (m := _LEXEMES.search(text, pos)) is not None:
        pos = m.end()
        if m.group("brace") == "{":
            head = text[last:m.start()].rsplit(";", 1)[-1]
            scopes.append(bool(_OPENS_NAMESPACE.search(_BODY_COMMENT.sub(" ", head))))
            last = pos
        elif m.group("brace") == "}":
            if scopes:
                scopes.pop()
            last = pos
        elif m.group("use") is not None:
            if not all(scopes):
                continue
            args, end = _arguments(text, m.end())
            if args is None:
                continue
            out.append(MacroUse(m.group("name"), text.count("\n", 0, m.start("name")) + 1, args))
            pos = last = end
    return tuple(out)


_ARG_LEXEMES = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[(),]', re.S)


def _arguments(text: str, start: int) -> tuple[tuple[str, ...] | None, int]:
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


_BODY_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|##|#|[A-Za-z_]\w*|\s+|.', re.S)
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
        args, end = _arguments(text, m.end())
        inner = expand(MacroUse(m.group(1), 0, args), definition, lookup, excluded, depth + 1) \
            if args is not None else None
        if inner is None:
            continue
        out.append(text[pos:m.start()])
        out.append(inner)
        pos = end
    out.append(text[pos:])
    return "".join(out)
