"""A probe compile that stops at its header's first ``#include``, told without running the compiler.

Headers probed without the build's dependencies often begin by including one of them
(``#include <torch/all.h>`` when torch's headers are not given): the compile then stops there, with
GCC's ``fatal error: NAME: No such file or directory``, after reading only the probe's prelude.
nvcc's preprocessor is GCC's and prints the same lines, but nvcc preprocesses the CUDA runtime
twice first: 0.13-0.6 CPU s a process, sixteen processes in a cold vLLM run without torch's
headers. When the header's first directive that does anything, after comments, ``#pragma once`` and
an include guard, is such an include (directly, or through a quoted include found beside the file
that begins the same way), and no directory the compiler could search has the name, the outcome
is certain and its message known: :func:`stopping_include` writes what GCC would print (the
``In file included from`` lines, the error line and ``compilation terminated.``; not the source
excerpt under it, which nothing reads), and the probe takes it as the compile's.

Anything the walk does not know for certain makes it say nothing (None), and the compiler runs: a
conditional other than the include guard, a macro, a line continuation, code after a comment,
a tab or a non-ASCII character in the lines read, a guard name a system header could define
(reserved: ``_X``, ``__x``), a guard the command's ``-D`` defines, a quoted include found somewhere
else than beside its includer, search options the superset of directories does not cover.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from extractor.structs.compilers import found_in

_INCLUDE = re.compile(r'#[ ]*include[ ]*([<"])([^<>"]+)[>"][ ]*(?://.*)?')
_IFNDEF = re.compile(r"#[ ]*ifndef[ ]+([A-Za-z_]\w*)[ ]*(?://.*)?")
_DEFINE = re.compile(r"#[ ]*define[ ]+([A-Za-z_]\w*)[ ]*(?://.*)?")
_PRAGMA_ONCE = re.compile(r"#[ ]*pragma[ ]+once[ ]*(?://.*)?")
_EXCERPT = re.compile(r"^ *\d* \|")  # "    3 | #include <x.h>", "      |          ^~~~"
_MAX_DEPTH = 8  # quoted includes followed before giving up
_MAX_LINES = 400  # lines read per file before giving up (licence headers run to a few dozen)
# Options that search or include where the -I superset does not say (the probe commands have none)
_UNCOVERED = ("-i", "-nostdinc", "--include", "--pre-include", "-I-")


def stopping_include(source: str, line: int, header: str, search: Sequence[str], argv: Sequence[str],
                     included: frozenset[str] = frozenset()) -> str | None:
    """GCC's output for a compile whose source ``source`` (as the command names it) includes
    ``header`` (as spelled there, a path GCC finds as written) at line ``line``, when the
    preprocessor is certain to stop at a missing include at the start of ``header``; else None.

    ``search``: every directory the compiler could find an ``#include`` in (a superset: a name
    none of them has is missing, whatever the order); ``argv``: the command, for its ``-I``
    directories in their order, its ``-D`` flags and search options; ``included``: the ``<...>``
    names the source has included before ``header`` (its prelude): included again, each is skipped
    by its guard."""
    if any(arg.startswith(_UNCOVERED) for arg in argv[1:]):
        return None
    defined = {arg[2:].split("=", 1)[0] for arg in argv if arg.startswith("-D")}
    quote_dirs = [arg[2:] for arg in argv if arg.startswith("-I")]
    chain = [(source, line)]
    spelled = header
    for _depth in range(_MAX_DEPTH):
        first = next((include for include in _leading_includes(spelled, defined)
                      if include[2] or include[3] not in included), None)
        if first is None:
            return None
        number, column, quoted, name = first
        # where GCC finds it: beside the includer (a quoted name), then the -I directories in order
        found = next((path for path in (os.path.join(d, name) for d in
                                        ([os.path.dirname(spelled)] if quoted else []) + quote_dirs)
                      if os.path.isfile(path)), None)
        if found is not None:
            chain.append((spelled, number))
            spelled = found
            continue
        if found_in(name, (*search, os.path.dirname(spelled))):
            return None  # a system header, or not a file: what it holds decides
        return _message(chain, spelled, number, column, name)
    return None


def _leading_includes(spelled: str, defined: set[str]) -> Iterator[tuple[int, int, bool, str]]:
    """The includes the file GCC names ``spelled`` begins with, until anything but comments, blank
    lines, ``#pragma once`` and an include guard: each one's line, column (1-based), whether it
    is quoted, and the name. Stops at the first line it cannot be sure of."""
    try:
        with open(spelled, "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return
    in_comment = False
    guard: str | None = None  # a guard's #ifndef met, its #define not yet
    guarded = False
    for number, raw in enumerate(head.split(b"\n")[:_MAX_LINES], 1):
        if not raw.isascii() or b"\t" in raw or raw.endswith((b"\\", b"\\\r")):
            return
        text = raw.decode("ascii").rstrip("\r").strip(" ")
        if in_comment:
            end = text.find("*/")
            if end < 0:
                continue
            in_comment, text = False, text[end + 2:].strip(" ")
            if text and not text.startswith("//"):
                return  # code after a comment's end: read no further than whole lines
        if text.startswith("/*"):
            end = text.find("*/", 2)
            if end < 0:
                in_comment = True
                continue
            text = text[end + 2:].strip(" ")
            if text and not text.startswith("//"):
                return
        if not text or text.startswith("//"):
            continue
        if guard is not None:
            define = _DEFINE.fullmatch(text)
            if define is None or define.group(1) != guard:
                return
            guard, guarded = None, True
            continue
        if _PRAGMA_ONCE.fullmatch(text):
            continue
        ifndef = _IFNDEF.fullmatch(text)
        if ifndef is not None and not guarded:
            name = ifndef.group(1)
            if name in defined or name.startswith("__") or (name[0] == "_" and name[1:2].isupper()):
                return
            guard = name
            continue
        include = _INCLUDE.fullmatch(text)
        if include is None:
            return
        yield number, raw.index(include.group(1).encode()) + 1, include.group(1) == '"', include.group(2)


def without_excerpts(stderr: str) -> str:
    """GCC's output less the source excerpts under its messages (``    3 | #include <x.h>`` and
    the caret line): the lines :func:`stopping_include` writes, to compare with them."""
    return "".join(line + "\n" for line in stderr.splitlines() if not _EXCERPT.match(line))


def _message(chain: list[tuple[str, int]], spelled: str, number: int, column: int, name: str) -> str:
    """What GCC prints when it cannot find ``name``, included at ``spelled``:``number``; ``chain``:
    the includes that led there, the compiled source first."""
    lines = []
    for n, (where, at) in enumerate(reversed(chain)):
        lead = "In file included from " if n == 0 else "                 from "
        lines.append(f"{lead}{where}:{at}{':' if n == len(chain) - 1 else ','}")
    lines.append(f"{spelled}:{number}:{column}: fatal error: {name}: No such file or directory")
    lines.append("compilation terminated.")
    return "\n".join(lines) + "\n"
