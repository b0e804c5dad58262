"""Ray as the distributed engine: each extraction, and the per-file scanning inside it, as Ray tasks.

The only module that imports Ray (``pip install 'archdiff[ray]'``); it is imported when
``--executor ray`` is asked for, never otherwise. Ray's own failures are translated here.

What runs where:

- **An extraction** (one release, one system: acquire, read, scan, every step, the bundle) is one
  task, so releases run side by side on as many nodes as the cluster has. Sources are fetched into
  the cache directory *of the node the task runs on* (the same path as the driver's; on a local
  runtime it is the driver's own directory), as are the struct probes' results.
- **Scanning the files of one system** is split into tasks of up to :data:`CHUNK_FILES` files
  (``extractor.run.scan.scan_files`` on each chunk, with one worker), submitted from the extraction
  task and gathered in input order.
- **Per-file facts and whole-bundle memos** live in one place, the driver's cache
  (``CACHE/facts.sqlite``): a small actor on the driver's node holds it, every task looks facts up
  there and sends what it computed back to it, so the next release, wherever it runs, re-scans only
  the files that changed. Releases extracted side by side do not parse their shared files twice:
  the first task to miss a file claims it, the others wait for its result (``_StoreActor``).
  (With ``ray://`` the driver is a Ray Client: the actor, and so the fact cache, is on the
  cluster's head node, at the ``--cache-dir`` path.)

Evidence is the same bytes as the local executor's: the same pure functions run on the same bytes,
and results are gathered in input order. A chunk whose task dies (a parser crashing its worker)
is retried file by file; a file whose own task dies is a ``parser-crashed`` diagnostic of that file,
not cached, and the run goes on, as with the local process pool.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from extractor.run.cache import FactCache
from extractor.context import ExtractOptions
from extractor.errors import ArchdiffError, UserInputError
from extractor.run.pipeline import ExtractionJob
from extractor.model import Step

CHUNK_FILES = 64  # files per scanning task at most: big enough to amortise a task (~1 ms), small enough to balance
_TASKS_PER_CPU = 4  # chunks per CPU of the cluster, so that one slow chunk does not hold the run up
CLAIM_SECONDS = 1800.0  # a file claimed longer ago by a task that never published it is taken over
_POLL_SECONDS = 5.0  # a waiting task re-reads the cache at least this often


def _ray():
    try:
        import ray
    except ImportError:
        raise UserInputError("--executor ray needs Ray, which is not installed: pip install 'archdiff[ray]'") from None
    return ray


class RayExecutor:
    """Connects to Ray (``address`` ``None``: a local runtime, or the cluster ``RAY_ADDRESS`` names;
    ``ray://HOST:PORT``: a cluster through Ray Client). A runtime this executor started is shut down
    by :meth:`close`; one that was already running (``ray.init`` by the caller) is left alone."""

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        ray = _ray()
        self._owned = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "logging_level": logging.ERROR, "configure_logging": True}
            try:
                if address:
                    ray.init(address=address, **kwargs)
                elif os.environ.get("RAY_ADDRESS"):
                    ray.init(**kwargs)  # the cluster RAY_ADDRESS names, with its own CPUs
                else:
                    ray.init(num_cpus=num_cpus, **kwargs)
            except Exception as err:  # noqa: BLE001 (Ray's failures to start or connect, as one line)
                where = address or os.environ.get("RAY_ADDRESS") or "a local runtime"
                raise UserInputError(f"cannot start or reach Ray ({where}): {_first_line(err)}") from None
            self._owned = True
        self.address = address or "local"

    # -- the pipeline's side: scanning on the cluster, facts in the driver's cache ---------------

    def scan_files(self, items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...], jobs: int,
                   progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
        return scan_remote(items, steps, progress)

    def open_store(self, cache_dir: Path) -> FactCache:
        return FactCache(cache_dir / "facts.sqlite")

    # -- many extractions at once ----------------------------------------------------------------

    def extract_many(self, jobs: Sequence[ExtractionJob], options: ExtractOptions) -> Generator[Any, None, None]:
        """Each job's :class:`extractor.run.pipeline.Extraction`, in the order of ``jobs``, the jobs
        running as Ray tasks side by side."""
        from extractor.run.pipeline import Extraction
        from extractor.acquire.sources import default_cache_dir

        if not jobs:
            return
        ray = _ray()
        # absolute: a task's working directory is not the driver's
        cache_dir = Path(os.path.abspath(options.cache_dir or default_cache_dir()))
        store = _start_store(ray, cache_dir / "facts.sqlite")
        remote_options = dataclasses.replace(options, cache_dir=cache_dir, extra=dict(options.extra))
        task = ray.remote(_extract_task).options(num_cpus=1, max_retries=0)
        try:
            refs = [task.remote(job, remote_options, store) for job in jobs]
            for ref in refs:
                data, summary, timings, cache = _get(ray, ref)
                yield Extraction(data, summary, timings, cache)
        finally:
            ray.kill(store)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over ``items`` as Ray tasks, results in input order. Items are taken from the
        iterable only as tasks are submitted, at most :data:`_TASKS_PER_CPU` per CPU in flight, so
        large items (two evidence bundles) are not all held at once."""
        ray = _ray()
        task = ray.remote(fn).options(num_cpus=1, max_retries=0)
        window = max(1, int(ray.cluster_resources().get("CPU", 1))) * _TASKS_PER_CPU
        in_flight: collections.deque = collections.deque()
        for item in items:
            in_flight.append(task.remote(item))
            if len(in_flight) >= window:
                yield _get(ray, in_flight.popleft())
        while in_flight:
            yield _get(ray, in_flight.popleft())

    def close(self) -> None:
        if self._owned:
            ray = _ray()
            ray.shutdown()
            self._owned = False


# -- on the cluster ------------------------------------------------------------------------------


class _StoreActor:
    """The driver's fact cache, served to every task of the run, and who is computing what.

    Releases extracted side by side share most of their files. A task that looks a file up and
    misses claims it; a later task missing the same file does not scan it again but waits for the
    claimant's result (:meth:`wait_for`), so each file's content is parsed once per run wherever it
    occurs, as on one machine. A claim ends when its claimant publishes or gives up (``release``),
    or after :data:`CLAIM_SECONDS` (a claimant that died): a waiter then takes the file over.
    Asynchronous, so waiting never blocks lookups; SQLite is only touched from the actor's loop."""

    def __init__(self, path: str) -> None:
        self._cache = FactCache(Path(path))
        self._claims: dict[str, tuple[str, float]] = {}  # key -> (claimant, since)
        self._changed: asyncio.Condition | None = None

    def _claimable(self, key: str, claimant: str) -> bool:
        owner = self._claims.get(key)
        return owner is None or owner[0] == claimant or time.monotonic() - owner[1] > CLAIM_SECONDS

    async def lookup(self, keys: list[str], claimant: str) -> tuple[dict[str, bytes], list[str]]:
        """(cached facts, keys another task is computing); the other missing keys are now the caller's."""
        found = self._cache.get_many(keys)
        pending = []
        for key in keys:
            if key in found:
                continue
            if self._claimable(key, claimant):
                self._claims[key] = (claimant, time.monotonic())
            else:
                pending.append(key)
        return found, pending

    async def wait_for(self, keys: list[str], claimant: str) -> tuple[dict[str, bytes], list[str]]:
        """(facts of ``keys`` once their claimants published them, keys to compute after all)."""
        if self._changed is None:
            self._changed = asyncio.Condition()
        remaining, found, mine = list(keys), {}, []
        while remaining:
            found.update(self._cache.get_many(remaining))
            waiting = []
            for key in remaining:
                if key in found:
                    continue
                if self._claimable(key, claimant):  # released without a result (a crash), or abandoned
                    self._claims[key] = (claimant, time.monotonic())
                    mine.append(key)
                else:
                    waiting.append(key)
            remaining = waiting
            if remaining:
                async with self._changed:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), timeout=_POLL_SECONDS)
        return found, mine

    async def publish(self, items: dict[str, bytes], claimant: str) -> None:
        self._cache.put_many(items)
        await self.release(claimant)

    async def release(self, claimant: str) -> None:
        for key in [k for k, (owner, _since) in self._claims.items() if owner == claimant]:
            del self._claims[key]
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            self._changed.notify_all()

    async def get_bytes(self, key: str) -> bytes | None:
        return self._cache.get_bytes(key)

    async def put_compressed(self, key: str, compressed: bytes) -> None:
        self._cache.put_compressed(key, compressed)

    async def get_json(self, key: str) -> Any:
        return self._cache.get_json(key)

    async def put_json(self, key: str, value: Any) -> None:
        self._cache.put_json(key, value)


