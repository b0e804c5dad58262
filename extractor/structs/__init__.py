"""Struct layouts: size, alignment, members, holes and padding, as DWARF states them.

Two inputs: ELF files the user gives (``ctx.options.binaries``, method ``dwarf-binary``) and, when
``ctx.options.probe_structs`` is set, probe objects compiled from the system's own headers
(``extractor.structs.probe``) with the user's build context (``ctx.options.build``). The aggregates
probed are the C/C++ graph's (one definition finder); every non-template struct, class or union
the graph has in a header gets a layout record, resolved or ``unresolved`` with the header or name
that was missing and, where archdiff knows it, what would supply it. pyelftools is imported only
by the ``extractor.structs.dwarf`` package.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.structs.dwarf import DwarfReadError, read_layouts
from extractor.structs.records import STRUCTS, Method, StructLayout, layout_from_raw
from extractor.structs.tags import tag_layout

if TYPE_CHECKING:
    from extractor.context import Context
    from extractor.model import Contribution, Step
    from extractor.structs.header import ProbeTimings

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


def extract_structs(ctx: Context) -> Contribution[ProbeTimings]:
    from extractor.model import Contribution, Diagnostic, Severity
    from extractor.structs.header import ProbeTimings

    roots = tuple((s.root, s.label) for s in ctx.sources)
    layouts: list[StructLayout] = []
    diagnostics: list[Diagnostic] = []
    stats: dict[str, Any] = {}
    for binary in ctx.options.binaries:
        try:
            found = read_binary_layouts(Path(binary), roots)
        except DwarfReadError as err:
            diagnostics.append(Diagnostic(Path(binary).name, 0, err.code, err.message,
                                          Severity.ERROR))
            continue
        layouts.extend(found)
        stats[f"binary:{Path(binary).name}"] = len(found)
    timing = ProbeTimings()
    if ctx.options.probe_structs:
        # imported here: the compilers, the planner and the C/C++ graph behind it are a third of
        # a second of imports that reading the ELF files above never needs
        from extractor.structs.probing import probe_layouts

        probed, probe_diagnostics, probe_stats, timing = probe_layouts(ctx, roots)
        layouts.extend(probed)
        diagnostics.extend(probe_diagnostics)
        stats.update(probe_stats)
    layouts.sort()
    stats["layouts"] = len(layouts)
    stats["resolved"] = sum(1 for x in layouts if x.method is not Method.UNRESOLVED)
    stats["unresolved"] = len(layouts) - stats["resolved"]
    stats.update(layout_counts(layouts))
    return Contribution(records=tuple(layouts), diagnostics=tuple(sorted(diagnostics)),
                        stats=stats, shared=timing)


def layout_counts(layouts: list[StructLayout]) -> dict[str, Any]:
    """Resolved/unresolved per struct family (tag; ``untagged`` for none) and the missing headers
    or names behind unresolved layouts, most frequent first: what a report counts."""
    families: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    missing: collections.Counter[str] = collections.Counter()
    supplies: collections.Counter[str] = collections.Counter()
    for x in layouts:
        state = "unresolved" if x.method is Method.UNRESOLVED else "resolved"
        for tag in x.tags or ("untagged",):
            families[tag][state] += 1
        if x.missing:
            missing[x.missing] += 1
        if x.supplied_by:
            supplies[x.supplied_by] += 1
    ordered = lambda c: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731
    return {"families": {tag: {"resolved": c["resolved"], "unresolved": c["unresolved"]}
                         for tag, c in sorted(families.items())},
            "unresolved_missing": ordered(missing), "unresolved_supplied_by": ordered(supplies)}


STEP_NAME = "structs"


def __getattr__(name: str) -> Step[ProbeTimings]:
    """``STEP``, built on first use: reading an ELF (``archdiff structs``) needs neither the
    pipeline's step nor ``extractor.model`` behind it, a tenth of that command's imports."""
    if name != "STEP":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from extractor import cpp
    from extractor.model import Step

    # version 2: no scanner of its own; the aggregates come from the cpp step. In the background:
    # the compilers run while the driver goes on with the python graph and the steps after it.
    step = Step(name=STEP_NAME, extract=extract_structs, records=STRUCTS, version="2", requires=(cpp.STEP,),
                background=True)
    globals()["STEP"] = step
    return step
