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

from extractor.native.macros import MacroDefinition, MacroUse, arguments

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
            args, end = arguments(text, m.end())
            if args is None:
                continue
            out.append(MacroUse(m.group("name"), text.count("\n", 0, m.start("name")) + 1, args))
            pos = last = end
    return tuple(out)


