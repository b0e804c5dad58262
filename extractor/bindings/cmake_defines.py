"""The value a CMake build gives a macro that names a pybind11 module.

A CMake-built extension often names its module with a compile definition rather than in the
source: ``PYBIND11_MODULE(PY_MODULE_NAME, m)`` with ``-DPY_MODULE_NAME=_C`` among the options of
the target that builds the file (``target_compile_definitions(_C PRIVATE PY_MODULE_NAME=_C)``,
``add_definitions(-DPY_MODULE_NAME=_C)``, a project's own ``pybind_extension(NAME _C COPTS
-DPY_MODULE_NAME=_C SRCS ...)``). The project's CMake files (``CMakeLists.txt``, ``*.cmake``) are
read for ``-DNAME=VALUE`` anywhere in a command and ``NAME=VALUE`` in the arguments of
``target_compile_definitions``/``add_compile_definitions``/``COMPILE_DEFINITIONS``.

A definition applies to a source file when the CMake file that gives it is in one of the source's
directories (a CMakeLists.txt builds what is below it): the nearest such file that defines the
macro decides. When it gives the macro several values (one a target), the command that names the
source file's name decides; when none or several do, the value is not known.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from extractor.support.cmakefiles import cmake_files

_COMMAND = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)
_DEFINITION_COMMANDS = frozenset({"target_compile_definitions", "add_compile_definitions"})
_COMMENT = re.compile(r"#[^\n]*")


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class CmakeDefinition:
    """``NAME=VALUE`` as one CMake command gives it."""

    macro: str
    value: str
    path: str  # evidence path of the CMake file
    line: int
    command: str  # the command's arguments, for the source files it names


def cmake_definitions(roots: Iterable[tuple[Path, str]], macros: frozenset[str]) -> list[CmakeDefinition]:
    """The definitions of ``macros`` in every CMakeLists.txt and *.cmake under the roots."""
    found: list[CmakeDefinition] = []
    if not macros:
        return found
    names = "|".join(sorted(map(re.escape, macros)))
    flag = re.compile(rf"-D({names})=([A-Za-z_][\w.]*)\b")
    bare = re.compile(rf"(?<![\w-])({names})=([A-Za-z_][\w.]*)\b")
    for where, text in cmake_files(roots):
        if not any(m in text for m in macros):
            continue
        text = _COMMENT.sub(lambda m: " " * len(m.group()), text)  # same offsets, so same lines
        commands = list(_commands(text))
        for command, args, start in commands:
            pattern_hits = list(flag.finditer(args))
            if command.lower() in _DEFINITION_COMMANDS or "COMPILE_DEFINITIONS" in args:
                pattern_hits += list(bare.finditer(args))
            if not pattern_hits:
                continue
            if command.lower().startswith("target_"):
                # `target_compile_definitions(ext PRIVATE ...)`: the commands that make the
                # target or add to its sources name the files
                target = args.split(None, 1)[0] if args.split() else ""
                args = " ".join([args, *(a for c, a, _s in commands if c.lower() != command.lower()
                                         and a.split(None, 1)[:1] == [target])])
            for m in pattern_hits:
                line = text.count("\n", 0, start + m.start()) + 1
                found.append(CmakeDefinition(m.group(1), m.group(2), where, line, args))
    return sorted(set(found))


def _commands(text: str) -> Iterable[tuple[str, str, int]]:
    """(command, arguments, where the arguments start) of each command of a CMake file."""
    for m in _COMMAND.finditer(text):
        depth = 0
        for i in range(m.end(), len(text)):
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    yield m.group(1), text[m.end():i], m.end()
                    break
                depth -= 1


def defined_for(source: str, macro: str, definitions: list[CmakeDefinition]) -> CmakeDefinition | None:
    """The definition of ``macro`` that applies to ``source`` (module docstring), or None."""
    nearest: list[CmakeDefinition] = []
    depth = -1
    for d in definitions:
        if d.macro != macro:
            continue
        folder = posixpath.dirname(d.path)
        if folder and not source.startswith(folder + "/"):
            continue
        level = folder.count("/") + 1 if folder else 0
        if level > depth:
            nearest, depth = [d], level
        elif level == depth:
            nearest.append(d)
    if len({d.value for d in nearest}) == 1:
        return nearest[0]
    name = posixpath.basename(source)
    naming = [d for d in nearest if re.search(rf"(?<![\w.-]){re.escape(name)}\b", d.command)]
    return naming[0] if len({d.value for d in naming}) == 1 else None
