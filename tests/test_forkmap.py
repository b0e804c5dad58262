"""fork_map: results in input order whoever computed them; the driver computes what a child could
not (no fork, fork refused, a child that dies, raises or sends what does not unpickle), a task's
exception included; no child outlives the call. fork_ahead: the same for one call started beside
the driver's own work. And its users: the bundle's bytes and the layers'
roles are the same computed in children as in one process."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
import zlib

import pytest
from handmade_context import build_context

from extractor.concepts import extract_concepts
from extractor.evidence.write import encode_bundle
from extractor.layers import extract_layers
from extractor.model import Edge, EdgeKind, Node, NodeKind, Parameter, ParamKind
from extractor.support import forkmap
from extractor.support.forkmap import fork_ahead, fork_map, spans
from tests.test_bundle_encoder import _context
from tests.test_layers_fixture import FIXTURE

DRIVER = os.getpid()


def _where(task: int) -> tuple[int, int]:
    return task * task, os.getpid()


def _reaped(pids: list[int]) -> bool:
    """Every one of ``pids`` has ended and been waited for (no zombie, nothing left running)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


class _LoadsBadly:
    """Pickles in the child, and raises when the driver unpickles it."""

    def __reduce__(self):
        return _refuse, ()


def _refuse():
    raise RuntimeError("not in this process")


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """The pids of the children forked by this process (a child's own forks are not counted)."""
    started: list[int] = []
    real = os.fork

    def counting_fork() -> int:
        pid = real()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    return started


@pytest.mark.parametrize("jobs, tasks, children", [(2, 2, 2), (3, 10, 3), (4, 3, 3), (2, 7, 2), (16, 10, 4)])
def test_results_come_in_input_order_from_at_most_four_children(jobs, tasks, children, forks):
    results = fork_map(_where, list(range(tasks)), jobs)
    assert [value for value, _pid in results] == [t * t for t in range(tasks)]
    assert sorted({pid for _value, pid in results}) == sorted(forks) and len(forks) == children
    # child k took tasks k, k + n, ...
    assert all(results[t][1] == forks[t % children] for t in range(tasks))
    assert _reaped(forks)


@pytest.mark.parametrize("jobs, tasks", [(1, 5), (4, 1), (3, 0)])
def test_one_job_or_one_task_runs_in_the_driver(jobs, tasks, forks):
    assert fork_map(_where, list(range(tasks)), jobs) == [(t * t, DRIVER) for t in range(tasks)]
    assert forks == []


def test_without_fork_the_driver_computes_everything(monkeypatch):
    monkeypatch.delattr(os, "fork")
    assert fork_map(_where, list(range(5)), 3) == [(t * t, DRIVER) for t in range(5)]


def test_a_refused_fork_leaves_that_share_to_the_driver(monkeypatch, forks):
    counting = os.fork
    calls = []

    def second_refused() -> int:
        calls.append(1)
        if len(calls) == 2:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return counting()

    monkeypatch.setattr(os, "fork", second_refused)
    results = fork_map(_where, list(range(6)), 3)
    assert [value for value, _pid in results] == [t * t for t in range(6)]
    assert [pid == DRIVER for _value, pid in results] == [False, True, False] * 2
    assert len(forks) == 2 and _reaped(forks)


def _fails_in_children(how: str):
    def work(task: int) -> tuple[int, int]:
        if os.getpid() != DRIVER and task % 3 == 1:
            if how == "raise":
                raise RuntimeError("only in a child")
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if how == "exit":
                os._exit(0)  # before writing anything: an empty results file
            if how == "unpicklable":
                return lambda: task  # type: ignore[return-value]
            if how == "unloadable":
                return _LoadsBadly()  # type: ignore[return-value]
        return _where(task)
    return work


@pytest.mark.parametrize("how", ["raise", "kill", "exit", "unpicklable", "unloadable"])
def test_a_failing_child_s_share_is_computed_by_the_driver(how, forks):
    results = fork_map(_fails_in_children(how), list(range(6)), 3)
    assert [value for value, _pid in results] == [t * t for t in range(6)]
    # child 1 of 3 held tasks 1 and 4: both computed again by the driver; the others' stand
    assert [pid == DRIVER for _value, pid in results] == [False, True, False] * 2
    assert len(forks) == 3 and _reaped(forks)


def test_a_task_that_raises_raises_in_the_driver(forks):
    def work(task: int) -> int:
        if task == 4:
            raise ValueError(f"task {task} is bad")
        return task

    with pytest.raises(ValueError, match="task 4 is bad"):
        fork_map(work, list(range(6)), 2)
    assert _reaped(forks)


def test_what_a_child_prints_goes_to_streams_of_its_own(capfd, forks):
    def noisy(task: int) -> int:
        print(f"noise from {os.getpid()}", file=sys.stderr, flush=True)
        print(f"noise from {os.getpid()}", flush=True)
        return task

    assert fork_map(noisy, list(range(4)), 2) == list(range(4))
    out, err = capfd.readouterr()
    assert len(forks) == 2 and "noise" not in out + err


