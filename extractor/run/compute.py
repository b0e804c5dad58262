"""A run's work once the memo has no bundle for its inputs: read every file, scan it (or take its
facts from the cache), run every step, encode the bundle and keep it in the memo.

Imported by the pipeline only then: the scanners, the steps and the evidence codec are a tenth of
a second of imports, as long as the whole of a warm run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import itertools
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from extractor import naming
from extractor.acquire.archives import Unpacking
from extractor.acquire.inventory import InventoryEntry, file_limit, read_regular_file
from extractor.acquire.stamps import TreeStamps, stamp_of
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.evidence.write import encode_bundle
from extractor.model import Contribution, Diagnostic, Language, Severity, Step
from extractor.run import memo
from extractor.run.background import Background
from extractor.run.cache import code_fingerprint
from extractor.run.extraction import Extraction
from extractor.run.facts import FileFacts, FileResult, decode_result, fact_decoders, stored_form
from extractor.run.progress import Progress
from extractor.run.runlog import RunLog, RunLogged
from extractor.run.workplace import HERE, FactStore, HeldWrites, Workplace
from extractor.steps import STEPS
from extractor.support.forkmap import Ahead, fork_ahead, fork_map, spans
from extractor.acquire.sources import wait_unpacked


@dataclasses.dataclass(frozen=True, slots=True)
class Inputs:
    """What the pipeline found before the memo: the system, its listed files, the options."""

    name: str
    version: str
    sources: tuple[SourceTree, ...]
    entries: tuple[tuple[SourceTree, InventoryEntry], ...]
    unpacking: dict[str, Unpacking]  # by label, the trees a writer is still writing
    diagnostics: tuple[Diagnostic, ...]  # the inventory's
    options: ExtractOptions
    cache_dir: Path
    stamps: dict[str, TreeStamps]  # by label, for the trees on disk
    looked_up: str  # the memo key already looked up from the stamps, "" if none


def compute(inputs: Inputs, steps: tuple[Step, ...] | None, progress: Progress, executor: Workplace, log: RunLog,
            keep: list[object] | None) -> Extraction:
    """Read the files, and serve the memo if their contents make a key the stamps could not; else
    scan, run every step, encode the bundle and remember it."""
    code = memo.code_identity(steps)
    steps = STEPS if steps is None else steps
    progress.plan(["acquire", "inventory", "read", "scan", *(s.name for s in steps), "bundle"])
    progress.phase("read", len(inputs.entries))
    with log.phase("read"):
        blobs, read_diagnostics = _read(inputs.entries, steps, progress, inputs.unpacking, inputs.stamps,
                                        inputs.options.jobs)
    log.scan.files = len(blobs)
    diagnostics = [*inputs.diagnostics, *read_diagnostics]
    store = executor.open_store(inputs.cache_dir)
    held_written: Callable[[], None] = lambda: None  # noqa: E731 (joins the held facts' writer, when there is one)
    try:
        with log.phase("memo"):
            memo_key = "" if inputs.unpacking else _memo_key(inputs, blobs, diagnostics, code)
            served = memo.serve(inputs.cache_dir, memo_key, store, inputs.sources, len(blobs)) \
                if memo_key and memo_key != inputs.looked_up else None
        if served is not None:
            # Every input is unchanged (files, names, options, scanners, compilers): the evidence
            # is the one already computed for them, byte for byte.
            log.memo = True
            log.scan.cached = len(blobs)
            log.bundle_bytes = len(served.evidence)
            return served
        scan_store = HeldWrites(store) if inputs.unpacking else store
        with log.phase("scan"):
            files, cache_counts, scan_diagnostics, done_ahead = _scan(blobs, steps, inputs.options, scan_store,
                                                                      progress, executor, log)
            diagnostics.extend(scan_diagnostics)
        unpacked: list[tuple[str, str, str]] = []
        if isinstance(scan_store, HeldWrites):
            with log.phase("unpack"):  # the steps read the trees (manifests, headers): written by now
                for being_written in inputs.unpacking.values():
                    wait_unpacked(being_written, inputs.cache_dir)
                unpacked_at = time.time_ns()
                unpacked = [(source.label, entry.rel, key.split(":", 1)[0]) for source, entry, _data, key in blobs
                            if source.label in inputs.unpacking]
                held_written = scan_store.release_beside(inputs.options.jobs)  # written beside the steps
                memo_key = _memo_key(inputs, blobs, [*inputs.diagnostics, *read_diagnostics], code)

        # Every file's facts are decoded: the steps never read the bytes again (probes and manifests
        # read the tree), so they are let go before the steps run (119 MB on torch's wheel tree).
        del blobs
        ctx = Context(inputs.name, inputs.version, inputs.sources, files, inputs.options, done_ahead=done_ahead)
        if keep is not None:
            keep.append(ctx)  # its files' facts and every step's results
        _run_steps(ctx, steps, progress, log)
        progress.phase("bundle")
        with log.phase("bundle"):
            encoded = encode_bundle(ctx, steps, diagnostics)
            log.bundle_bytes = len(encoded.data)
        summary = {**encoded.summary, "groups": memo.groups(encoded.summary["diagnostics"], inputs.sources,
                                                                 inputs.options.build.headers_from)}
        with log.phase("memo"):
            held_written()
            written = memo.remember(inputs.cache_dir, memo_key, store, encoded.data, encoded.compressed, summary)
            if unpacked:
                _stamp_unpacked(inputs, unpacked, unpacked_at)
    finally:
        held_written()  # a step raised: the writer is still joined, its problem said
        store.close()
    return Extraction(encoded.data, summary, {}, {**cache_counts, "memo": 0}, written=written)


def _stamp_unpacked(inputs: Inputs, unpacked: list[tuple[str, str, str]], finished_ns: int) -> None:
    """The stamps of the trees this run unpacked (an sdist's first run), taken now, at the run's
    end, with the digests of the bytes the unpacker wrote: the next run then needs to read none
    of them (extractor.acquire.stamps.TreeStamps.record_written)."""
    roots = {s.label: s.root for s in inputs.sources}
    trees = {label: TreeStamps.load(inputs.cache_dir, root) for label, root in roots.items() if label in inputs.unpacking}
    for label, rel, digest in unpacked:
        try:
            info = os.lstat(roots[label] / rel)
        except OSError:
            continue
        trees[label].record_written(rel, stamp_of(info), digest, finished_ns)
    for tree in trees.values():
        tree.save()


def _memo_key(inputs: Inputs, blobs: list[tuple[Any, Any, bytes, str]], diagnostics: list[Diagnostic],
              code: str) -> str:
    """The memo's key from the files as read: each one's ``sha256:language`` (its fact key without
    the scanners' fingerprint, which ``code`` covers)."""
    files = ((entry.path, key.rsplit(":", 1)[0]) for _source, entry, _data, key in blobs)
    return memo.memo_key(inputs.name, inputs.version, inputs.sources, files, diagnostics, inputs.options, code)


def fact_key(data: bytes, language: str, fingerprint: str) -> str:
    """A file's key in the fact cache: its content, its language and the scanners' fingerprint."""
    return _fact_key(hashlib.sha256(data).hexdigest(), language, fingerprint)


def _fact_key(digest: str, language: str, fingerprint: str) -> str:
    return f"{digest}:{language}:{fingerprint}"


def _read(entries, steps: Sequence[Step], progress: Progress | None = None, unpacking: dict[str, Unpacking] | None = None,
          stamps: dict[str, TreeStamps] | None = None, jobs: int = 1
          ) -> tuple[list[tuple[Any, Any, bytes, str]], list[Diagnostic]]:
    """Read every file and compute its cache key (content hash, language, scanner fingerprint);
    the files of a tree still being written, from memory. Each file's digest is recorded with the
    stamp the inventory took (``stamps``), so that the next run need not read it to know it."""
    fingerprint = code_fingerprint(steps)
    diagnostics: list[Diagnostic] = []
    read: list[tuple[Any, Any, bytes, bool]] = []  # (source, entry, bytes, whether read from memory)
    for i, (source, entry) in enumerate(entries, 1):
        if progress is not None and i % _READ_TICK == 0:
            progress.advance(_READ_TICK)
        being_written = unpacking.get(source.label) if unpacking else None
        if being_written is not None:
            data = being_written.read(entry.rel)
        else:
            try:
                data = read_regular_file(source.root / entry.rel, file_limit(entry.language))
            except OSError as err:
                # strerror only: str(err) would carry the absolute path of the user's machine
                diagnostics.append(Diagnostic(entry.path, 0, "unreadable", err.strerror or type(err).__name__,
                                              Severity.ERROR))
                continue
        read.append((source, entry, data, being_written is not None))
    blobs: list[tuple[Any, Any, bytes, str]] = []
    for (source, entry, data, in_memory), digest in zip(read, _digests([r[2] for r in read], jobs)):
        if not in_memory and stamps is not None:
            stamps[source.label].record(entry.rel, entry.stamp, digest)
        blobs.append((source, entry, data, _fact_key(digest, entry.language.value, fingerprint)))
    for tree in (stamps or {}).values():
        tree.save()
    return blobs, diagnostics


# Below this many bytes the files are hashed here: forking children costs the driver more than
# SHA-256 at about 1.5 GB/s saves it (a few milliseconds each, more on a loaded machine).
_FORK_DIGESTS_FROM = 8 << 20


def _digests(datas: list[bytes], jobs: int, fork_from: int = _FORK_DIGESTS_FROM) -> list[str]:
    """Each file's SHA-256, hex, by spans in up to ``jobs`` forked children that inherit the bytes
    (extractor.support.forkmap; only the digests come back) once they are ``fork_from`` bytes or
    more: vLLM's sdist is 40 MB of files, 0.04 s of the driver's before the scan, the torch wheel
    tree 119 MB."""
    def digest(span: range) -> list[str]:
        return [hashlib.sha256(datas[i]).hexdigest() for i in span]
    if sum(map(len, datas)) < fork_from:
        jobs = 1
    return [found for part in fork_map(digest, spans(len(datas), 2 * jobs), jobs) for found in part]


_READ_TICK = 100  # files read between two progress ticks
# Results put into the fact cache this many at a time while the pool is still working, so that
# compressing and storing them overlaps the parse instead of following it.
_CACHE_BATCH = 256


def _run_steps(ctx: Context, steps: tuple[Step, ...], progress: Progress, log: RunLog) -> None:
    """Every step's ``extract``, its contribution put in ``ctx.results`` in the steps' order (the
    layers and the bundle read them in that order).

    A ``forkable`` step starts in a forked child (:func:`extractor.support.forkmap.fork_ahead`)
    as soon as the steps it requires are done, and runs beside the driver's own steps: on vLLM
    the C++ graph and the metrics (0.4 CPU s of the serial part) beside the Python graph. The
    driver reads every started step that comes before one of its own back first, so each step
    it runs sees the results a run in order would show it (``result_if_run`` included).

    A ``background`` step starts in a thread (:mod:`extractor.run.background`) as soon as the
    steps it requires are done or forked, with more than one job: on vLLM the struct probes'
    compilers beside the Python graph and every step after it. It is joined before the first
    step that requires it and before the bundle."""
    ahead: dict[int, Ahead[Contribution[Any]]] = {}
    behind: dict[int, Background] = {}
    try:
        for index, step in enumerate(steps):
            _join(ctx, steps, behind, [i for i in behind if steps[i] in step.requires], progress, log)
            _start_ready(ctx, steps, ahead, behind, log, step.name)
            if step.forkable:
                if index not in ahead and step.name not in ctx.results:
                    # what it requires is still in children: read back, then it starts
                    _read_back(ctx, steps, ahead, _before(ahead, index), progress, log)
                    _start_ready(ctx, steps, ahead, behind, log, step.name)
                continue
            if index in behind:
                continue  # runs beside the steps after it
            _read_back(ctx, steps, ahead, _before(ahead, index), progress, log)
            progress.phase(step.name)
            with log.phase(step.name):
                ctx.results[step.name] = step.extract(
                    ctx.view({r.name: ctx.result(r) for r in step.requires}) if step.background else ctx)
            _log_details(ctx, step, log)
        _read_back(ctx, steps, ahead, list(ahead), progress, log)
        _join(ctx, steps, behind, list(behind), progress, log)
        _in_steps_order(ctx.results, steps)
    finally:
        for child in ahead.values():  # a step raised: no child outlives the run
            child.cancel()


def _in_steps_order(results: dict[str, Contribution[Any]], steps: tuple[Step, ...]) -> None:
    """``results`` reordered as the steps run in order: a background step's came in when joined."""
    ordered = {step.name: results.pop(step.name) for step in steps if step.name in results}
    rest = dict(results)
    results.clear()
    results.update(ordered)
    results.update(rest)


def _start_ready(ctx: Context, steps: tuple[Step, ...], ahead: dict[int, Ahead[Contribution[Any]]],
                 behind: dict[int, Background], log: RunLog, turn: str) -> None:
    """Fork every ``forkable`` step not started yet whose required steps' results are in ``ctx``;
    then start every ``background`` step whose required steps are done or forked (at step ``turn``'s)."""
    for index, step in enumerate(steps):
        if step.forkable and index not in ahead and step.name not in ctx.results \
                and all(required.name in ctx.results for required in step.requires):
            with log.phase(step.name):  # the fork is the driver's CPU, in the step's phase
                ahead[index] = fork_ahead(functools.partial(step.extract, ctx), ctx.options.jobs)
    if ctx.options.jobs < 2:
        return  # one job: every step in its turn
    forked = {steps[i].name: started for i, started in ahead.items()}
    for index, step in enumerate(steps):
        if step.background and index not in behind and step.name not in ctx.results \
                and all(r.name in ctx.results or r.name in forked for r in step.requires):
            needs = {r.name: _in_hand(ctx.results[r.name]) if r.name in ctx.results
                     else functools.partial(forked[r.name].result, driver=False) for r in step.requires}
            ctx.running.add(step.name)
            behind[index] = Background(ctx, step, needs, during=turn)


def _in_hand(result: Contribution[Any]) -> Callable[[], Contribution[Any]]:
    return lambda: result


def _join(ctx: Context, steps: tuple[Step, ...], behind: dict[int, Background], which: list[int],
          progress: Progress, log: RunLog) -> None:
    """The background steps ``which``, their results put in ``ctx``: the driver waits for them in
    their own phases; the run log keeps each one's own clocks."""
    joined = {index: behind[index] for index in which}
    _read_back(ctx, steps, behind, which, progress, log)
    for index, running in joined.items():
        log.background[steps[index].name] = running.run_log()


def _before(ahead: dict[int, Ahead[Contribution[Any]]], end: int) -> list[int]:
    """The started steps that come before ``steps[end]``."""
    return [index for index in ahead if index < end]


def _read_back(ctx: Context, steps: tuple[Step, ...], started: dict[int, Ahead[Contribution[Any]]] | dict[int, Background],
               which: list[int], progress: Progress, log: RunLog) -> None:
    """The results of the started steps ``which`` (forked children or background threads), in
    the steps' order."""
    for index in sorted(which):
        step = steps[index]
        progress.phase(step.name)
        with log.phase(step.name):
            ctx.results[step.name] = started.pop(index).result()
        ctx.running.discard(step.name)
        _log_details(ctx, step, log)


def _log_details(ctx: Context, step: Step, log: RunLog) -> None:
    if isinstance(shared := ctx.results[step.name].shared, RunLogged):
        log.details[step.name] = shared.run_log()

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


def _decoded(result: FileResult, decoders: dict[str, Any], later: frozenset[str]) -> FileFacts:
    facts = FileFacts(result.facts, decoders)
    facts.decode_all(later)
    return facts


class _Ahead:
    """The steps' ``ahead`` work (extractor.model.Step), called on each file's decoded facts as
    the pool's results come in; what it returns, by step and path."""

    def __init__(self, steps: Sequence[Step], blobs: Sequence[Any]) -> None:
        self._calls = {step.name: step.ahead() for step in steps if step.ahead is not None}
        self.done: dict[str, dict[str, Any]] = {name: {} for name in self._calls}
        self._files: dict[str, tuple[str, str]] = {}  # content key -> (path, module) of one file holding it
        if self._calls:
            python = [SourceFile(entry.path, entry.rel, source.label, entry.language, "", 0, {})
                      for source, entry, _data, _key in blobs if entry.language is Language.PYTHON]
            names, _clashes = naming.module_names(python)
            for source, entry, _data, key in blobs:
                self._files.setdefault(key, (entry.path, names.get(entry.path, "")))

    def __call__(self, key: str, facts: FileFacts) -> None:
        if not self._calls:
            return
        path, module = self._files[key]
        for name, call in self._calls.items():
            found = facts.get(name)
            if found is not None:
                self.done[name][path] = call(path, module, found)


def _decoded_in_children(steps: Sequence[Step]) -> frozenset[str]:
    """The steps whose facts the driver leaves encoded: a ``forkable`` step reads its own facts
    in the child it runs in (with one job, in the driver, as part of that step), so decoding them
    with the scan's results is the driver's serial time spent for a copy it never reads (vLLM:
    the metrics' and the concepts' facts, 0.2 of the 0.5 s of decoding). Whoever else reads them
    decodes them on first use, with the same result."""
    return frozenset(step.name for step in steps if step.forkable)


def _scan(blobs, steps: tuple[Step, ...], options: ExtractOptions, cache: FactStore, progress: Progress,
          executor: Workplace = HERE, log: RunLog | None = None
          ) -> tuple[tuple[SourceFile, ...], dict[str, int], list[Diagnostic], dict[str, dict[str, Any]]]:
    log = log or RunLog(options.jobs, executor.name)
    diagnostics: list[Diagnostic] = []
    cached: dict[str, FileResult] = {}
    for key, value in cache.get_many([b[3] for b in blobs]).items():
        try:
            cached[key] = decode_result(value)
        except ValueError:
            continue  # an entry of another shape: scanned again and rewritten
    missing = [b for b in blobs if b[3] not in cached]
    # Largest first (ties in path order): the pool's last files are then small ones, and no
    # worker is left scanning a large file alone while the other cores wait for it.
    missing.sort(key=lambda b: len(b[2]), reverse=True)
    items = [(b[1].language.value, b[2]) for b in missing]
    decoders = fact_decoders(steps)
    later = _decoded_in_children(steps)
    # Each step's facts decoded ahead, while the pool still parses: the driver waits for results
    # anyway, and decoding vLLM's facts is half a second of serial time after the pool otherwise.
    # Cached files' facts are decoded between results too, a share per result. Not the facts of
    # steps that run in forked children (``later``): with many cores the driver's decoding, not
    # the workers, sets the pool's pace, and a child decodes them beside the driver's steps.
    ready: dict[str, FileFacts] = {}
    language_of = {b[3]: b[1].language for b in blobs}
    # files whose content another file has too: the second gets its own FileFacts from the result
    shared = {key for key, count in Counter(b[3] for b in blobs).items() if count > 1}
    cached_ahead = iter(list(cached.items()))
    share = -(-len(cached) // len(items)) if items else 0
    fresh: dict[str, FileResult] = {}
    ahead = _Ahead(steps, blobs) if items else _Ahead((), ())
    if items:
        progress.phase("scan", len(items))
        log.scan.bytes_sent = sum(len(data) for _language, data in items)
        received = 0
        pending: dict[str, bytes] = {}
        preparation = _Preparation(steps, options)
        started, cpu = time.perf_counter(), time.process_time()
        for blob, value in zip(missing, executor.scan_files(items, steps, options.jobs, progress.advance)):
            preparation.start()  # the pool works: a first result is back
            received += len(value)
            result = decode_result(value)
            # A file whose worker crashed or timed out is tried again next run, never served from the cache.
            if not result.transient:
                pending[blob[3]] = stored_form(value)
            if len(pending) >= _CACHE_BATCH:
                cache.put_many(pending)
                pending = {}
            ready[blob[3]] = _decoded(result, decoders.get(blob[1].language, {}), later)
            ahead(blob[3], ready[blob[3]])
            fresh[blob[3]] = result if blob[3] in shared else result.without_facts()
            for key, done in itertools.islice(cached_ahead, share):
                ready[key] = _decoded(done, decoders.get(language_of[key], {}), later)
                ahead(key, ready[key])
                if key not in shared:
                    cached[key] = done.without_facts()
        log.scan.pool_wall_s = time.perf_counter() - started
        log.scan.pool_cpu_s = time.process_time() - cpu
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
    return naming.with_module_names(files), {"hits": len(cached), "misses": len(fresh)}, diagnostics, ahead.done
