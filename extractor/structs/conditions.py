"""Why a header compiled but a definition in it was not: the preprocessor conditions around it.

A probe that compiles yet yields no type for a definition usually means the definition sits in a
branch the build context leaves off: Triton's ``class Metrics`` is inside ``#ifdef
TRITON_ENABLE_METRICS``, which Triton's CMake defines when its option of that name is ON (the
default). Said that way, the user knows what to pass (``--define TRITON_ENABLE_METRICS``); a
generic "conditionally compiled out" tells them nothing.

What is read: the `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else` lines open at the definition's line
(include guards left out), from the header's text; and the ``option(NAME "help" ON|OFF)`` lines of
the project's CMake files, so a suggested macro that is a build option says where and with which
default. Nothing is evaluated: the conditions are stated, the one macro a ``--define`` would turn
on is named only when the innermost condition tests that macro alone.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from extractor.support.cmakefiles import cmake_files

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define)\b[ \t]*(.*)$")
# a condition that one macro being defined (or non-zero) makes true
_POSITIVE = (re.compile(r"^defined\s*\(\s*([A-Za-z_]\w*)\s*\)$"), re.compile(r"^defined\s+([A-Za-z_]\w*)$"),
             re.compile(r"^([A-Za-z_]\w*)$"), re.compile(r"^([A-Za-z_]\w*)\s*(?:!=\s*0|>=?\s*1)$"))
_NEGATIVE = (re.compile(r"^!\s*defined\s*\(\s*([A-Za-z_]\w*)\s*\)$"), re.compile(r"^!\s*defined\s+([A-Za-z_]\w*)$"),
             re.compile(r"^!\s*([A-Za-z_]\w*)$"))
_RESERVED = re.compile(r"^(?:__|_[A-Z])")  # reserved for the implementation (C11 7.1.3, C++ [lex.name])
_PLATFORMS = {"_WIN32": "Windows", "_WIN64": "Windows", "_MSC_VER": "MSVC", "__APPLE__": "Apple platforms",
              "__MACH__": "macOS", "__ANDROID__": "Android", "__FreeBSD__": "FreeBSD", "__aarch64__": "aarch64",
              "__powerpc64__": "POWER", "__s390x__": "IBM Z", "__CUDACC__": "nvcc", "__HIPCC__": "ROCm's hipcc",
              "__clang__": "clang"}
_CMAKE_OPTION = re.compile(r'^\s*option\s*\(\s*([A-Za-z_]\w*)\s+"[^"]*"\s+(ON|OFF)\s*\)', re.I | re.M)


@dataclasses.dataclass(frozen=True, slots=True)
class Condition:
    line: int
    text: str  # as written: "#ifdef TRITON_ENABLE_METRICS", "#else (of #ifndef _WIN32)"
    enables: str = ""  # the macro whose definition makes this branch taken, when it is that simple


@dataclasses.dataclass(frozen=True, slots=True)
class CmakeOption:
    name: str
    default: str  # "ON" | "OFF"
    path: str  # evidence path of the CMake file
    line: int


def open_conditions(text: str, line: int) -> tuple[Condition, ...]:
    """The conditions open at ``line`` (1-based), outermost first, without the header's include
    guard (an ``#ifndef X`` whose next directive is ``#define X``)."""
    stack: list[tuple[Condition, str, bool]] = []  # (condition, the #if it belongs to, include guard?)
    for number, kind, rest, guard in _conditionals(text):
        if number >= line:
            break
        if kind in ("if", "ifdef", "ifndef"):
            head = f"#{kind} {rest}"
            stack.append((Condition(number, head, _enables(kind, rest)), head, guard))
        elif kind in ("elif", "else") and stack:
            _old, head, _guard = stack.pop()
            text_ = f"#elif {rest}" if kind == "elif" else f"#else (of {head})"
            stack.append((Condition(number, text_, _enables("if", rest) if kind == "elif" else _else_enables(head)),
                          head, False))
        elif kind == "endif" and stack:
            stack.pop()
    return tuple(c for c, _head, guard in stack if not guard)


@functools.lru_cache(maxsize=8)
def _conditionals(text: str) -> tuple[tuple[int, str, str, bool], ...]:
    """``(line, kind, condition, include guard?)`` of each conditional directive of ``text``, in
    order: read once per header, however many of its definitions ask (the probes' reasons ask
    for every definition a compile left out: llama.cpp's headers, one pass over the whole text
    per definition, took 8 of the 12 CPU s its probes' driver spent)."""
    lines = _logical_lines(text)
    out = []
    for i, (number, content) in enumerate(lines):
        m = _DIRECTIVE.match(content)
        if not m or m.group(1) == "define":
            continue
        kind, rest = m.group(1), _strip_comment(m.group(2))
        out.append((number, kind, rest, kind == "ifndef" and _next_defines(lines, i, rest)))
    return tuple(out)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        out.append((start, pending + raw))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def _strip_comment(rest: str) -> str:
    rest = re.sub(r"/\*.*?\*/", " ", rest)
    return re.sub(r"//.*$", "", rest).strip()


def _next_defines(lines: list[tuple[int, str]], index: int, name: str) -> bool:
    for j in range(index + 1, len(lines)):  # no copy of the rest of the file per #ifndef
        content = lines[j][1]
        m = _DIRECTIVE.match(content)
        if m:
            return m.group(1) == "define" and m.group(2).split()[:1] == [name]
        if content.strip() and not content.strip().startswith(("//", "/*", "*")):
            return False
    return False


def _enables(kind: str, rest: str) -> str:
    if kind == "ifdef":
        return rest if re.fullmatch(r"[A-Za-z_]\w*", rest) else ""
    if kind == "ifndef":
        return ""
    expr = rest.strip()
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    for pattern in _POSITIVE:
        if m := pattern.match(expr):
            return m.group(1)
    return ""


def _else_enables(head: str) -> str:
    """The macro that takes the `#else` of ``head``: `#ifndef X` / `#if !defined(X)` -> X."""
    kind, _, rest = head[1:].partition(" ")
    if kind == "ifndef":
        return rest if re.fullmatch(r"[A-Za-z_]\w*", rest) else ""
    if kind == "if":
        expr = rest.strip()
        for pattern in _NEGATIVE:
            if m := pattern.match(expr):
                return m.group(1)
    return ""


def cmake_options(roots: Iterable[tuple[Path, str]]) -> dict[str, CmakeOption]:
    """``option(NAME "..." ON|OFF)`` of every CMakeLists.txt and *.cmake under the roots (the
    first by path wins), by name."""
    found: dict[str, CmakeOption] = {}
    for where, text in cmake_files(roots):
        for m in _CMAKE_OPTION.finditer(text):
            found.setdefault(m.group(1), CmakeOption(m.group(1), m.group(2).upper(), where,
                                                     text.count("\n", 0, m.start()) + 1))
    return found


def conditional_reason(conditions: tuple[Condition, ...], options: Mapping[str, CmakeOption]
                       ) -> tuple[str, str, str]:
    """(error, missing, supplied_by) for a definition the compile left out, from its open
    conditions; ("", "", "") when it is inside none."""
    if not conditions:
        return "", "", ""
    shown = "; ".join(f"`{c.text}` (line {c.line})" for c in conditions[-3:])
    error = f"compiled, but no complete type was emitted: the definition is inside {shown}"
    macro = conditions[-1].enables
    if not macro:
        return error, "", ""
    if _RESERVED.match(macro):
        # the implementation's own macro (C and C++ reserve these names): the definition is for
        # another platform or compiler, which no --define makes this one
        where = _PLATFORMS.get(macro, f"the platform or compiler that defines {macro}")
        return error, macro, f"a build for {where} ({macro} is the compiler's, not a project option)"
    option = options.get(macro)
    supply = f"--define {macro}"
    if option is not None:
        supply += f" (a CMake option of the project, {option.default} by default: {option.path}:{option.line})"
    return error, macro, supply
