"""The one place that knows the order of the steps: acquire, inventory, scan, then each kind."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import itertools
import json
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from extractor import naming
from extractor.acquire.headers import resolve_build_settings
from extractor.evidence.write import encode_bundle
from extractor.run.cache import code_fingerprint
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.errors import UserInputError
from extractor.run.workplace import HERE, FactStore, HeldWrites, Workplace
from extractor.run.diagnosis import group_diagnostics
from extractor.run.facts import FileFacts, FileResult, decode_result, fact_decoders
from extractor.run.progress import Progress
from extractor.run.runlog import RunLog, RunLogged
from extractor.acquire.archives import Unpacking
from extractor.acquire.inventory import (InventoryEntry, evidence_path, file_limit, list_files, list_unpacked,
                                         read_regular_file)
from extractor.native.manifests import manifests_digest
from extractor.model import Diagnostic, Severity, Step
from extractor.steps import STEPS, check_order
from extractor.structs.reasons import pinned_versions
from extractor.acquire.sources import (SourceSpec, acquire, acquire_unpacking, default_cache_dir, default_label,
                                       parse_spec, wait_unpacked)


@dataclasses.dataclass(frozen=True, slots=True)
class ExtractionJob:
    """One system to extract: what :func:`extract_system` takes (for executors that run many)."""

    specs: tuple[str, ...]
    name: str = ""
    version: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class Extraction:
    """One system's evidence, as ``evidence.json``'s bytes: a warm run (every input unchanged, the
    bundle served from the memo) writes them as they are and reports counts from ``summary``; the
    bundle is parsed only for a caller that reads it (vLLM's is 48 MB: about a second of
    ``json.loads``, more than the rest of the warm run)."""

    data: bytes  # evidence.json, UTF-8, byte for byte
    summary: dict[str, Any]  # counts and diagnostics, see :func:`summarize_bundle`
    timings: dict[str, float]  # seconds per phase: for the run log, never for the bundle
    cache: dict[str, int]  # hits and misses; "memo" is 1 when the whole bundle came from the cache
    _parsed: list[dict[str, Any]] = dataclasses.field(default_factory=list, repr=False, compare=False)
    # the run log (extractor.run.runlog: wall and CPU seconds per phase, serial seconds, bytes
    # from workers); empty for an extraction that did not run here
    log: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @property
    def bundle(self) -> dict[str, Any]:
        """The bundle as JSON values, parsed on first use."""
        if not self._parsed:
            self._parsed.append(parse_bundle(self.data))
        return self._parsed[0]

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


def parse_bundle(data: bytes) -> dict[str, Any]:
    """``json.loads(data)``, faster: the cyclic garbage collector has nothing to find among the
    million fresh dicts and lists of a large bundle, and walking them every few thousand
    allocations doubles the time."""
    with _without_cyclic_gc():
        return json.loads(data)


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (reference counting still frees
    everything that is not a cycle). The driver builds millions of small acyclic objects (facts,
    nodes, edges, records) and keeps them to the end of the run: every full collection walks all
    of them, and on vLLM those collections cost about a third of the driver's CPU (5 s of 16).

    Turned back on, the collector would walk every object the block made at its first collection
    (all of them are still in the youngest generation): a second and a half after the run. So what
    survives the block is frozen first (``gc.freeze``: left to reference counting, never walked);
    cycles among those objects, if any, are not reclaimed. Worker processes turn the collector on
    again (extractor.run.workerpool)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def summarize_bundle(bundle: dict[str, Any]) -> dict[str, Any]:
    """What a run reports without the bundle: node, edge and file counts, and the diagnostics
    (and, added by each run, ``groups``: the warnings and errors grouped, extractor.run.diagnosis)."""
    return {"nodes": len(bundle["graph"]["nodes"]), "edges": len(bundle["graph"]["edges"]),
            "files": sum(bundle["stats"]["files"].values()), "diagnostics": bundle["diagnostics"]}


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
    """The sources, and by label those whose tree a thread is still writing (first unpacked by
    this run: extractor.acquire.archives): their files are read from memory until the run waits
    for the writers, before anything reads a tree from disk. The writer is not a daemon: a run
    that fails before waiting still leaves the tree whole (or its temporary folder removed)."""
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
                   steps: Sequence[Step] = STEPS, executor: Workplace | None = None,
                   keep: list[object] | None = None) -> Extraction:
    """Acquire ``specs`` as one system and extract every evidence kind from it.

    ``executor`` says where files are scanned and where their facts are cached (default: this
    machine's process pool and ``CACHE/facts.sqlite``); the evidence is the same either way.

    The run's objects (every file's facts, the graph, the records: 3 million on vLLM) are freed
    when it returns, 0.13 s of CPU, so that a process extracting many systems holds one run at a
    time. Given ``keep``, they are appended to it instead: for a process that ends after the run
    without freeing them (the console script's ``extract``), or a caller that frees them later."""
    check_order(steps)
    options = options or ExtractOptions()
    executor = executor or HERE
    progress = progress or Progress()
    log = RunLog(options.jobs, executor.name)
    with _without_cyclic_gc():
        extraction = _extract(specs, name, version, options, progress, tuple(steps), executor, log, keep)
    log.finish()
    return dataclasses.replace(extraction, timings=log.timings(), log=log.as_json())


def _extract(specs: Sequence[str], name: str, version: str, options: ExtractOptions, progress: Progress,
             steps: tuple[Step, ...], executor: Workplace, log: RunLog, keep: list[object] | None) -> Extraction:
    cache_dir = options.cache_dir or default_cache_dir()
    progress.plan(["acquire", "inventory", "read", "scan", *(s.name for s in steps), "bundle"])
    progress.phase("acquire")
    with log.phase("acquire"):
        sources, unpacking = _acquire_unpacking(specs, cache_dir)
        if options.probe_structs and not options.build.empty:
            # the build context's own downloads (--headers-from wheels) and fingerprint, once per run
            options = dataclasses.replace(options, build=resolve_build_settings(options.build, cache_dir))
        default_name, default_version = default_identity(sources)

    progress.phase("inventory")
    with log.phase("inventory"):
        entries: list[tuple[SourceTree, InventoryEntry]] = []
        diagnostics: list[Diagnostic] = []
        for source in sources:
            being_written = unpacking.get(source.label)
            found, problems = list_unpacked(source, being_written.sizes()) if being_written else list_files(source)
            entries.extend((source, e) for e in found)
            diagnostics.extend(problems)
            diagnostics.extend(Diagnostic(evidence_path(source.label, member.removeprefix("./")), 0, "symlink-outside",
                                          "symbolic link leaves the source tree: not extracted", Severity.WARNING)
                               for member in source.skipped_links)
        entries.sort(key=lambda pair: pair[1].path)

    name, version = name or default_name, version or default_version
    progress.phase("read", len(entries))
    with log.phase("read"):
        blobs, read_diagnostics = _read(entries, steps, progress, unpacking)
    log.scan.files = len(blobs)
    store = executor.open_store(cache_dir)
    try:
        with log.phase("memo"):
            memo_diagnostics = diagnostics + read_diagnostics
            diagnostics.extend(read_diagnostics)
            # A tree still being written has no memo worth looking for (the tree was not there
            # before this run): its key, which reads the manifests on disk, waits for the writer.
            memo_key = "" if unpacking else _memo_key(name, version, sources, blobs, memo_diagnostics, options)
            data = store.get_bytes(memo_key) if memo_key else None
            summary = store.get_json(memo_key + ":summary") if data is not None else None
        if data is not None:
            # Every input is unchanged (files, names, options, scanners, compilers): the evidence
            # is the one already computed for them, byte for byte.
            log.memo = True
            log.scan.cached = len(blobs)
            log.bundle_bytes = len(data)
            extraction = Extraction(data, summary or {}, {}, {"hits": len(blobs), "misses": 0, "memo": 1})
            if summary is None:  # a memo stored without its summary: count once from the bundle
                extraction.summary.update(summarize_bundle(extraction.bundle))
            extraction.summary["groups"] = _groups(extraction.summary["diagnostics"], sources)
            return extraction
        scan_store = HeldWrites(store) if unpacking else store
        with log.phase("scan"):
            files, cache_counts, scan_diagnostics = _scan(blobs, steps, options, scan_store, progress, executor, log)
            diagnostics.extend(scan_diagnostics)
        if isinstance(scan_store, HeldWrites):
            with log.phase("unpack"):  # the steps read the trees (manifests, headers): written by now
                for being_written in unpacking.values():
                    wait_unpacked(being_written, cache_dir)
                scan_store.release()
                memo_key = _memo_key(name, version, sources, blobs, memo_diagnostics, options)

        # Every file's facts are decoded: the steps never read the bytes again (probes and manifests
        # read the tree), so they are let go before the steps run (119 MB on torch's wheel tree).
        del blobs
        ctx = Context(name, version, sources, files, options)
        if keep is not None:
            keep.append(ctx)  # its files' facts and every step's results
        for step in steps:
            progress.phase(step.name)
            with log.phase(step.name):
                ctx.results[step.name] = step.extract(ctx)
            if isinstance(shared := ctx.results[step.name].shared, RunLogged):
                log.details[step.name] = shared.run_log()
        progress.phase("bundle")
        with log.phase("bundle"):
            encoded = encode_bundle(ctx, steps, diagnostics)
            log.bundle_bytes = len(encoded.data)
        with log.phase("memo"):
            store.put_compressed(memo_key, encoded.compressed)
            store.put_json(memo_key + ":summary", encoded.summary)
    finally:
        store.close()
    summary = {**encoded.summary, "groups": _groups(encoded.summary["diagnostics"], sources)}
    return Extraction(encoded.data, summary, {}, {**cache_counts, "memo": 0})


def _groups(diagnostics: list[dict[str, Any]], sources: Sequence[SourceTree]) -> list[dict[str, Any]]:
    """The diagnostics grouped for the reader (extractor.run.diagnosis), with the versions the
    sources pin for the fixes; not part of the memo: computed for each run."""
    pins = pinned_versions(s.root for s in sources)
    return [dataclasses.asdict(g) for g in group_diagnostics(diagnostics, pins)]


def _memo_key(name: str, version: str, sources: Sequence[SourceTree], blobs, diagnostics: list[Diagnostic],
              options: ExtractOptions) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([name, version, [s.record() for s in sources]], sort_keys=True).encode())
    for _source, entry, _data, key in blobs:
        h.update(f"{entry.path}\0{key}\n".encode())
    for d in sorted(diagnostics):
        h.update(d.render().encode())
    h.update(manifests_digest((s.label, s.root) for s in sources).encode())
    for binary in options.binaries:
        try:
            h.update(hashlib.sha256(Path(binary).read_bytes()).digest())
        except OSError:
            h.update(f"unreadable:{binary}".encode())
    # A user's taxonomy or detector file is an input by its content, not its name.
    for key, value in sorted(options.extra.items()):
        if isinstance(value, str) and Path(value).is_file():
            h.update(f"{key}:".encode() + hashlib.sha256(Path(value).read_bytes()).digest())
    # Struct probes depend on which compilers are installed, so those are inputs too.
    compilers = [shutil.which(c) or "" for c in ("gcc", "g++", "nvcc", "protoc")]
    h.update(json.dumps([options.probe_structs, compilers, dict(options.extra), options.build.fingerprint],
                        sort_keys=True, default=str).encode())
    return "bundle:" + h.hexdigest()


