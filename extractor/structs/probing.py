"""Struct layouts from probes: the C/C++ graph's aggregates, compiled in probe translation units
with the user's build context, read back from the objects; what did not compile is explained
(:class:`Reasons`).

Kept apart from the package's entry so that reading an ELF the user gives (``archdiff structs``)
never imports the compilers, the probe planner or the C/C++ graph behind them.
"""

from __future__ import annotations

import collections
import dataclasses
import posixpath
import shutil
import tempfile
from pathlib import Path
from typing import Any

from extractor import cpp
from extractor.acquire.headers import resolve_build_settings
from extractor.context import Context
from extractor.cpp.graph import AggregateDefinition
from extractor.model import Diagnostic, Language
from extractor.structs.conditions import CmakeOption, cmake_options, conditional_reason, open_conditions
from extractor.structs.plan import plan_probes
from extractor.structs.batch import BATCH_SIZE
from extractor.structs.compilers import compilers_started
from extractor.structs.header import DEFAULT_MAX_HEADERS, DEFAULT_MEMORY, DEFAULT_TIMEOUT, NOT_EMITTED, ProbeTimings
from extractor.structs.probe import find_include_dirs, own_include_roots, probe_headers
from extractor.structs.protogen import generate_protobuf_headers
from extractor.structs.reasons import missing_from, pinned_versions, ran_out_of_memory, supplier_for
from extractor.structs.records import Method, StructLayout, simple_name

_CPP = (Language.CPP, Language.CUDA)


def probe_layouts(ctx: Context, roots: tuple[tuple[Path, str], ...]
           ) -> tuple[list[StructLayout], list[Diagnostic], dict[str, Any], ProbeTimings]:
    started = compilers_started()
    cache_dir = ctx.options.cache_dir
    settings = ctx.options.build
    if not settings.fingerprint and not settings.empty:
        settings = resolve_build_settings(settings, cache_dir or Path(tempfile.gettempdir()))
    aggregates, includes = _graph_aggregates(ctx)
    files = {f.path: (ctx.abs_path(f), f.language) for f in ctx.files if f.language in _CPP}
    plan = plan_probes(aggregates, includes, files, list(roots), settings)
    extra = ctx.options.extra or {}
    stats: dict[str, Any] = dict(plan.stats)
    with tempfile.TemporaryDirectory(prefix="archdiff-protoc-") as generated_dir:
        # a stable tail (`generated/protobuf`): it is what error lines that name these headers show
        into = Path(generated_dir) / "generated" / "protobuf"
        into.mkdir(parents=True)
        generated = generate_protobuf_headers([r for r, _ in roots], into) if _wants_generated(ctx) else None
        include_dirs = find_include_dirs([s.root for s in ctx.sources])
        vendored = vendored_include_roots(ctx, include_dirs)
        if generated is not None and generated.directory is not None:
            # searched after the tree's own directories; its identity is the .proto digest in the
            # context key (its path is a new temporary directory every run)
            include_dirs = (*include_dirs, generated.directory)
            stats["protobuf_headers_generated"] = generated.generated
        if vendored:
            include_dirs = (*include_dirs, *vendored)
            stats["include_dirs_vendored"] = len(vendored)
        probes = own_include_roots(plan.probes, include_dirs, [s.root for s in ctx.sources])
        if generated is not None and generated.refused:
            stats["protobuf_directories_refused"] = generated.refused
        context_key = f"{settings.fingerprint}\n{generated.digest if generated else ''}"
        results, probe_stats = probe_headers(
            probes, include_dirs, [s.root for s in ctx.sources],
            cache_dir=cache_dir, jobs=ctx.options.jobs,
            max_headers=int(extra.get("structs_max_headers", DEFAULT_MAX_HEADERS)),
            timeout=float(extra.get("structs_probe_timeout", DEFAULT_TIMEOUT)), root_labels=roots,
            context_key=context_key, keep_objects=_keep_objects(extra),
            memory_bytes=int(extra.get("structs_probe_memory", DEFAULT_MEMORY)),
            batch_size=int(extra.get("structs_batch_size", BATCH_SIZE)))
    reasons = Reasons(roots, {p: f for p, (f, _) in files.items()}, pinned_versions([r for r, _ in roots]),
                      settings.headers_from)
    layouts = [reasons.explain(x) for r in results for x in r.layouts]
    # A definition the source's scan found under other scopes than the compiler laid it out at
    # that line (the scan lost its way around a macro: torch's `struct C10_API X` inside
    # `namespace c10`, found as `X`, or inside a function) is that layout, not one more record.
    laid_out = {(x.path, x.line, simple_name(x.qualname)): x.qualname for x in layouts
                if x.method is not Method.UNRESOLVED}

    def elsewhere(path: str, line: int, qualname: str) -> bool:
        return laid_out.get((path, line, simple_name(qualname)), qualname) != qualname

    layouts.extend(reasons.explain(x) for x in plan.unprobed if not elsewhere(x.path, x.line, x.qualname))
    diagnostics = [d for r in results for d in r.diagnostics]
    stats.update(probe_stats)
    # The headline: the graph's own definitions (a probe also lays out template instantiations
    # its header declares, which are records too but not definitions the graph has)
    wanted = {(p.path, d.qualname) for p in probes for d in p.definitions if not elsewhere(p.path, d.line, d.qualname)} | \
        {(x.path, x.qualname) for x in plan.unprobed if not elsewhere(x.path, x.line, x.qualname)}
    resolved = {(x.path, x.qualname) for x in layouts if x.method is not Method.UNRESOLVED}
    stats["definitions"] = len(wanted)
    stats["definitions_resolved"] = len(wanted & resolved)
    if not settings.empty:
        stats["build_context"] = settings.record()
    # probe seconds are a timing: they go to the run log, not the (deterministic) bundle
    timing = ProbeTimings(stats.pop("probe_seconds", 0.0), stats.pop("headers_cached", 0),
                          stats.pop("probe_batches", 0), stats.pop("headers_batched", 0),
                          compilers_started() - started)
    return layouts, diagnostics, stats, timing


