"""The guarded worker pool: results in input order, and the one item a dead, overdue or failing
worker held named as such while every other item still gets its result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extractor.run import workerpool
from extractor.errors import ArchdiffError
from extractor.run.workerpool import Failure, run_guarded


def _work(item):
    if item == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if item == "abort":
        os.abort()
    if item == "sleep":
        time.sleep(60)
    if item == "raise":
        raise ValueError("bad item")
    if item == "allocate":
        return len(bytearray(3 * 1024**3))  # over the cap below
    return item * 2


@pytest.mark.parametrize("jobs, batched", [(1, False), (3, False), (1, True), (3, True)])
def test_each_failure_costs_its_own_item_only(jobs, batched):
    # batched: every item in a batch with others, the failing ones included
    items = [1, "segv", 2, "abort", 3, "raise", 4, "sleep", 5, "allocate", 6]
    started = time.monotonic()
    results = list(run_guarded(items, _work, jobs=jobs, timeout=2.0, memory_bytes=1024**3,
                               **({"weight": lambda item: 1, "batch_weight": 4} if batched else {})))
    assert time.monotonic() - started < 30
    assert results == [2, Failure("crashed", "SIGSEGV"), 4, Failure("crashed", "SIGABRT"), 6,
                       Failure("failed", "ValueError: bad item"), 8, Failure("timed-out", "2 s"), 10,
                       Failure("failed", "MemoryError: "), 12]


def _echo_big(item: bytes) -> bytes:
    return item + item  # a result larger than the item, and both far larger than a pipe's buffer


def test_large_items_and_larger_results_never_deadlock_the_pipes():
    # In a child process under a timeout: a deadlock hangs the parent's writes for good.
    script = (
        "from extractor.run.workerpool import run_guarded\n"
        "from tests.test_workerpool import _echo_big\n"
        "items = [bytes([i]) * (4 * 1024**2) for i in range(6)]\n"
        "results = list(run_guarded(items, _echo_big, jobs=2, timeout=60))\n"
        "assert [len(r) for r in results] == [8 * 1024**2] * 6\n"
        "assert all(r == bytes([i]) * len(r) for i, r in enumerate(results))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr


def test_never_more_workers_than_items(monkeypatch):
    started = []
    real = workerpool._start
    monkeypatch.setattr(workerpool, "_start", lambda *a: started.append(1) or real(*a))
    assert list(run_guarded([1, 2, 3], _work, jobs=64, timeout=10)) == [2, 4, 6]
    assert len(started) == 3


def _die_at_start():
    os._exit(3)


def test_workers_that_die_before_any_item_stop_the_run_with_one_line():
    with pytest.raises(ArchdiffError, match=r"worker processes keep dying before taking any file \(exit code 3\)"):
        list(run_guarded([1, 2], _work, jobs=1, timeout=10, init=_die_at_start))


def test_workers_exit_when_the_parent_is_killed(tmp_path):
    """kill -9 of archdiff leaves no worker behind, not even one stuck in a parse that never ends."""
    script = (
        "import os, sys, time\n"
        "from extractor.run.workerpool import run_guarded\n"
        "from tests.test_workerpool import _slow_pid\n"
        "for _ in run_guarded(list(range(8)), _slow_pid, jobs=3, timeout=600):\n"
        "    pass\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                              env={**os.environ, "PIDS": str(tmp_path)})
    deadline = time.monotonic() + 60
    while len(list(tmp_path.iterdir())) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [int(p.name) for p in tmp_path.iterdir()]
    assert len(workers) == 3
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)]


def _slow_pid(item):
    (Path(os.environ["PIDS"]) / str(os.getpid())).touch()
    time.sleep(3600 if item == 0 else 1 if item < 3 else 0.2)  # item 0: a parse that never ends
    return item


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _marks_its_start(item):
    Path(item).touch()  # the worker has this item now
    return item


def test_a_finished_worker_gets_its_next_item_before_the_caller_sees_the_result(tmp_path):
    # The caller decodes and caches each result as it comes; the worker that sent it should be
    # working on its next item meanwhile, not wait for the caller to come back for more.
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    results = run_guarded([first, second], _marks_its_start, jobs=1, timeout=30.0)
    assert next(results) == first
    deadline = time.monotonic() + 10
    while not Path(second).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert Path(second).exists()
    assert list(results) == [second]


def test_files_go_to_the_pool_largest_first(tmp_path):
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system
    from extractor.run.workplace import HERE
    from tests.conftest import FIXTURES

    handed: list[int] = []

    class Recording:
        name = "local"

        def scan_files(self, items, steps, jobs, progress=None):
            handed.extend(len(data) for _language, data in items)
            return HERE.scan_files(items, steps, jobs, progress)

        def open_store(self, cache_dir):
            return HERE.open_store(cache_dir)

    extract_system([str(FIXTURES / "mini_vllm")], executor=Recording(),
                   options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c", probe_structs=False))
    assert len(handed) > 5 and handed == sorted(handed, reverse=True)


def _call(item):
    return item()


def test_forked_workers_are_sent_indexes_not_items(monkeypatch):
    """A forked worker holds the items from its start: the parent sends an index, so an item that
    would not even pickle (a closure) is worked on all the same, by a worker started after a crash too."""
    sent = []
    original = workerpool._feed

    def feed(worker, queue, items, batches):
        if queue and not worker.held:
            sent.append(worker.inherited)
        original(worker, queue, items, batches)

    monkeypatch.setattr(workerpool, "_feed", feed)
    items = [lambda: 1, lambda: os.kill(os.getpid(), signal.SIGSEGV), lambda: 3]
    assert list(run_guarded(items, _call, jobs=1, timeout=10)) == [1, Failure("crashed", "SIGSEGV"), 3]
    assert sent == [True, True, True]


def _echo(item):
    return item


def _record_held(monkeypatch) -> list[tuple[int, ...]]:
    """What each message to a worker held, in the order sent (a batch: several indexes)."""
    held: list[tuple[int, ...]] = []
    original = workerpool._feed

    def feed(worker, queue, items, batches):
        original(worker, queue, items, batches)
        if worker.held and (not held or held[-1] is not worker.held):
            held.append(worker.held)

    monkeypatch.setattr(workerpool, "_feed", feed)
    return held


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_small_items_go_in_batches_and_heavy_ones_alone(monkeypatch, start_method):
    """Items whose weights add up to at most batch_weight (batch_items at most) share one message;
    an item heavier than that goes alone; results come back in input order all the same, whether
    the workers inherit the items (fork) or are sent them."""
    if start_method == "spawn":
        monkeypatch.setattr(workerpool.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    held = _record_held(monkeypatch)
    weights = [1] * 10 + [50] + [3] * 6
    results = list(run_guarded(weights, _echo, jobs=1, timeout=60, weight=lambda w: w, batch_weight=10, batch_items=4))
    assert results == weights
    assert held == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9), (10,), (11, 12, 13), (14, 15, 16)]


def _crash_on_two(item):
    if item == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return item


def test_a_batch_whose_worker_dies_goes_again_item_by_item(monkeypatch):
    held = _record_held(monkeypatch)
    results = list(run_guarded([0, 1, 2, 3, 4], _crash_on_two, jobs=1, timeout=60, weight=lambda item: 1,
                               batch_weight=3))
    assert results == [0, 1, Failure("crashed", "SIGSEGV"), 3, 4]
    # a batch answers in one message: all three of the crashed batch go again, alone, then the rest batched
    assert held == [(0, 1, 2), (0,), (1,), (2,), (3, 4)]