def fact_key(data: bytes, language: str, fingerprint: str) -> str:
    """A file's key in the fact cache: its content, its language and the scanners' fingerprint."""
    return f"{hashlib.sha256(data).hexdigest()}:{language}:{fingerprint}"


def _read(entries, steps: Sequence[Step], progress: Progress | None = None, unpacking: dict[str, Unpacking] | None = None
          ) -> tuple[list[tuple[Any, Any, bytes, str]], list[Diagnostic]]:
    """Read every file and compute its cache key (content hash, language, scanner fingerprint);
    the files of a tree still being written, from memory."""
    fingerprint = code_fingerprint(steps)
    diagnostics: list[Diagnostic] = []
    blobs: list[tuple[Any, Any, bytes, str]] = []
    for i, (source, entry) in enumerate(entries, 1):
        if progress is not None and i % _READ_TICK == 0:
            progress.advance(_READ_TICK)
        being_written = unpacking.get(source.label) if unpacking else None
        if being_written is not None:
            blobs.append((source, entry, data := being_written.read(entry.rel),
                          fact_key(data, entry.language.value, fingerprint)))
            continue
        try:
            data = read_regular_file(source.root / entry.rel, file_limit(entry.language))
        except OSError as err:
            # strerror only: str(err) would carry the absolute path of the user's machine
            diagnostics.append(Diagnostic(entry.path, 0, "unreadable", err.strerror or type(err).__name__,
                                          Severity.ERROR))
            continue
        key = fact_key(data, entry.language.value, fingerprint)
        blobs.append((source, entry, data, key))
    return blobs, diagnostics


