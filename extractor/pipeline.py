"""The one place that knows the order of the steps: acquire, inventory, scan, then each kind."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from extractor import pysymbols
from extractor.bundle import build_bundle
from extractor.cache import FactCache, code_fingerprint
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.errors import UserInputError
from extractor.inventory import list_files
from extractor.model import Diagnostic, Severity, Step
from extractor.scan import scan_files
from extractor.sources import acquire, default_cache_dir, parse_spec

# Evidence kinds in the order they run; a later kind may read what earlier ones found.
STEPS: tuple[Step, ...] = (
    pysymbols.STEP,
)


class Progress:
    """What the pipeline reports while it works; the CLI draws it, tests ignore it."""

    def phase(self, name: str, total: int | None = None) -> None: ...

    def advance(self, n: int = 1) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Extraction:
    bundle: dict[str, Any]
    timings: dict[str, float]  # seconds per phase: for the run log, never for the bundle
    cache: dict[str, int]  # hits and misses


def acquire_sources(specs: Sequence[str], cache_dir: Path) -> tuple[SourceTree, ...]:
    parsed = [parse_spec(s) for s in specs]
    if len(parsed) > 1:
        labels = [p.label or _default_label(p) for p in parsed]
        if len(set(labels)) != len(labels):
            raise UserInputError(f"two sources share the label {_first_duplicate(labels)!r}: name them label=SPEC")
        parsed = [dataclasses.replace(p, label=lab) for p, lab in zip(parsed, labels)]
    return tuple(acquire(p, cache_dir) for p in parsed)


def _default_label(spec) -> str:
    base = spec.location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    for suffix in (".git", ".tar.gz", ".tgz", ".zip", ".tar"):
        base = base.removesuffix(suffix)
    return base or spec.kind


def _first_duplicate(items: list[str]) -> str:
    seen = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return ""


def default_identity(sources: Sequence[SourceTree]) -> tuple[str, str]:
    first = sources[0]
    spec = parse_spec(first.spec)
    name = spec.location if spec.kind == "pypi" else _default_label(spec)
    version = first.ref or (first.commit[:12] if first.commit else "")
    return name, version


def extract_system(specs: Sequence[str], *, name: str = "", version: str = "",
                   options: ExtractOptions | None = None, progress: Progress | None = None,
                   steps: Sequence[Step] = STEPS) -> Extraction:
    """Acquire ``specs`` as one system and extract every evidence kind from it."""
    options = options or ExtractOptions()
    progress = progress or Progress()
    cache_dir = options.cache_dir or default_cache_dir()
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    progress.phase("acquire")
    sources = acquire_sources(specs, cache_dir)
    default_name, default_version = default_identity(sources)
    timings["acquire"] = time.perf_counter() - clock

    clock = time.perf_counter()
    entries = []
    diagnostics: list[Diagnostic] = []
    for source in sources:
        found, problems = list_files(source)
        entries.extend((source, e) for e in found)
        diagnostics.extend(problems)
    entries.sort(key=lambda pair: pair[1].path)
    timings["inventory"] = time.perf_counter() - clock

    clock = time.perf_counter()
    files, cache_counts, scan_diagnostics = _scan(entries, tuple(steps), options, cache_dir, progress)
    diagnostics.extend(scan_diagnostics)
    timings["scan"] = time.perf_counter() - clock

    ctx = Context(name or default_name, version or default_version, sources, files, options)
    for step in steps:
        clock = time.perf_counter()
        progress.phase(step.name)
        ctx.results[step.name] = step.extract(ctx)
        timings[step.name] = time.perf_counter() - clock
    clock = time.perf_counter()
    bundle = build_bundle(ctx, tuple(steps), diagnostics)
    timings["bundle"] = time.perf_counter() - clock
    return Extraction(bundle, timings, cache_counts)


def _scan(entries, steps: tuple[Step, ...], options: ExtractOptions, cache_dir: Path,
          progress: Progress) -> tuple[tuple[SourceFile, ...], dict[str, int], list[Diagnostic]]:
    fingerprint = code_fingerprint((s.name, s.version) for s in steps)
    cache = FactCache(cache_dir / "facts.sqlite")
    diagnostics: list[Diagnostic] = []
    blobs: list[tuple[Any, Any, bytes, str]] = []
    for source, entry in entries:
        try:
            data = (source.root / entry.rel).read_bytes()
        except OSError as err:
            diagnostics.append(Diagnostic(entry.path, 0, "unreadable", str(err), Severity.ERROR))
            continue
        key = f"{hashlib.sha256(data).hexdigest()}:{entry.language.value}:{fingerprint}"
        blobs.append((source, entry, data, key))
    try:
        cached = cache.get_many([b[3] for b in blobs])
        missing = [(b[1].language.value, b[2]) for b in blobs if b[3] not in cached]
        progress.phase("scan", len(missing))
        fresh = dict(zip((b[3] for b in blobs if b[3] not in cached),
                         scan_files(missing, steps, options.jobs, progress.advance)))
        cache.put_many(fresh)
    finally:
        cache.close()
    files = []
    for source, entry, data, key in blobs:
        result = cached.get(key) or fresh[key]
        for line, code, message, severity in result["diagnostics"]:
            diagnostics.append(Diagnostic(entry.path, line, code, message, Severity(severity)))
        files.append(SourceFile(entry.path, entry.rel, source.label, entry.language, key.split(":", 1)[0],
                                len(data), result["facts"], result["lines"]))
    return tuple(files), {"hits": len(cached), "misses": len(fresh)}, diagnostics