def _start_store(ray, path: Path):
    strategy = None
    try:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        strategy = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    except Exception:  # noqa: BLE001 (Ray Client has no node of its own: the head takes the actor)
        strategy = None
    actor = ray.remote(_StoreActor).options(num_cpus=0, scheduling_strategy=strategy)
    return actor.remote(str(path))


class _TaskSide:
    """The executor an extraction task hands its pipeline: files scanned as further tasks, facts in
    the driver's store. Its store (``open_store``) answers the pipeline's look-up with what is cached
    and claims the rest; ``scan_files`` then scans the files this task claimed and waits for those
    another task is scanning, and ``put_many`` publishes what this task computed."""

    name = "ray"

    def __init__(self, store) -> None:
        self._store = store
        self._claimant = uuid.uuid4().hex
        self._pending: set[str] = set()
        self.scanned: set[str] = set()  # keys this task scanned itself
        self.shared: set[str] = set()  # keys another task of the run scanned for it

    # the pipeline's store
    def open_store(self, cache_dir: Path) -> _TaskSide:
        return self

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        found, pending = _get(_ray(), self._store.lookup.remote(keys, self._claimant))
        self._pending = set(pending)
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        _get(_ray(), self._store.publish.remote(dict(items), self._claimant))

    def get_bytes(self, key: str) -> bytes | None:
        return _get(_ray(), self._store.get_bytes.remote(key))

    def put_compressed(self, key: str, compressed: bytes) -> None:
        _get(_ray(), self._store.put_compressed.remote(key, compressed))

    def get_json(self, key: str) -> Any:
        return _get(_ray(), self._store.get_json.remote(key))

    def put_json(self, key: str, value: Any) -> None:
        _get(_ray(), self._store.put_json.remote(key, value))

    def close(self) -> None:
        _get(_ray(), self._store.release.remote(self._claimant))  # claims on files that gave no result

    # the pipeline's scanner
    def scan_files(self, items, steps, jobs, progress=None):
        from extractor.run.cache import code_fingerprint
        from extractor.run.compute import fact_key

        fingerprint = code_fingerprint(steps)
        keys = [fact_key(data, language, fingerprint) for language, data in items]
        results: dict[int, bytes] = {}
        mine = [i for i, key in enumerate(keys) if key not in self._pending]
        results.update(zip(mine, scan_remote([items[i] for i in mine], steps, progress)))
        self.scanned.update(keys[i] for i in mine)
        waited = [i for i, key in enumerate(keys) if key in self._pending]
        if waited:
            found, after_all = _get(_ray(), self._store.wait_for.remote([keys[i] for i in waited], self._claimant))
            results.update((i, found[keys[i]]) for i in waited if keys[i] in found)
            if progress:
                progress(len(found))
            redo = [i for i in waited if keys[i] in set(after_all)]
            results.update(zip(redo, scan_remote([items[i] for i in redo], steps, progress)))
            self.scanned.update(keys[i] for i in redo)
            self.shared.update(found)
        return iter([results[i] for i in range(len(items))])


