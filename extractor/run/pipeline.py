"""The one place that knows the order of a run: acquire, inventory, the memo, then (on a miss,
extractor.run.compute) read, scan and each kind."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from extractor.acquire.archives import Unpacking
from extractor.acquire.inventory import InventoryEntry, evidence_path, list_files, list_unpacked
from extractor.acquire.sources import (SourceSpec, acquire, acquire_unpacking, default_cache_dir, default_label,
                                       parse_spec)
from extractor.acquire.stamps import TreeStamps
from extractor.context import ExtractOptions, SourceTree
from extractor.errors import UserInputError
from extractor.model import Diagnostic, Severity, Step
from extractor.run import memo
from extractor.run.extraction import Extraction, parse_bundle, summarize_bundle, without_cyclic_gc
from extractor.run.progress import Progress
from extractor.run.runlog import RunLog
from extractor.run.workplace import HERE, Workplace

__all__ = ["Extraction", "ExtractionJob", "acquire_sources", "default_identity", "extract_system", "parse_bundle",
           "summarize_bundle"]


@dataclasses.dataclass(frozen=True, slots=True)
class ExtractionJob:
    """One system to extract: what :func:`extract_system` takes (for executors that run many)."""

    specs: tuple[str, ...]
    name: str = ""
    version: str = ""


def acquire_sources(specs: Sequence[str], cache_dir: Path) -> tuple[SourceTree, ...]:
    return tuple(acquire(p, cache_dir) for p in _labelled(specs))


def _labelled(specs: Sequence[str]) -> list[SourceSpec]:
    parsed = [parse_spec(s) for s in specs]
    if len(parsed) > 1:
        labels = [p.label or default_label(p.text) for p in parsed]
        if len(set(labels)) != len(labels):
            raise UserInputError(f"two sources share the label {_first_duplicate(labels)!r}: name them label=SPEC")
        parsed = [dataclasses.replace(p, label=lab) for p, lab in zip(parsed, labels)]
    return parsed


def _acquire_unpacking(specs: Sequence[str], cache_dir: Path) -> tuple[tuple[SourceTree, ...], dict[str, Unpacking]]:
    """The sources, and by label those whose tree a writer (a forked child, or a thread where there
    is no fork) is still writing (first unpacked by this run: extractor.acquire.archives): their
    files are read from memory until the run waits for the writers, before anything reads a tree
    from disk. The writer outlives a run that fails before waiting: the tree is left whole (or its
    temporary folder removed)."""
    acquired = [acquire_unpacking(p, cache_dir) for p in _labelled(specs)]
    return tuple(tree for tree, _u in acquired), {tree.label: u for tree, u in acquired if u is not None}


def _first_duplicate(items: list[str]) -> str:
    seen = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return ""


def default_identity(sources: Sequence[SourceTree]) -> tuple[str, str]:
    first = sources[0]
    name = default_label(first.spec)
    version = first.ref or (first.commit[:12] if first.commit else "")
    return name, version


def extract_system(specs: Sequence[str], *, name: str = "", version: str = "",
                   options: ExtractOptions | None = None, progress: Progress | None = None,
                   steps: Sequence[Step] | None = None, executor: Workplace | None = None,
                   keep: list[object] | None = None) -> Extraction:
    """Acquire ``specs`` as one system and extract every evidence kind from it.

    ``steps``: the kinds to extract, in order (default: every kind, extractor.steps.STEPS, imported
    only when a run needs them). ``executor`` says where files are scanned and where their facts
    are cached (default: this machine's process pool and ``CACHE/facts.sqlite``); the evidence is
    the same either way.

    The run's objects (every file's facts, the graph, the records: 3 million on vLLM) are freed
    when it returns, 0.13 s of CPU, so that a process extracting many systems holds one run at a
    time. Given ``keep``, they are appended to it instead: for a process that ends after the run
    without freeing them (the console script's ``extract``), or a caller that frees them later."""
    options = options or ExtractOptions()
    executor = executor or HERE
    progress = progress or Progress()
    log = RunLog(options.jobs, executor.name)
    chosen = None if steps is None else tuple(steps)
    if chosen is not None:
        from extractor.steps import check_order  # a caller's own list: it has imported the steps already

        check_order(chosen)
    with without_cyclic_gc():
        extraction = _extract(specs, name, version, options, progress, chosen, executor, log, keep)
    log.finish()
    return dataclasses.replace(extraction, timings=log.timings(), log=log.as_json())


def _extract(specs: Sequence[str], name: str, version: str, options: ExtractOptions, progress: Progress,
             steps: tuple[Step, ...] | None, executor: Workplace, log: RunLog, keep: list[object] | None
             ) -> Extraction:
    cache_dir = options.cache_dir or default_cache_dir()
    progress.phase("acquire")
    with log.phase("acquire"):
        sources, unpacking = _acquire_unpacking(specs, cache_dir)
        if options.probe_structs and not options.build.empty:
            # the build context's own downloads (--headers-from wheels) and fingerprint, once per run
            from extractor.acquire.headers import resolve_build_settings  # wheels' download code: only here

            options = dataclasses.replace(options, build=resolve_build_settings(options.build, cache_dir))
        default_name, default_version = default_identity(sources)

    progress.phase("inventory")
    with log.phase("inventory"):
        # loaded first: a stamp is trusted only if the file's times are well before this moment,
        # which is then before the inventory's lstat too (extractor.acquire.stamps)
        stamps = {s.label: TreeStamps.load(cache_dir, s.root) for s in sources if s.label not in unpacking}
        entries, diagnostics = _inventory(sources, unpacking)
        # A tree still being written has no memo worth looking for (the tree was not there before
        # this run): its key, which reads the manifests on disk, would wait for the writer.
        known = None if unpacking else _known_contents(entries, stamps)
    name, version = name or default_name, version or default_version
    log.scan.files = len(entries)
    looked_up = ""
    if known is not None:
        with log.phase("memo"):
            # Every file is as an earlier run read it: the key, without reading the tree
            looked_up = memo.memo_key(name, version, sources, known, diagnostics, options, memo.code_identity(steps))
            store = executor.open_store(cache_dir)
            try:
                served = memo.serve(cache_dir, looked_up, store, sources, len(entries))
            finally:
                store.close()
        if served is not None:
            log.memo = True
            log.scan.cached = len(entries)
            log.bundle_bytes = len(served.evidence)
            return served
    from extractor.run.compute import Inputs, compute  # the scanners and steps: a miss's imports

    try:
        return compute(Inputs(name, version, sources, tuple(entries), unpacking, tuple(diagnostics), options,
                              cache_dir, stamps, looked_up), steps, progress, executor, log, keep)
    except BaseException:
        # A run that fails before it waits for its trees' writers still reaps them (each finishes
        # its tree): a process that extracts again (releases, compare) keeps no zombie per failure.
        for being_written in unpacking.values():
            with contextlib.suppress(Exception):
                being_written.wait()
        raise


def _inventory(sources: Sequence[SourceTree], unpacking: dict[str, Unpacking]
               ) -> tuple[list[tuple[SourceTree, InventoryEntry]], list[Diagnostic]]:
    """Every source's files, in path order, and what their listing met (links that leave, ...)."""
    entries: list[tuple[SourceTree, InventoryEntry]] = []
    diagnostics: list[Diagnostic] = []
    for source in sources:
        being_written = unpacking.get(source.label)
        found, problems = list_unpacked(source, being_written.sizes(), being_written.head) if being_written \
            else list_files(source)
        entries.extend((source, e) for e in found)
        diagnostics.extend(problems)
        diagnostics.extend(Diagnostic(evidence_path(source.label, member.removeprefix("./")), 0, "symlink-outside",
                                      "symbolic link leaves the source tree: not extracted", Severity.WARNING)
                           for member in source.skipped_links)
    entries.sort(key=lambda pair: pair[1].path)
    return entries, diagnostics


def _known_contents(entries: Sequence[tuple[SourceTree, InventoryEntry]], stamps: dict[str, TreeStamps]
                    ) -> list[tuple[str, str]] | None:
    """Each file's path and ``sha256:language`` as an earlier run read them, when every file's stamp
    is the one recorded then (extractor.acquire.stamps); None as soon as one is not."""
    known = []
    for source, entry in entries:
        digest = stamps[source.label].digest(entry.rel, entry.stamp)
        if digest is None:
            return None
        known.append((entry.path, f"{digest}:{entry.language.value}"))
    return known

