"""Struct layouts: size, alignment, members, holes and padding, as DWARF states them.

Two inputs: ELF files the user gives (``ctx.options.binaries``, method ``dwarf-binary``) and, when
``ctx.options.probe_structs`` is set, probe objects compiled from the system's own headers
(``extractor.structs.probe``). pyelftools is imported only by the ``extractor.structs.dwarf``
package.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from pathlib import Path

from extractor.context import Context
from extractor.model import Contribution, Diagnostic, Language, Severity, Step
from extractor.structs.dwarf import DwarfReadError, read_layouts
from extractor.structs.probe import (DEFAULT_MAX_HEADERS, DEFAULT_TIMEOUT, HEADER_SUFFIXES,
                                     HeaderProbe, find_include_dirs, probe_headers)
from extractor.structs.records import Method, StructLayout, layout_from_raw
from extractor.structs.source import (StructDefinition, find_struct_definitions,
                                      scan_struct_definitions)
from extractor.structs.tags import tag_layout

__all__ = ["STEP", "extract_structs", "read_binary_layouts", "StructLayout"]


def read_binary_layouts(path: Path, roots: tuple[tuple[Path, str], ...] = (),
                        method: Method = Method.DWARF_BINARY) -> tuple[StructLayout, ...]:
    """Layouts of one ELF; declaring files inside a source root become repository paths.

    Raises :class:`extractor.structs.dwarf.DwarfReadError` for a file that is not a readable ELF
    with DWARF.
    """
    out = []
    origin = Path(path).name
    for raw in read_layouts(path):
        layout = layout_from_raw(raw, path=map_decl_file(raw.decl_file, roots), method=method,
                                 origin=origin)
        out.append(dataclasses.replace(layout, tags=tag_layout(layout)))
    return tuple(sorted(out))


def map_decl_file(decl_file: str, roots: tuple[tuple[Path, str], ...]) -> str:
    """A declaring file as a label-prefixed repository path when it lies in a source root."""
    if decl_file and os.path.isabs(decl_file):
        real = os.path.realpath(decl_file)
        for root, label in roots:
            base = os.path.realpath(root)
            if real.startswith(base + os.sep):
                rel = Path(os.path.relpath(real, base)).as_posix()
                return f"{label}/{rel}" if label else rel
    if decl_file and not os.path.isabs(decl_file):
        return posixpath.normpath(decl_file)  # "./Include/object.h" -> "Include/object.h"
    return decl_file


def extract_structs(ctx: Context) -> Contribution:
    roots = tuple((s.root, s.label) for s in ctx.sources)
    layouts: list[StructLayout] = []
    diagnostics: list[Diagnostic] = []
    stats: dict[str, object] = {}
    for binary in ctx.options.binaries:
        try:
            found = read_binary_layouts(Path(binary), roots)
        except DwarfReadError as err:
            diagnostics.append(Diagnostic(Path(binary).name, 0, err.code, err.message,
                                          Severity.ERROR))
            continue
        layouts.extend(found)
        stats[f"binary:{Path(binary).name}"] = len(found)
    if ctx.options.probe_structs:
        probes = []
        scanned = {f.path: facts for f, facts in ctx.facts(STEP_NAME, Language.CPP, Language.CUDA)}
        for f in ctx.files:
            if f.language not in (Language.CPP, Language.CUDA) or \
                    Path(f.rel).suffix not in HEADER_SUFFIXES:
                continue
            path = ctx.abs_path(f)
            if scanned:  # the pipeline ran the scanner (cached per content hash)
                definitions = tuple(StructDefinition(line, qualname, kind)
                                    for line, qualname, kind in scanned.get(f.path) or ())
            else:  # a context built without scanning (tests, direct calls): parse here
                try:
                    data = path.read_bytes()
                except OSError as err:
                    diagnostics.append(Diagnostic(f.path, 0, "unreadable", str(err.strerror)))
                    continue
                definitions = find_struct_definitions(data, f.language)
            if definitions:
                language = Language.CUDA if path.suffix == ".cuh" else f.language
                probes.append(HeaderProbe(f.path, path, language, definitions))
        include_dirs = find_include_dirs([s.root for s in ctx.sources])
        extra = ctx.options.extra or {}
        results, probe_stats = probe_headers(
            probes, include_dirs, [s.root for s in ctx.sources], cache_dir=ctx.options.cache_dir,
            jobs=ctx.options.jobs, max_headers=int(extra.get("structs_max_headers",
                                                             DEFAULT_MAX_HEADERS)),
            timeout=float(extra.get("structs_probe_timeout", DEFAULT_TIMEOUT)), root_labels=roots)
        for r in results:
            layouts.extend(r.layouts)
            diagnostics.extend(r.diagnostics)
        stats.update(probe_stats)
    layouts.sort()
    stats["layouts"] = len(layouts)
    stats["resolved"] = sum(1 for x in layouts if x.method is not Method.UNRESOLVED)
    stats["unresolved"] = len(layouts) - stats["resolved"]
    # probe seconds are a timing: they go to the run log, not the (deterministic) bundle
    timing = {"probe_seconds": stats.pop("probe_seconds", 0.0),
              "headers_cached": stats.pop("headers_cached", 0)}
    return Contribution(records=tuple(layouts), diagnostics=tuple(sorted(diagnostics)),
                        stats=stats, extra={"timings": timing})


STEP_NAME = "structs"
STEP = Step(name=STEP_NAME, extract=extract_structs, bundle_key="structs", version="1",
            scanners={Language.CPP: scan_struct_definitions,
                      Language.CUDA: scan_struct_definitions})
