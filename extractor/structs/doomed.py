"""A probe compile certain to fail, told by a preprocess-only pass: the compile runs only if its
message is read.

A header written for vector extensions that this CPU's default flags do not enable often says so
where it starts: ``#ifndef __AVX2__`` then ``static_assert(false, "AVX2 must be supported ...")``
(vLLM's ``cpu_types_x86.hpp``), or ``#error``. Its compile with the default flags fails, and the
probe then tries the flags that enable them (``targets.yaml``'s native target), whose outcome
replaces the first one's: nobody reads the first compile's message. With torch's headers given,
that compile parses all of torch before it reaches the assertion: 17-20 CPU s for a message that
is thrown away.

:func:`certain_failure` runs the preprocessor alone, with the compile's flags (a twentieth of that),
and tells a failure that is certain:

- the preprocessor fails, and not on a missing include (an active ``#error``, a bad directive):
  the compile runs the same preprocessor and fails too;
- it succeeds, and the header's own lines hold ``static_assert(false`` (or ``0``) outside every
  brace of the header, in C++: an assertion at namespace scope, which fails whatever the lines
  before it do.

Anything else is left to the compiler: a preprocessor that timed out or died, a literal that
makes the braces uncertain (a raw string, a digit separator), an assertion inside a brace or split
over lines. In both cases the compile's first error cannot be a missing header (the preprocessor
found every include), which is all the probe asks of the message before it tries other flags
(:func:`extractor.structs.compilers.target_for`); the message itself, when no later attempt
replaces it, comes from running the compile then (:class:`extractor.structs.attempts.CompileAttempts`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from extractor.structs.compilers import found_in, run_compiler
from extractor.support.linestart import found_at_line_start, matches_at_line_starts

_FALSE_ARGUMENT = rb"[ \t]*\([ \t]*(?:false|0)[ \t]*[,)]"  # after `static_assert`
_ASSERT_FALSE = rb"\bstatic_assert" + _FALSE_ARGUMENT
# what makes the preprocess-only pass worth its cost: the header's text holds either shape
_ERROR = re.compile(rb"#[ \t]*error\b")  # at the start of a line (extractor.support.linestart)
# _ASSERT_FALSE with the boundary checked behind the word: the regex engine searches for the word
_ASSERTED_FALSE = re.compile(rb"static_assert(?<!\wstatic_assert)" + _FALSE_ARGUMENT)
_INCLUDED = re.compile(rb'#[ \t]*include[ \t]*[<"]([^<>"\n]+)[>"]')  # at the start of a line
_LINE_MARKER = re.compile(rb'# \d+ "((?:[^"\\]|\\.)*)"')
_LITERAL = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_BRACE_OR_ASSERT = re.compile(rb"[{}]|" + _ASSERT_FALSE)
_ENGLISH = {**os.environ, "LC_ALL": "C"}  # the pass's messages read in one language


def worth_asking(header_text: bytes, search: Sequence[str]) -> bool:
    """Whether ``header_text`` has an ``#error`` or a ``static_assert(false`` that could doom a
    compile, and every file it includes is in one of the directories ``search`` (a superset of
    what the compile searches, the header's own directory first). A header that includes a file
    none of them has (torch's, not given) fails at that include, or at an error before it: the
    compile is quick and its message, a missing header, may decide the next attempt's compiler."""
    if not found_at_line_start(_ERROR, header_text) and _ASSERTED_FALSE.search(header_text) is None:
        return False
    return all(found_in(m.group(1).decode("utf-8", "replace"), search)
               for m in matches_at_line_starts(_INCLUDED, header_text))


def preprocess_flags(argv: Sequence[str]) -> list[str]:
    """A probe compile's flags for a preprocess-only pass: ``argv`` ends `SOURCE -o OBJECT`, and the
    caller names the source once (named twice, g++ preprocessed it twice)."""
    return [a for a in argv[1:-3] if a not in ("-c", "-g")]


def certain_failure(argv: Sequence[str], header: Path, tmpdir: Path, timeout: float, memory_bytes: int,
                    cxx: bool) -> bool:
    """Whether the probe compile ``argv`` (``... SOURCE -o OBJECT``, run in ``tmpdir``, its source
    including ``header``) is certain to fail without a missing include; ``cxx``: it compiles C++."""
    out = tmpdir / "doomed.i"
    try:
        done = run_compiler([argv[0], *preprocess_flags(argv), "-E", argv[-3], "-o", str(out)], tmpdir, timeout,
                            memory_bytes, env=_ENGLISH)
        if done.timed_out:
            return False
        if done.returncode:
            # GCC's driver exits 1 for errors (4 for a compiler that crashed)
            return done.returncode == 1 and b"No such file or directory" not in done.stderr
        if not cxx:
            return False
        with open(out, "rb") as preprocessed:
            return asserts_false_at_top(header_lines(preprocessed, header, tmpdir))
    except OSError:
        return False
    finally:
        out.unlink(missing_ok=True)


def header_lines(lines: Iterable[bytes], header: Path, cwd: Path) -> Iterator[bytes]:
    """The lines of a preprocessor's output (``-E``, GCC's line markers) that come from ``header``,
    wherever it was included: what of the header's text the compiler saw. Read line by line
    (torch's output runs to tens of megabytes, which the driver's probe threads need not hold)."""
    wanted = os.path.realpath(header)
    same: dict[bytes, bool] = {}
    inside = False  # the lines since the last marker come from the header
    for line in lines:
        marker = _LINE_MARKER.match(line) if line.startswith(b"# ") else None
        if marker is not None:
            name = marker.group(1)
            if name not in same:
                spelled = os.fsdecode(name.replace(b'\\"', b'"').replace(b"\\\\", b"\\"))
                same[name] = os.path.realpath(os.path.join(cwd, spelled)) == wanted
            inside = same[name]
        elif inside:
            yield line


def asserts_false_at_top(lines: Iterable[bytes]) -> bool:
    """Whether preprocessed C++ ``lines`` (one header's) hold ``static_assert(false`` or
    ``static_assert(0`` outside all of their braces; False as soon as a brace count cannot be
    trusted (a quote left once the literals are out: a raw string, a digit separator; more closing
    braces than opening ones)."""
    depth = 0
    for line in lines:
        if b'R"' in line:
            return False  # a raw string: its quotes pair otherwise
        code = _LITERAL.sub(b" ", line)
        if b'"' in code or b"'" in code:
            return False
        for m in _BRACE_OR_ASSERT.finditer(code):
            token = m.group()
            if token == b"{":
                depth += 1
            elif token == b"}":
                depth -= 1
                if depth < 0:
                    return False
            elif depth == 0:
                return True
    return False