MAX_VENDORED_ROOTS = 32


def vendored_include_roots(ctx: Context, include_dirs: tuple[Path, ...]) -> tuple[Path, ...]:
    """Directories of the tree that the tree's own includes need and the include search leaves
    out: a library vendored under ``third_party`` and included by its library path (grpcio's
    ``#include "absl/strings/string_view.h"``, found at ``third_party/abseil-cpp/absl/...``; its
    build says ``-Ithird_party/abseil-cpp``, which the tree cannot show). An include counts when
    it names a directory (``a/b.h``, not ``b.h``), no searched directory, not the includer's own
    and not the host compiler's holds it (a system ``openssl/ssl.h`` stays the one found), and
    exactly one file of the tree ends with it: that file less the include is the root. Appended
    after every other directory of the tree, so nothing that compiled before finds another file;
    at most MAX_VENDORED_ROOTS, the most needed first, then by path."""
    from extractor.cpp.includes import IncludeResolver
    from extractor.structs.compilers import host_include_dirs
    from extractor.structs.probeguard import system_include_dirs

    gxx = shutil.which("g++")
    system = [*(system_include_dirs(gxx) if gxx else ()), *host_include_dirs()]
    cpp_files = [f for f in ctx.files if f.language in _CPP]
    disk = {f.path: str(ctx.abs_path(f)) for f in cpp_files}
    on_disk = set(disk.values())
    resolver = IncludeResolver(list(disk))
    searched = [str(d) for d in include_dirs]
    elsewhere: dict[str, bool] = {}  # per include: a searched or a system directory holds it
    needed: collections.Counter[str] = collections.Counter()
    for f in cpp_files:
        facts = f.facts.get("cpp")
        for target, _angle, _line in (facts.includes if facts is not None else ()):
            name = posixpath.normpath(target.replace("\\", "/"))
            if "/" not in name or name.startswith("../"):
                continue
            candidates = resolver.by_suffix.get(name, ())
            if len(candidates) != 1:
                continue
            if name not in elsewhere:
                elsewhere[name] = any(f"{d}/{name}" in on_disk for d in searched) or \
                    any((d / name).is_file() for d in system)
            if elsewhere[name] or posixpath.join(posixpath.dirname(disk[f.path]), name) in on_disk:
                continue
            needed[disk[candidates[0]][:-len(name) - 1]] += 1
    chosen = sorted(needed, key=lambda root: (-needed[root], root))[:MAX_VENDORED_ROOTS]
    return tuple(Path(root) for root in sorted(chosen))