def test_an_interrupted_driver_kills_and_reaps_its_children(monkeypatch, forks):
    def interrupted(pid: int, fd: int):
        raise KeyboardInterrupt

    monkeypatch.setattr(forkmap, "_results", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fork_map(_where, list(range(4)), 2)
    assert len(forks) == 2 and _reaped(forks)


def _gated(gate: str) -> tuple[int, bool]:
    """Waits (up to 20 s) for ``gate`` to exist: (pid, whether it appeared)."""
    deadline = time.monotonic() + 20
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            return os.getpid(), False
        time.sleep(0.01)
    return os.getpid(), True


def test_the_drivers_own_work_runs_while_the_children_work(forks, tmp_path):
    """``meanwhile`` is called in the driver once the children are forked, before their results
    are read: it overlaps their work (the bundle's head beside the graph's encoding). The children
    wait for what only the driver's own work makes, so the test holds however loaded the machine
    (it failed when a loaded driver was first scheduled after a child's timed work had ended)."""
    gate = str(tmp_path / "gate")
    called: list[int] = []

    def meanwhile() -> None:
        called.append(os.getpid())
        open(gate, "w").close()

    results = fork_map(_gated, [gate] * 4, 2, meanwhile=meanwhile)
    assert called == [DRIVER] and len(forks) == 2 and {pid for pid, _seen in results} == set(forks)
    assert all(seen for _pid, seen in results)  # the gate appeared while the children waited


@pytest.mark.parametrize("jobs", [1, 2])
def test_meanwhile_runs_once_whatever_the_jobs_and_its_error_reaps_the_children(jobs, forks):
    called: list[int] = []
    results = fork_map(_where, list(range(5)), jobs, meanwhile=lambda: called.append(os.getpid()))
    assert [square for square, _pid in results] == [t * t for t in range(5)] and called == [DRIVER]
    assert ({pid for _square, pid in results} == {DRIVER}) == (jobs == 1)

    def failing() -> None:
        raise ValueError("the driver's own work failed")

    with pytest.raises(ValueError, match="own work failed"):
        fork_map(_where, list(range(5)), jobs, meanwhile=failing)
    assert _reaped(forks)


def test_a_call_forked_ahead_runs_in_a_child_beside_the_driver(forks):
    started = fork_ahead(lambda: _where(7), 2)
    beside = _where(3)  # the driver goes on while the child computes
    assert len(forks) == 1
    assert started.result() == (49, forks[0]) and beside == (9, DRIVER)
    assert _reaped(forks)


@pytest.mark.parametrize("jobs", [1, 0])
def test_a_call_ahead_with_one_job_runs_in_the_driver_when_asked(jobs, forks):
    calls: list[int] = []

    def call() -> tuple[int, int]:
        calls.append(1)
        return _where(5)

    started = fork_ahead(call, jobs)
    assert calls == [] and forks == []  # nothing computed before the driver asks
    assert started.result() == (25, DRIVER) and calls == [1]


@pytest.mark.parametrize("how", ["raise", "kill", "exit", "unpicklable", "unloadable"])
def test_a_call_ahead_whose_child_fails_is_computed_by_the_driver(how, forks):
    assert fork_ahead(lambda: _fails_in_children(how)(4), 2).result() == (16, DRIVER)
    assert len(forks) == 1 and _reaped(forks)


def test_a_call_ahead_that_raises_raises_in_the_driver(forks):
    def bad() -> int:
        raise ValueError("bad everywhere")

    started = fork_ahead(bad, 2)
    with pytest.raises(ValueError, match="bad everywhere"):
        started.result()
    assert len(forks) == 1 and _reaped(forks)


def test_a_cancelled_call_ahead_leaves_no_child(forks):
    def endless() -> int:
        while True:
            pass

    fork_ahead(endless, 2).cancel()
    assert len(forks) == 1 and _reaped(forks)


@pytest.mark.parametrize("count, parts", [(0, 3), (1, 3), (5, 1), (7, 3), (10, 4), (3, 3)])
def test_spans_cover_the_items_in_order_in_near_equal_non_empty_pieces(count, parts):
    cut = spans(count, parts)
    assert [i for span in cut for i in span] == list(range(count))
    assert len(cut) == min(parts, count) and all(len(span) for span in cut)
    assert max(map(len, cut), default=0) - min(map(len, cut), default=0) <= 1


def test_bundle_bytes_from_children_are_the_one_process_bytes(forks):
    nodes = [Node(f"py:m.f{i}", NodeKind.FUNCTION, f"f{i}", f"m.f{i}", "python", "m.py", i, "é\u2028\x00", "()",
                  ("t",), params=(Parameter("x", ParamKind.KEYWORD_ONLY, "int", None),)) for i in range(9)]
    edges = [Edge(f"py:m.f{i}", f"py:m.f{i + 1}", EdgeKind.CALLS, "m.py", 2**64 + i) for i in range(7)]
    ctx, steps = _context(nodes, edges)
    one = encode_bundle(ctx, steps, []).data
    assert forks == []
    ctx.options = dataclasses.replace(ctx.options, jobs=3)
    forked = encode_bundle(ctx, steps, [])
    assert forked.data == one
    assert zlib.decompress(forked.compressed) == one  # the memo, from spans each child compressed
    assert len(forks) == 3


def test_layer_roles_from_children_are_the_one_process_roles(forks):
    def layers(jobs: int):
        ctx = build_context({"": FIXTURE})
        ctx.options = dataclasses.replace(ctx.options, jobs=jobs)
        ctx.results["concepts"] = extract_concepts(ctx)
        return extract_layers(ctx).records

    one = layers(1)
    assert forks == []
    assert layers(2) == one
    assert len(forks) == 2
    assert sum(len(layer.modules) for layer in one) >= 10  # every module of the fixture, in some layer
