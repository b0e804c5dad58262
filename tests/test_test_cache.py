"""Where the tests keep real input between runs: $ARCHDIFF_TEST_CACHE, else $XDG_CACHE_HOME/archdiff-tests,
else ~/.cache/archdiff-tests; and a lock of that cache is held by one process at a time."""

from __future__ import annotations

import multiprocessing
import time

from tests.conftest import cache_lock, cache_root


def test_the_cache_follows_archdiff_test_cache_then_xdg_cache_home_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ARCHDIFF_TEST_CACHE", str(tmp_path / "own"))
    assert cache_root() == tmp_path / "own" and (tmp_path / "own").is_dir()
    monkeypatch.delenv("ARCHDIFF_TEST_CACHE")
    assert cache_root() == tmp_path / "xdg" / "archdiff-tests"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == tmp_path / "home" / ".cache" / "archdiff-tests"


def _hold(name: str, seconds: float, log: str) -> None:
    with cache_lock(name):
        with open(log, "a") as fh:
            fh.write(f"in {time.monotonic()}\n")
        time.sleep(seconds)
        with open(log, "a") as fh:
            fh.write(f"out {time.monotonic()}\n")


def test_two_workers_asking_for_one_download_take_turns(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHDIFF_TEST_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "log"
    workers = [multiprocessing.get_context("spawn").Process(target=_hold, args=("sdist-x-1", 0.5, str(log)))
               for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events == ["in", "out", "in", "out"]  # never both inside
