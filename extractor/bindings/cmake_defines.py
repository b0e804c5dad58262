"""The value a CMake build (or a Makefile) gives a macro that names a pybind11 module.

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

Makefiles (``Makefile``, ``makefile``, ``GNUmakefile``, ``*.mk``) are read the same way for
``-DNAME=VALUE`` in their text (ThunderKittens' kernels: ``NVCCFLAGS += -DTORCH_EXTENSION_NAME=_C``
in ``kernels/common.mk``). A Makefile's definition applies below its directory, as a CMakeLists.txt's
does, and so does the definition of a file it includes (``include ../common.mk``, ``-include``,
``sinclude``; a path written with a variable is not followed): below the including Makefile's
directory, with that Makefile's text naming the sources (``SRC := layernorm.cu``). No variable is
expanded (``-DNAME=$(EXT)`` gives no value) and no conditional is evaluated, as CMake's ``if()`` is not.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from extractor.support.cmakefiles import cmake_files, makefiles

_COMMAND = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)
_DEFINITION_COMMANDS = frozenset({"target_compile_definitions", "add_compile_definitions"})
_COMMENT = re.compile(r"#[^\n]*")
_MAKE_COMMENT = re.compile(r"(?<!\\)#[^\n]*")
_MAKE_INCLUDE = re.compile(r"^[ \t]*(?:-include|sinclude|include)[ \t]+([^\n]+)", re.M)
_MAX_INCLUDE_DEPTH = 8


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class BuildDefinition:
    """``NAME=VALUE`` as one CMake command (or one Makefile) gives it."""

    macro: str
    value: str
    path: str  # evidence path of the CMake file or Makefile
    line: int
    command: str  # the command's arguments (a Makefile: the text of the one that applies it), for the files it names
    folder: str  # the directory whose files it applies to (those below it too)


def cmake_definitions(roots: Iterable[tuple[Path, str]], macros: frozenset[str]) -> list[BuildDefinition]:
    """The definitions of ``macros`` in every CMakeLists.txt, *.cmake and Makefile under the roots."""
    found: list[BuildDefinition] = []
    if not macros:
        return found
    roots = tuple(roots)
    names = "|".join(sorted(map(re.escape, macros)))
    flag = re.compile(rf"-D({names})=([A-Za-z_][\w.]*)\b")
    bare = re.compile(rf"(?<![\w-])({names})=([A-Za-z_][\w.]*)\b")
    found += _make_definitions(roots, flag)
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
                found.append(BuildDefinition(m.group(1), m.group(2), where, line, args, posixpath.dirname(where)))
    return sorted(set(found))


def _make_definitions(roots: tuple[tuple[Path, str], ...], flag: re.Pattern[str]) -> list[BuildDefinition]:
    """``-DNAME=VALUE`` of each Makefile, and of the files it includes, applied below its directory."""
    texts = {where: _MAKE_COMMENT.sub(lambda m: " " * len(m.group()), text) for where, text in makefiles(roots)}
    own: dict[str, list[tuple[str, str, int]]] = {}  # path -> (macro, value, line) it writes itself
    for where, text in texts.items():
        own[where] = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in flag.finditer(text)]
    found: list[BuildDefinition] = []
    for where, text in texts.items():
        folder = posixpath.dirname(where)
        for given in _included(where, texts):
            found += [BuildDefinition(macro, value, given, line, text, folder) for macro, value, line in own[given]]
    return found


def _included(where: str, texts: dict[str, str]) -> list[str]:
    """``where`` and the Makefiles it includes, directly or through others, that are in ``texts``."""
    seen = [where]
    frontier = [where]
    for _depth in range(_MAX_INCLUDE_DEPTH):
        following: list[str] = []
        for path in frontier:
            folder = posixpath.dirname(path)
            for m in _MAKE_INCLUDE.finditer(texts[path]):
                for word in m.group(1).split():
                    if "$" in word or word.startswith("/"):
                        continue  # a path a variable gives, or outside the tree
                    target = posixpath.normpath(posixpath.join(folder, word))
                    if target in texts and target not in seen:
                        seen.append(target)
                        following.append(target)
        frontier = following
    return seen


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


def defined_for(source: str, macro: str, definitions: list[BuildDefinition]) -> BuildDefinition | None:
    """The definition of ``macro`` that applies to ``source`` (module docstring), or None."""
    nearest: list[BuildDefinition] = []
    depth = -1
    for d in definitions:
        if d.macro != macro:
            continue
        folder = d.folder
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
