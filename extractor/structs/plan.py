"""Which headers to probe, with which definitions and which build context.

The aggregates are the C/C++ graph's (``CppShared.aggregates`` of the ``cpp`` step,
or the same scan run here when that step did not run); every non-template one defined in a header
ends up in a layout record: probed, or ``unresolved`` with the reason it was not.
"""

from __future__ import annotations

import collections
import dataclasses
import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from extractor.buildsettings import BuildSettings
from extractor.cpp.graph import AggregateDefinition
from extractor.model import Language
from extractor.structs.buildcontext import (C, CompileEntry, CXX, base_flags, combine, detect_standards,
                                            header_language, is_translation_unit, mostly_c,
                                            nearest_translation_unit, nearest_units, read_compile_commands,
                                            reverse_includes)
from extractor.structs.header import HEADER_SUFFIXES, HeaderProbe, Preamble
from extractor.structs.records import StructLayout, unresolved_layout
from extractor.structs.source import StructDefinition
from extractor.structs.tags import tag_layout
from extractor.support.linestart import at_line_starts

LOCAL_REASON = ("defined inside a function body: its layout is emitted only where that function is compiled, "
                "which a header probe does not do")


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    probes: tuple[HeaderProbe, ...]
    unprobed: tuple[StructLayout, ...]  # layouts decided without a compile
    stats: Mapping[str, Any]


def plan_probes(aggregates: Iterable[AggregateDefinition], includes: Mapping[str, Iterable[str]],
                files: Mapping[str, tuple[Path, Language]], roots: list[tuple[Path, str]],
                settings: BuildSettings) -> Plan:
    """HeaderProbes for every header that defines a non-template aggregate; ``files``: evidence
    path -> (file on disk, language) of every C/C++/CUDA file."""
    by_header: dict[str, set[StructDefinition]] = collections.defaultdict(set)
    unprobed = []
    stats: collections.Counter[str] = collections.Counter()
    for a in aggregates:
        if posixpath.splitext(a.path)[1] not in HEADER_SUFFIXES or a.path not in files:
            continue
        if a.template:
            stats["aggregates_template"] += 1
            continue
        if a.local:
            stub = unresolved_layout(a.qualname, a.kind, a.path, a.line, LOCAL_REASON, origin=a.path)
            unprobed.append(dataclasses.replace(stub, tags=tag_layout(stub)))
            continue
        by_header[a.path].add(StructDefinition(a.line, a.qualname, a.kind))
    entries: dict[str, CompileEntry] = {}
    if settings.compile_commands:
        entries, db_stats = read_compile_commands(Path(settings.compile_commands),
                                                  {p: f for p, (f, _) in files.items()}, roots)
        stats.update({f"compile_commands_{k}": v for k, v in db_stats.items()})
    includers = reverse_includes(includes)
    units = {p for p in files if is_translation_unit(p)}
    project_is_c = mostly_c(units)
    standards = detect_standards([r for r, _ in roots])
    base = base_flags(settings)
    probes = []
    directives: dict[str, tuple[_Directive, ...] | None] = {}
    for path, definitions in sorted(by_header.items()):
        disk, language = files[path]
        try:
            data = disk.read_bytes()
        except OSError:
            data = b""
        unit = nearest_translation_unit(path, entries, includers) if entries else None
        nearest = [unit.path] if unit is not None else nearest_units(path, includers, units)
        lang = header_language(path, data, nearest, project_is_c)
        std = standards.get(C if lang == C else CXX, "")
        flags = combine(base, unit, lang, std)
        stats[f"headers_as_{lang}"] += 1
        if unit is not None:
            stats["headers_with_translation_unit_flags"] += 1
        probes.append(HeaderProbe(path, disk, language, tuple(sorted(definitions)), flags,
                                  preambles_of(path, includers, files, directives=directives)))
    return Plan(tuple(probes), tuple(sorted(unprobed)), dict(sorted(stats.items())))


