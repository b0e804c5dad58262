"""A run's diagnostics, grouped for a reader: one line per kind of problem, with what fixes it.

The first extraction of vLLM gives some forty warnings: struct probes that stopped at
``torch/all.h: No such file or directory``, C++ files whose syntax tree has ERROR nodes. Printed
one by one they bury the one thing a user can do about most of them (``--headers-from
pypi:torch==2.8.0``). Grouped by code and by what supplies the missing header, they are a few
lines; every diagnostic stays in the evidence's ``diagnostics`` with its file and line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.structs.reasons import missing_from, supplier_for

EXAMPLES = 3  # paths (or missing headers) named per group


@dataclasses.dataclass(frozen=True, slots=True)
class DiagnosticGroup:
    severity: str  # "error", "warning" (info is not grouped: it is not a problem)
    code: str
    count: int
    what: str  # one line: what happened, with the first examples
    fix: str = ""  # what the user can do ("--headers-from pypi:torch==2.8.0"), "" when nothing

    def render(self) -> str:
        fix = f": {self.fix}" if self.fix else ""
        return f"{self.severity}: {self.what}{fix} [{self.code}]"


# code -> (one of them, many of them): what a diagnostic of that code means, said once for all
_MEANING = {
    "probe-failed": ("struct probe failed", "struct probes failed"),
    "parse-errors": ("file has parts tree-sitter could not parse (ERROR nodes); definitions there may be missing",
                     "files have parts tree-sitter could not parse (ERROR nodes); definitions there may be missing"),
    "syntax-error": ("Python file is not valid Python: not analysed", "Python files are not valid Python: not analysed"),
    "unreadable": ("file or directory could not be read", "files or directories could not be read"),
    "too-large": ("file is too large to analyse", "files are too large to analyse"),
    "too-deep": ("file nests too deeply to analyse", "files nest too deeply to analyse"),
    "parser-crashed": ("file crashed the parser", "files crashed the parser"),
    "parse-timeout": ("file took too long to parse", "files took too long to parse"),
    "symlink-outside": ("symbolic link leaves the source tree", "symbolic links leave the source tree"),
    "submodule-absent": ("git submodule of .gitmodules is not in the tree, its files not read",
                         "git submodules of .gitmodules are not in the tree, their files not read"),
}
# codes whose groups name the first word after the first of each message (the submodule's path), not the file
_NAMED_IN_MESSAGE = frozenset({"submodule-absent"})
_FIXES = {"submodule-absent": "clone with --recurse-submodules (or run git submodule update --init) and extract "
                              "that tree"}


def group_diagnostics(diagnostics: Iterable[Mapping[str, Any]], pins: Mapping[str, str] | None = None,
                      given: Iterable[str] = ()) -> list[DiagnosticGroup]:
    """Warnings and errors grouped by (severity, code, fix), most frequent first. ``diagnostics``
    are the bundle's (dicts with path, line, code, message, severity); ``pins``: the versions the
    project pins (extractor.structs.reasons.pinned_versions), for the fixes' ``==VERSION``; ``given``: the
    run's ``--headers-from`` specs (a distribution given there is no fix for what it lacks)."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    missing: dict[tuple[str, str, str], list[str]] = {}
    for d in diagnostics:
        if d["severity"] not in ("error", "warning"):
            continue
        fix, lack = "", ""
        if d["code"] == "probe-failed":
            lack = missing_from(d["message"])
            fix = supplier_for(lack, dict(pins or {}), given)
        fix = fix or _FIXES.get(d["code"], "")
        key = (d["severity"], d["code"], fix)
        groups.setdefault(key, []).append(d)
        if lack and lack not in missing.setdefault(key, []):
            missing[key].append(lack)
    out = []
    for (severity, code, fix), members in groups.items():
        one, many = _MEANING.get(code, (code.replace("-", " "), code.replace("-", " ")))
        what = f"{len(members)} {many if len(members) > 1 else one}"
        lacking = missing.get((severity, code, fix), [])
        if lacking:
            what += f", missing {_first(lacking)}"
        elif code in _NAMED_IN_MESSAGE:
            what += f" ({_first(sorted({m['message'].split()[1] for m in members}))})"
        else:
            what += f" ({_first(sorted({m['path'] for m in members}))})"
        out.append(DiagnosticGroup(severity, code, len(members), what, fix))
    return sorted(out, key=lambda g: (g.severity != "error", -g.count, g.code, g.fix))


def _first(items: list[str]) -> str:
    shown = ", ".join(items[:EXAMPLES])
    return shown + (f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else "")