def _graph_aggregates(ctx: Context) -> tuple[tuple[AggregateDefinition, ...], dict[str, tuple[str, ...]]]:
    """The aggregates and includes of the C/C++ graph: the cpp step's, or the same scan run now."""
    result = ctx.result_if_run(cpp.STEP)
    shared = result.shared if result is not None else None
    if shared is None:
        from extractor.cpp.graph import build_cpp_graph
        from extractor.cpp.scan import scan_source

        entries = []
        for f in ctx.files:
            if f.language not in _CPP:
                continue
            facts = f.facts.get("cpp")
            if facts is None:
                try:
                    data = ctx.abs_path(f).read_bytes()
                except OSError:
                    continue
                facts = scan_source(data, f.language)
            entries.append((f.path, f.language, facts, ctx.abs_path(f)))
        shared = build_cpp_graph(entries, {f.path: f.source for f in ctx.files}).shared
        assert shared is not None  # build_cpp_graph always shares what it found
    return shared.aggregates, dict(shared.includes)


def _keep_objects(extra) -> Path | None:
    """``extra["structs_keep_objects"]``: where a measurement (bench/structs_vs_pahole.py) wants
    the probe objects; never set by the CLI."""
    where = extra.get("structs_keep_objects")
    if not where:
        return None
    Path(where).mkdir(parents=True, exist_ok=True)
    return Path(where)


def _wants_generated(ctx: Context) -> bool:
    """Protobuf headers are generated only for a system whose files include some (`x.pb.h`)."""
    for f in ctx.files:
        facts = f.facts.get("cpp") if f.language in _CPP else None
        if facts and any(target.endswith(".pb.h") for target, _angle, _line in facts.includes):
            return True
        if facts is None and f.language in _CPP:
            try:
                if b".pb.h" in ctx.abs_path(f).read_bytes():
                    return True
            except OSError:
                continue
    return False


class Reasons:
    """What an unresolved layout is missing, in terms a user can act on: the header or name the
    compiler could not find and what supplies it, the memory cap it ran into, or, for a definition
    the compile left out, the `#if` lines around it and the CMake option that names the macro
    (the header's text and the project's CMake files read once per run, when first needed)."""

    def __init__(self, roots: tuple[tuple[Path, str], ...], files: dict[str, Path], pins: dict[str, str],
                 given: tuple[str, ...] = ()) -> None:
        self._roots, self._files, self._pins, self._given = roots, files, pins, given
        self._options: dict[str, CmakeOption] | None = None
        self._texts: dict[str, str] = {}

    def explain(self, layout: StructLayout) -> StructLayout:
        if layout.method is not Method.UNRESOLVED or layout.missing:
            return layout
        if layout.error == NOT_EMITTED:
            return self._left_out(layout)
        if ran_out_of_memory(layout.error):
            return dataclasses.replace(layout, missing="memory", supplied_by=(
                "a larger probe memory cap (ExtractOptions.extra['structs_probe_memory'], bytes of address space "
                f"per compiler; default {DEFAULT_MEMORY // 1024**3} GiB)"))
        missing = missing_from(layout.error)
        if not missing:
            return layout
        return dataclasses.replace(layout, missing=missing, supplied_by=supplier_for(missing, self._pins, self._given))

    def _left_out(self, layout: StructLayout) -> StructLayout:
        if layout.path not in self._files:
            return layout
        if layout.path not in self._texts:
            try:
                self._texts[layout.path] = self._files[layout.path].read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[layout.path] = ""
        conditions = open_conditions(self._texts[layout.path], layout.line)
        if not conditions:
            return layout
        if self._options is None:
            self._options = cmake_options(self._roots)
        error, missing, supplied = conditional_reason(conditions, self._options)
        return dataclasses.replace(layout, error=error, missing=missing, supplied_by=supplied)