# each found at the start of a line (extractor.support.linestart)
_INCLUDE_LINE = re.compile(rb'#[ \t]*include[ \t]*([<"][^<>"\n]+[>"])')
# a #define, object-like (a selector such as `#define GGML_COMMON_DECL_C`) or function-like, its
# continuation lines included: Triton's triton_json.h wants its includer's
# `#define TRITONJSON_STATUSRETURN(M) \` + `return TRITONSERVER_ErrorNew(...)` before it
_DEFINE_LINE = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?!\w)(?:[^\n\\]|\\\r?\n|\\(?!\r?\n))*$", re.M)
_CONDITIONAL = re.compile(rb"#[ \t]*(if|ifdef|ifndef|endif)\b")


def preambles_of(header: str, includers: Mapping[str, Iterable[str]], files: Mapping[str, tuple[Path, Language]],
                 limit: int = 3, directives: dict[str, tuple[_Directive, ...] | None] | None = None
                 ) -> tuple[Preamble, ...]:
    """What up to ``limit`` direct includers have before ``header``'s own include: their `#include`
    and one-line `#define` lines at the same `#if` depth. Includers that define something first
    (a selector such as `#define GGML_COMMON_DECL_C`), then the shortest (what the header needs,
    not a whole file's worth of includes), then by path; the same preamble once.

    ``directives``: each includer's directives, read once per run and shared by every header it
    includes (torch's `all.h`-style headers include hundreds: read and scanned again per header,
    27,000 pairs cost the driver a minute)."""
    directives = {} if directives is None else directives
    found: dict[tuple[str, ...], Preamble] = {}
    for includer in sorted(includers.get(header, ())):
        if includer not in directives:
            directives[includer] = _directives(includer, files)
        lines = _lines_before(header, directives[includer])
        if lines is not None and lines not in found:
            found[lines] = Preamble(lines, includer, files[includer][0].parent)
    ranked = sorted(found.values(), key=lambda p: (not any(line.startswith("#define") for line in p.lines),
                                                   len(p.lines), p.includer))
    return tuple(p for p in ranked if p.lines)[:limit]


# one preprocessor line of an includer, in file order: (kind, text, relative, suffix); for an
# include, the header it names next to the includer and the suffix it names anywhere (_names)
_Directive = tuple[str, str, str, str]


def _directives(includer: str, files: Mapping[str, tuple[Path, Language]]) -> tuple[_Directive, ...] | None:
    """The includer's `#include`, `#define` and `#if`/`#endif` lines in order; None when it cannot
    be read."""
    try:
        data = files[includer][0].read_bytes()
    except (OSError, KeyError):
        return None
    events = sorted([(at, "include", m.group(1).decode("utf-8", "replace"))
                     for at, m in at_line_starts(_INCLUDE_LINE, data)]
                    + [(at, "define", m.group(0).decode("utf-8", "replace").strip())
                       for at, m in at_line_starts(_DEFINE_LINE, data)]
                    + [(at, m.group(1).decode(), "") for at, m in at_line_starts(_CONDITIONAL, data)])
    return tuple((kind, text, *(_names(includer, text) if kind == "include" else ("", "")))
                 for _, kind, text in events)


def _lines_before(header: str, directives: tuple[_Directive, ...] | None) -> tuple[str, ...] | None:
    """The includer's lines before its include of ``header`` at that include's `#if` depth; None
    when it cannot be read or does not include it."""
    if directives is None:
        return None
    depth, lines = 0, []
    for kind, target, relative, suffix in directives:
        if kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif kind == "endif":
            depth = max(0, depth - 1)
        elif kind == "define":
            lines.append((depth, target))
        elif relative == header or header == suffix or header.endswith("/" + suffix):
            return tuple(line for d, line in lines if d == depth)
        else:
            lines.append((depth, f"#include {target}"))
    return None


def _names(includer: str, written: str) -> tuple[str, str]:
    """What ``#include written`` in ``includer`` names: the header next to the includer, and the
    path any header whose path ends in it matches (the header is the first, else a match of the second)."""
    target = written[1:-1].strip()
    norm = posixpath.normpath(target)
    while norm.startswith("../"):
        norm = norm[3:]
    return posixpath.normpath(posixpath.join(posixpath.dirname(includer), target)), norm
