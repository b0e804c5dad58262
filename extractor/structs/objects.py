"""A compiled probe object read back into layout records, for one header or for a batch of them.

The layouts of a header are the aggregates whose DWARF ``DW_AT_decl_file`` is that header (the
probe includes each header by its absolute path, so the compiler names it the same way): in a
batch object, each header gets exactly the aggregates declared in its own file, as its own probe
object would give them. A definition the object has no type for becomes an ``unresolved`` record
saying why (``NOT_EMITTED``, or the other definition of the name that was compiled).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from extractor.model import Diagnostic, Severity
from extractor.structs.dwarf import DwarfReadError, RawLayout, read_layouts
from extractor.structs.header import NOT_EMITTED, HeaderProbe
from extractor.structs.probecache import ProbeResult
from extractor.structs.records import Method, StructLayout, layout_from_raw, simple_name, unresolved_layout
from extractor.structs.source import StructDefinition
from extractor.structs.tags import tag_layout


def read_probe(probe: HeaderProbe, obj: Path, method: Method, includer: str = "", target: str = "") -> ProbeResult:
    """The layouts of ``probe``'s definitions in ``obj``; ``includer``: the file whose earlier
    includes the probe needed (said in each layout's ``origin``)."""
    return read_batch((probe,), obj, method, {probe.path: includer} if includer else {}, target)[probe.path]


def read_batch(probes: Sequence[HeaderProbe], obj: Path, method: Method, includers: Mapping[str, str] | None = None,
               target: str = "") -> dict[str, ProbeResult]:
    """Each header's layouts in one object, by the file DWARF says declared them; the object is
    read once for all of them. ``includers``: by header path, the includer whose earlier lines
    the probe compiled first (headers batched after one preamble came from different includers
    with the same lines: each layout's ``origin`` names its own)."""
    includers = includers or {}
    by_file = {os.path.realpath(p.file): p for p in probes}
    try:
        raws = read_layouts(obj, decl_filter=lambda name: os.path.realpath(name) in by_file)
    except DwarfReadError as err:
        return {p.path: failed_result(p, f"probe object unreadable: {err.message}", "probe-failed") for p in probes}
    mine: dict[str, list[RawLayout]] = {p.path: [] for p in probes}
    for raw in raws:  # in the reader's order (name, size, file, line), as a header's own object gives them
        mine[by_file[os.path.realpath(raw.decl_file)].path].append(raw)
    return {p.path: _result(p, mine[p.path], method, includers.get(p.path, ""), target) for p in probes}


def _result(probe: HeaderProbe, raws: list[RawLayout], method: Method, includer: str, target: str) -> ProbeResult:
    origin = f"{probe.path} as included by {includer}" if includer else probe.path
    layouts: dict[str, StructLayout] = {}
    for raw in raws:
        layout = layout_from_raw(raw, path=probe.path, method=method, origin=origin)
        layout = dataclasses.replace(layout, tags=tag_layout(layout), target=target)
        layouts.setdefault(layout.qualname, layout)
    out = list(layouts.values())
    at_line: dict[int, list[str]] = {}
    for layout in out:
        at_line.setdefault(layout.line, []).append(layout.qualname)
    by_name: dict[str, list[StructDefinition]] = {}
    for d in probe.definitions:
        by_name.setdefault(d.qualname, []).append(d)
    for name, defs in sorted(by_name.items()):
        found = layouts.get(name)
        for d in defs:
            if found is not None and (len(defs) == 1 or found.line == d.line):
                continue
            if found is None and simple_name(name) in {simple_name(q) for q in at_line.get(d.line, ())}:
                # the compiler laid out a definition of that name at that very line, under the
                # scopes the source's scan got wrong where the parser lost its way (torch's
                # `struct C10_API X` inside `namespace c10`, found as `X` beside `c10::X`)
                continue
            if found is not None:
                # several definitions of one name (`#if` branches): the compiled one is laid out
                error = (f"another definition of {name} (line {found.line}) is the one compiled with this "
                         "build context; this one is in a branch the preprocessor left out")
            else:
                error = NOT_EMITTED
            stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=origin)
            out.append(dataclasses.replace(stub, tags=tag_layout(stub), target=target))
    return ProbeResult(probe.path, tuple(sorted(out)), compiled=True)


def unresolved_count(result: ProbeResult) -> int:
    return sum(1 for x in result.layouts if x.method is Method.UNRESOLVED)


def failed_result(probe: HeaderProbe, error: str, code: str) -> ProbeResult:
    """Every definition of ``probe`` unresolved with ``error``, and a diagnostic ``code``."""
    layouts = []
    for d in probe.definitions:
        stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=probe.path)
        layouts.append(dataclasses.replace(stub, tags=tag_layout(stub)))
    diag = Diagnostic(probe.path, 0, code, f"struct probe failed: {error}", Severity.WARNING)
    return ProbeResult(probe.path, tuple(sorted(layouts)), (diag,))