def _extract_task(job: ExtractionJob, options: ExtractOptions,
                  store) -> tuple[bytes, dict[str, Any], dict[str, float], dict[str, int]]:
    from extractor.run.memo import keep_unwritten
    from extractor.run.pipeline import extract_system

    side = _TaskSide(store)
    result = extract_system(job.specs, name=job.name, version=job.version, options=options, executor=side)
    keep_unwritten()  # its evidence.json is written by the driver, elsewhere: the memo file from the bytes
    cache = dict(result.cache)
    if not cache.get("memo"):  # "misses" are the files this task parsed; "shared" a concurrent task parsed
        cache.update(misses=len(side.scanned), shared=len(side.shared))
    return result.data, result.summary, result.timings, cache


def _scan_chunk(items: list[tuple[str, bytes]], steps: tuple[Step, ...]) -> list[bytes]:
    from extractor.run.scan import scan_files

    return list(scan_files(items, steps, 1))


def scan_remote(items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...],
                progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """Scan ``(language, data)`` items as Ray tasks; results in input order."""
    if not items:
        return
    ray = _ray()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = max(1, min(CHUNK_FILES, -(-len(items) // (cpus * _TASKS_PER_CPU))))
    chunks = [list(items[i:i + size]) for i in range(0, len(items), size)]
    steps_ref = ray.put(steps)
    task = ray.remote(_scan_chunk).options(num_cpus=1, max_retries=0)
    refs = [task.remote(chunk, steps_ref) for chunk in chunks]
    for chunk, ref in zip(chunks, refs):
        try:
            results = _get(ray, ref)
        except _WorkerDied:
            results = [_scan_alone(ray, task, item, steps_ref) for item in chunk]
        for result in results:
            yield result
            if progress:
                progress(1)


def _scan_alone(ray, task, item: tuple[str, bytes], steps_ref) -> bytes:
    try:
        return _get(ray, task.remote([item], steps_ref))[0]
    except _WorkerDied as died:
        from extractor.run.scan import failed_result

        return failed_result(item[1], "parser-crashed",
                             f"the parser process died ({died.reason}) on this file: not analysed")


class _WorkerDied(Exception):
    """The process running a task died (a crash, or killed for memory): the input it held is the suspect."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _get(ray, ref) -> Any:
    """``ray.get``, with archdiff's own errors raised as themselves, a dead worker as
    :class:`_WorkerDied`, and Ray's other failures as one line."""
    try:
        return ray.get(ref)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError) as err:
        raise _WorkerDied(type(err).__name__) from None
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, ArchdiffError):
            raise cause from None
        raise ArchdiffError(f"a Ray task failed: {_first_line(cause or err)}") from None
    except ray.exceptions.RayError as err:
        raise ArchdiffError(f"Ray failed: {_first_line(err)}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0] if text else type(err).__name__
