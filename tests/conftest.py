"""Shared fixtures. Real input (the vLLM sdists) is downloaded once into a cache that outlives
the test run: ``$ARCHDIFF_TEST_CACHE``, else ``$XDG_CACHE_HOME/archdiff-tests``, else
``~/.cache/archdiff-tests``.

The suite runs in parallel (pytest-xdist, ``-n auto --dist loadfile``): every worker is its own
process, so what they share on disk is guarded by file locks in the cache (``cache_lock``): a
download, or a cold extraction of the same tree, happens once while the other workers wait for it
and then read it from the cache. Which files share a worker process changes from run to run, so no
test may depend on what an earlier one left in the process (``_archdiff_logging_as_found``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def cache_root() -> Path:
    """Where downloads and the fact cache of real-input tests are kept between runs."""
    if os.environ.get("ARCHDIFF_TEST_CACHE"):
        path = Path(os.environ["ARCHDIFF_TEST_CACHE"])
    elif os.environ.get("XDG_CACHE_HOME"):
        path = Path(os.environ["XDG_CACHE_HOME"]) / "archdiff-tests"
    else:
        path = Path.home() / ".cache" / "archdiff-tests"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[Path]:
    """Hold the test cache's lock for ``name`` (one per download or shared extraction): a second
    xdist worker (or a second test run) asking for the same thing waits, then finds it done.
    Yields the cache root."""
    from extractor.support.locks import locked  # flock: released by the kernel if a worker dies

    root = cache_root()
    with locked(root / ".locks" / f"{name}.lock"):
        yield root


def sdist_root(name: str, version: str) -> Path:
    """The extracted sdist of ``name==version`` from the package index, cached between runs."""
    from extractor.acquire.sources import download_sdist  # the same code users run

    with cache_lock(f"sdist-{name}-{version}") as cache:
        target = cache / f"{name}-{version}"
        if not (target / "PKG-INFO").exists():
            archive = download_sdist(name, version, cache / "sdists")
            # unpacked beside the target and moved in whole: a run killed halfway leaves no tree
            # that has a PKG-INFO but lacks files
            staging = cache / f".{name}-{version}.partial"
            shutil.rmtree(staging, ignore_errors=True)
            with tarfile.open(archive) as tar:
                tar.extractall(staging, filter="data")
            (top,) = staging.iterdir()
            shutil.rmtree(target, ignore_errors=True)
            top.rename(target)
            staging.rmdir()
    return target


def extract_real(root: Path, **kwargs):
    """``extract_system([root], **kwargs)`` while holding the lock of ``root``'s tree: two workers
    extracting one real tree at once would both parse every file of a cold cache; one after the
    other, the second reads the first one's facts from the cache."""
    from extractor.run.pipeline import extract_system

    with cache_lock(f"extract-{root.name}"):
        return extract_system([str(root)], **kwargs)


class _FactsWithoutMemo:
    """A fact store that hands per-file facts through and keeps no whole-bundle memo."""

    def __init__(self, store) -> None:
        self._store = store

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        return self._store.get_many(keys)

    def put_many(self, items: dict[str, bytes]) -> None:
        self._store.put_many(items)

    def get_bytes(self, key: str) -> bytes | None:
        return None

    def put_compressed(self, key: str, compressed: bytes) -> None:
        pass

    def get_json(self, key: str):
        return None

    def put_json(self, key: str, value) -> None:
        pass

    def close(self) -> None:
        self._store.close()


class EveryStepWorkplace:
    """This machine's workplace (process pool, ``CACHE/facts.sqlite``), except that the whole-bundle
    memo is neither served nor stored: every step runs, from the per-file facts and probe results
    the cache holds. A test that needs a step's result, or a recomputed bundle, from the cache the
    other real tests share uses it instead of a cache of its own (a cold extraction more) or of
    deleting the shared memo (which the other tests would then recompute)."""

    name = "local"

    def scan_files(self, items, steps, jobs, progress=None):
        from extractor.run.workplace import HERE

        return HERE.scan_files(items, steps, jobs, progress)

    def open_store(self, cache_dir: Path) -> _FactsWithoutMemo:
        from extractor.run.workplace import HERE

        return _FactsWithoutMemo(HERE.open_store(cache_dir))


EVERY_STEP = EveryStepWorkplace()


def extract_real_with_context(root: Path, **kwargs):
    """``extract_real(root, **kwargs)`` with every step run (:data:`EVERY_STEP`), and the pipeline's
    Context once the last step has run: (extraction, context). The last step is wrapped to hand the
    context out under its own name and version, so the steps' fingerprint, hence the keys of the
    cached facts, are those of a plain extraction: a warm test cache serves every file."""
    import dataclasses

    from extractor.steps import STEPS

    captured = []
    last = STEPS[-1]

    def extract_and_capture(ctx):
        contribution = last.extract(ctx)
        captured.append(ctx)
        return contribution

    steps = (*STEPS[:-1], dataclasses.replace(last, extract=extract_and_capture))
    extraction = extract_real(root, steps=steps, executor=EVERY_STEP, **kwargs)
    (context,) = captured
    return extraction, context


def vllm_sdist_root(version: str) -> Path:
    """The extracted sdist of ``vllm==version`` from the package index, cached between runs."""
    return sdist_root("vllm", version)


@pytest.fixture(scope="session")
def vllm_src() -> Path:
    """Root of the real vLLM 0.10.2 sdist (``csrc/`` and ``vllm/`` inside)."""
    return vllm_sdist_root("0.10.2")


@pytest.fixture(scope="session")
def vllm_prev_src() -> Path:
    """Root of the real vLLM 0.10.1 sdist, for release-drift tests."""
    return vllm_sdist_root("0.10.1")


@pytest.fixture(autouse=True)
def _archdiff_logging_as_found() -> Iterator[None]:
    """The CLI, run in-process by some tests (click's CliRunner), sends the ``archdiff`` logger to
    stderr and stops it propagating, for the rest of the process; a test run after it in the same
    xdist worker would then see no record in ``caplog``. Each test gets the logger as it found it."""
    import logging

    log = logging.getLogger("archdiff")
    handlers, propagate, level = list(log.handlers), log.propagate, log.level
    yield
    log.handlers[:], log.propagate, log.level = handlers, propagate, level


@pytest.hookimpl(trylast=True)  # after -m has deselected: rank what runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The real-input files are the long ones (minutes each on a cold cache), then those that start
    # Ray or a browser (a minute): handed out first, they run while the other workers go through
    # the hundreds of short tests, instead of after them. A file moves whole, so its module
    # fixtures are still built once; the sort is stable, so every worker collects the same order,
    # as pytest-xdist requires.
    rank: dict[Path, int] = {}
    for item in items:
        mine = 0 if item.get_closest_marker("real") else 1 if item.get_closest_marker("ray") else 2
        rank[item.path] = min(rank.get(item.path, 2), mine)
    items.sort(key=lambda item: rank[item.path])


def pytest_addoption(parser: pytest.Parser) -> None:
    from tests.progress import add_progress_options

    add_progress_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    from tests.progress import register_progress

    register_progress(config)
