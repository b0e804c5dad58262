"""What a struct probe may read, and what of the compiler's output may reach the evidence.

A probe compiles headers of an untrusted tree. Two things must never happen:

- **Text of the user's machine copied into evidence.** A header can ``#include "/etc/shadow"`` or
  ``</proc/self/environ>`` (or reach such a file through a macro, ``#include_next`` or ``..``), and
  the compiler then quotes that file in its error, which would land in ``evidence.json`` and in
  reports that users publish. The compiler itself lists every file it opened (``-MD``, or a
  preprocess-only ``-M -MG`` pass when a fatal error stopped it early); a probe that opened any
  file outside the source roots, the configured include directories and the compiler's own system
  directories is refused, and none of its output is used. The one error line that is kept is
  checked once more for paths outside those places.
- **Compiler inputs other than headers.** GCC loads ``foo.h.gch`` in place of ``foo.h`` when one sits
  beside it: a binary supplied by the tree, which also changes the layout reported. Precompiled
  headers in the source roots are listed once per system; a probe whose headers have one beside
  them is refused before the compiler runs (the preprocess-only pass never loads them).
"""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

PCH_SUFFIXES = (".gch", ".pch")
_SKIP_DIRS = {".git", "node_modules", "__pycache__"}
_ABS_PATH = re.compile(r"(?<![\w.])/(?:[\w.+@-]+/)*[\w.+@-]+")


@functools.cache
def system_include_dirs(compiler: str, language: str = "c++") -> tuple[Path, ...]:
    """The directories ``compiler`` searches by itself (``-E -v`` lists them)."""
    try:
        done = subprocess.run([compiler, "-E", "-v", "-x", language, os.devnull], capture_output=True, text=True,
                              timeout=60, errors="replace")
    except (OSError, subprocess.SubprocessError):
        return ()
    dirs, inside = [], False
    for line in done.stderr.splitlines():
        if line.startswith("#include <...> search starts here:"):
            inside = True
        elif line.startswith("End of search list."):
            break
        elif inside and line.startswith(" "):
            dirs.append(Path(os.path.realpath(line.strip())))
    return tuple(dirs)


def allowed_dirs(roots: Iterable[Path], include_dirs: Iterable[Path], extra: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in (*roots, *include_dirs, *extra)))


def find_precompiled_headers(roots: Sequence[Path]) -> frozenset[Path]:
    """Headers of the source roots that have a precompiled header (``x.h.gch``, file or folder) beside them."""
    found = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            for name in (*filenames, *dirnames):
                if name.endswith(PCH_SUFFIXES):
                    found.add(Path(os.path.realpath(Path(dirpath) / name[: -len(".gch")])))
    return frozenset(found)


def parse_depfile(text: str, cwd: Path) -> list[Path]:
    """The prerequisites of a make-style dependency file (``-MD``/``-M`` output)."""
    joined = text.replace("\\\n", " ")
    deps: list[Path] = []
    for line in joined.splitlines():
        _, colon, rest = line.partition(": ")
        if not colon:
            continue
        # "\ " is an escaped space inside a file name
        for token in re.split(r"(?<!\\)\s+", rest.strip()):
            if token:
                path = Path(token.replace("\\ ", " "))
                deps.append(path if path.is_absolute() else cwd / path)
    return deps


def outside(deps: Iterable[Path], allowed: Sequence[Path]) -> list[Path]:
    """Dependencies that exist and resolve outside every allowed directory (missing ones are harmless).

    A probe of a torch header lists 5,000 files in a few hundred directories: each directory's
    real path is resolved once, a file's is that joined with its name (one ``lstat``; resolved in
    full only when the name is a link), and the allowed places are compared as text, not through
    ``Path.parents``."""
    prefixes = tuple(str(a) if str(a).endswith("/") else f"{a}/" for a in allowed)
    exact = {str(a) for a in allowed}
    real_dirs: dict[str, str] = {}
    found = []
    for dep in deps:
        head, name = os.path.split(str(dep))
        real_dir = real_dirs.get(head)
        if real_dir is None:
            real_dir = real_dirs[head] = os.path.realpath(head)
        real = os.path.join(real_dir, name)
        try:
            is_link = stat.S_ISLNK(os.lstat(real).st_mode)
        except OSError:
            continue  # missing
        if is_link or name in ("", ".", ".."):
            real = os.path.realpath(real)
            if not os.path.exists(real):
                continue
        if real not in exact and not real.startswith(prefixes):
            found.append(Path(real))
    return found


def precompiled_beside(deps: Iterable[Path], pch_headers: frozenset[Path]) -> list[Path]:
    return [d for d in deps if d.exists() and Path(os.path.realpath(d)) in pch_headers]


def line_is_safe(line: str, allowed: Sequence[Path]) -> bool:
    """False when ``line`` names an absolute path outside the allowed directories."""
    for match in _ABS_PATH.finditer(line):
        real = Path(os.path.realpath(match.group(0)))
        if not any(real == a or a in real.parents for a in allowed):
            return False
    return True
