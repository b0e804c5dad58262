"""Where the pipeline's per-file work runs and where its facts are kept: the two things
:func:`extractor.run.pipeline.extract_system` asks of a place to work (:class:`Workplace`), and
this machine's (:class:`LocalWorkplace`: a guarded process pool and ``CACHE/facts.sqlite``).

Whole extractions over many systems, and Ray, sit a floor above (:mod:`extractor.run.executor`):
the pipeline knows only this protocol, so it never imports what runs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from extractor.model import Step
from extractor.run.cache import FactCache
from extractor.support.forkmap import fork_ahead


class FactStore(Protocol):
    def get_many(self, keys: list[str]) -> dict[str, bytes]: ...

    def put_many(self, items: dict[str, bytes]) -> None: ...

    def get_bytes(self, key: str) -> bytes | None: ...

    def put_compressed(self, key: str, compressed: bytes) -> None: ...  # zlib data, read back by get_bytes

    def get_json(self, key: str) -> Any: ...

    def put_json(self, key: str, value: Any) -> None: ...

    def close(self) -> None: ...


class HeldWrites:
    """A fact store whose writes wait for :meth:`release`; look-ups go through. The scan stores
    through it while a source's tree is still being written (extractor.acquire.archives): a disk
    too full for the tree is then reported as that, alone, and not after a cache that gave itself
    up on the same disk, as when the tree was written before the scan."""

    def __init__(self, store: FactStore) -> None:
        self._store = store
        self._held: dict[str, bytes] = {}

    def release(self) -> None:
        held, self._held = self._held, {}
        self._store.put_many(held)

    def release_beside(self, jobs: int) -> Callable[[], None]:
        """:meth:`release` in a forked child while the driver goes on with the steps
        (:func:`extractor.support.forkmap.fork_ahead`: with one job, in the driver when joined),
        into a store that child opens on its own (a :class:`FactCache` on a file; any other store
        is written now). The function returned joins it: call it before the store is written
        again. The child's connection is its own (a SQLite connection does not cross a fork), and
        the file's WAL lets it write beside the driver's readers; a problem it met turns the
        driver's store off too, said once, by the driver. On vLLM's first run the write is 2,629
        facts, 42 MB: 0.045 s the driver spent between the scan and the steps."""
        store = self._store
        if not isinstance(store, FactCache) or store.path is None or not self._held:
            self.release()
            return lambda: None
        held, self._held = self._held, {}
        writing = fork_ahead(functools.partial(_put_held, store.path, held), jobs)
        joined: list[bool] = []

        def join() -> None:
            if not joined:
                joined.append(True)
                problem = writing.result()
                if problem:
                    store.give_up(problem)
        return join

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        return self._store.get_many(keys)

    def put_many(self, items: dict[str, bytes]) -> None:
        self._held.update(items)

    def get_bytes(self, key: str) -> bytes | None:
        return self._store.get_bytes(key)

    def put_compressed(self, key: str, compressed: bytes) -> None:
        raise AssertionError("only the scan's facts are held")

    def get_json(self, key: str) -> Any:
        return self._store.get_json(key)

    def put_json(self, key: str, value: Any) -> None:
        raise AssertionError("only the scan's facts are held")

    def close(self) -> None:
        self._store.close()


def _put_held(path: Path, held: dict[str, bytes]) -> str:
    """``held`` written into the cache at ``path`` by a connection of this process's own: what
    went wrong ("" when nothing did)."""
    cache = FactCache(path, quiet=True)
    try:
        cache.put_many(held)
        return cache.problem
    finally:
        cache.close()


class Workplace(Protocol):
    """What the pipeline needs of where it runs: files scanned (results in input order) and a fact store."""

    name: str

    def scan_files(self, items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...], jobs: int,
                   progress: Callable[[int], None] | None = None) -> Iterator[bytes]: ...

    def open_store(self, cache_dir: Path) -> FactStore: ...


class LocalWorkplace:
    """This machine: files scanned in a process pool of ``jobs`` workers, facts in ``CACHE/facts.sqlite``."""

    name = "local"

    def scan_files(self, items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...], jobs: int,
                   progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
        from extractor.run.scan import scan_files

        return scan_files(items, steps, jobs, progress, plain_too=True)

    def open_store(self, cache_dir: Path) -> FactCache:
        return FactCache(cache_dir / "facts.sqlite")


HERE = LocalWorkplace()