_READ_TICK = 100  # files read between two progress ticks
# Results put into the fact cache this many at a time while the pool is still working, so that
# compressing and storing them overlaps the parse instead of following it.
_CACHE_BATCH = 256


class _Preparation:
    """The steps' ``prepare`` (work that needs only the options: vLLM's taxonomy and detectors
    parsed and indexed, 0.1 s), done by a thread while the pool scans and the driver mostly waits
    for results: each step's extract then finds it in its caches. Started once the pool works
    (its workers are forked by then; one that replaces a crashed worker may be forked with this
    thread alive, as with the progress line's, and only runs scanners); joined before the steps.
    A failure is left to the step, which does the same work again and reports it as a run does."""

    def __init__(self, steps: Sequence[Step], options: ExtractOptions) -> None:
        self._calls = [step.prepare for step in steps if step.prepare is not None]
        self._options = options
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None and self._calls:
            self._thread = threading.Thread(target=self._run, name="archdiff-prepare", daemon=True)
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        for call in self._calls:
            with contextlib.suppress(Exception):  # the step meets it again, where errors are reported
                call(self._options)


def _decoded(result: FileResult, decoders: dict[str, Any]) -> FileFacts:
    facts = FileFacts(result.facts, decoders)
    facts.decode_all()
    return facts


def _scan(blobs, steps: tuple[Step, ...], options: ExtractOptions, cache: FactStore, progress: Progress,
          executor: Workplace = HERE, log: RunLog | None = None
          ) -> tuple[tuple[SourceFile, ...], dict[str, int], list[Diagnostic]]:
    log = log or RunLog(options.jobs, executor.name)
    diagnostics: list[Diagnostic] = []
    cached: dict[str, FileResult] = {}
    for key, value in cache.get_many([b[3] for b in blobs]).items():
        try:
            cached[key] = decode_result(value)
        except ValueError:
            continue  # an entry of another shape: scanned again and rewritten
    missing = [b for b in blobs if b[3] not in cached]
    items = [(b[1].language.value, b[2]) for b in missing]
    decoders = fact_decoders(steps)
    # Each step's facts decoded ahead, while the pool still parses: the driver waits for results
    # anyway, and decoding vLLM's facts is half a second of serial time after the pool otherwise.
    # Cached files' facts are decoded between results too, a share per result.
    ready: dict[str, FileFacts] = {}
    language_of = {b[3]: b[1].language for b in blobs}
    # files whose content another file has too: the second gets its own FileFacts from the result
    shared = {key for key, count in Counter(b[3] for b in blobs).items() if count > 1}
    ahead = iter(list(cached.items()))
    share = -(-len(cached) // len(items)) if items else 0
    fresh: dict[str, FileResult] = {}
    if items:
        progress.phase("scan", len(items))
        log.scan.bytes_sent = sum(len(data) for _language, data in items)
        received = 0
        pending: dict[str, bytes] = {}
        preparation = _Preparation(steps, options)
        started = time.perf_counter()
        for blob, value in zip(missing, executor.scan_files(items, steps, options.jobs, progress.advance)):
            preparation.start()  # the pool works: a first result is back
            received += len(value)
            result = decode_result(value)
            # A file whose worker crashed or timed out is tried again next run, never served from the cache.
            if not result.transient:
                pending[blob[3]] = value
            if len(pending) >= _CACHE_BATCH:
                cache.put_many(pending)
                pending = {}
            ready[blob[3]] = _decoded(result, decoders.get(blob[1].language, {}))
            fresh[blob[3]] = result if blob[3] in shared else result.without_facts()
            for key, done in itertools.islice(ahead, share):
                ready[key] = _decoded(done, decoders.get(language_of[key], {}))
                if key not in shared:
                    cached[key] = done.without_facts()
        log.scan.pool_wall_s = time.perf_counter() - started
        log.scan.bytes_received = received
        cache.put_many(pending)
        preparation.join()
    log.scan.parsed, log.scan.cached = len(fresh), len(cached)
    files = []
    for source, entry, data, key in blobs:
        result = cached.get(key) or fresh[key]
        for line, code, message, severity in result.diagnostics:
            diagnostics.append(Diagnostic(entry.path, line, code, message, Severity(severity)))
        # one FileFacts per file: two files of the same content do not share decoded values
        facts = ready.pop(key, None) or FileFacts(result.facts, decoders.get(entry.language, {}))
        files.append(SourceFile(entry.path, entry.rel, source.label, entry.language, key.split(":", 1)[0],
                                len(data), facts, result.lines))
    return naming.with_module_names(files), {"hits": len(cached), "misses": len(fresh)}, diagnostics
