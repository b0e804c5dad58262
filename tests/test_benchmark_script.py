"""scripts/benchmark.py's own measuring: the CPU and peak memory it reports for a command are that
command's whole process tree's, and a target's verdict follows its bound's direction."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

from tests.conftest import ROOT

_SPEC = importlib.util.spec_from_file_location("benchmark_script", ROOT / "scripts" / "benchmark.py")
benchmark = sys.modules["benchmark_script"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(benchmark)

# a child that spends about half a CPU second and holds 200 MB, started by a parent that waits for it
_CHILD = "import time; b = bytearray(200 * 1024 * 1024); t = time.process_time()\nwhile time.process_time() - t < 0.5: pass"
_PARENT = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {_CHILD!r}])"


def test_a_grandchilds_cpu_and_memory_are_the_commands(tmp_path: Path):
    run = benchmark.run_process([sys.executable, "-c", _PARENT], tmp_path, dict(os.environ))
    assert run.returncode == 0
    assert run.cpu >= 0.45  # the child's work, reaped by the parent, counts
    assert run.peak_mb >= 200 and run.wall >= 0.45


def test_a_failing_command_keeps_its_exit_status(tmp_path: Path):
    assert benchmark.run_process([sys.executable, "-c", "raise SystemExit(3)"], tmp_path, dict(os.environ)).returncode == 3


def test_targets_at_most_and_at_least():
    assert benchmark.Row("ratio", 3.9, "x", 4).met and not benchmark.Row("ratio", 4.1, "x", 4).met
    assert benchmark.Row("speed-up", 6.2, "x", 6, at_most=False).met
    assert not benchmark.Row("speed-up", 3.3, "x", 6, at_most=False).met


def test_amdahls_projection_waits_for_the_drivers_work_in_the_pool_window():
    """With many cores the pool's window is no shorter than the driver's own work in it (each
    result read and decoded): the projection counts it once it outlasts the workers' share; a
    first-run archive's tree writer is neither serial nor the scan's."""
    from bench.extract_vs_baselines import amdahl

    run = {"serial_cpu": 1.0, "window_driver_cpu": 0.2, "workers_cpu": 8.0, "fork_map_cpu": 1.0}
    hidden, parts = amdahl(run, children=16)
    assert hidden == (1.0 + 8.0 + 1.0) / (1.0 + 8.0 / 16 + 1.0 / 16)  # the workers set the window
    assert parts == {"serial": 1.0, "window": 0.2, "scan": 8.0, "fork": 1.0}
    busy, _parts = amdahl({**run, "window_driver_cpu": 0.9}, children=16)
    assert busy == 10.0 / (1.0 + 0.9 + 1.0 / 16) < hidden  # the driver sets it
    written, parts = amdahl({**run, "workers_cpu": 11.0, "unpack_cpu": 3.0}, children=16)
    assert written == hidden and parts["scan"] == 8.0


def _step(name, forkable=False, requires=()):
    return types.SimpleNamespace(name=name, forkable=forkable, requires=requires)


def test_amdahls_projection_replays_the_steps_children():
    """fork_map splits a phase's work over at most MAX_CHILDREN children, whatever the cores; a
    forkable step is one child of its own, hidden behind the driver's steps while it can start
    beside them, on the path when it needs a step the driver finishes first."""
    from bench.extract_vs_baselines import amdahl

    graph = _step("graph")
    beside = _step("beside", forkable=True)  # requires nothing: starts with the steps
    after = _step("after", forkable=True, requires=(graph,))  # waits for the graph
    last = _step("last", requires=(beside, after))
    phases = {"acquire": [0, 0.2, 0], "scan": [0, 0.5, 0], "graph": [0, 1.0, 0], "beside": [0, 0.6, 0],
              "after": [0, 0.3, 0], "last": [0, 0.6, 0]}
    forks = {"graph": {"map": 0.4, "ahead": 0.0}, "beside": {"map": 0.0, "ahead": 0.6},
             "after": {"map": 0.0, "ahead": 0.3}, "last": {"map": 0.4, "ahead": 0.0}}
    run = {"serial_cpu": 1.0, "window_driver_cpu": 0.4, "workers_cpu": 8.0, "fork_map_cpu": 1.7,
           "phases": phases, "forks_by_phase": forks}
    speedup, _parts = amdahl(run, cores=16, steps=[graph, beside, after, last], children=4)
    # acquire 0.2, scan's driver outside the window 0.1, window max(0.5, 0.4); graph 0.6 + 0.4/4;
    # "beside" (0.6) ran meanwhile; "after" 0.3 once the graph is done; last 0.2 + 0.4/4
    path = 0.2 + 0.1 + 0.5 + (0.6 + 0.1) + 0.3 + (0.2 + 0.1)
    assert speedup == pytest.approx((1.0 + 8.0 + 1.7) / path)
    # with fork_map's children as many as the cores, only its two spans shrink
    wider, _parts = amdahl(run, cores=16, steps=[graph, beside, after, last], children=16)
    assert wider == pytest.approx((1.0 + 8.0 + 1.7) / (path - 0.2 + 0.05))
    # the driver's own work beside the graph's round hides as much of the round's share per child
    # (0.4 / 4) as it lasts, and no more
    overlapped, _parts = amdahl({**run, "overlaps": {"graph": [(0.4, 0.05)]}}, cores=16,
                                steps=[graph, beside, after, last], children=4)
    assert overlapped == pytest.approx((1.0 + 8.0 + 1.7) / (path - 0.05))
    longer, _parts = amdahl({**run, "overlaps": {"graph": [(0.4, 0.3)]}}, cores=16,
                            steps=[graph, beside, after, last], children=4)
    assert longer == pytest.approx((1.0 + 8.0 + 1.7) / (path - 0.1))
    # a forkable step that must wait for the graph is on the path: required by nothing before it ends
    late = _step("beside", forkable=True, requires=(graph,))
    slower, _parts = amdahl(run, cores=16, steps=[graph, late, after, last], children=4)
    assert slower == pytest.approx((1.0 + 8.0 + 1.7) / (path + 0.3))


def test_compiler_occupancy_counts_overlaps_and_the_stretches_below_jobs():
    """bench.probe_compilers says how many compilers ran at once: two overlapping for 2 s with one
    alone for 1 s on each side, a 3 s hole with none, then one process starting as another ends
    (no hole between them) and running on for half a second, shorter than a reported stretch."""
    from bench.probe_compilers import occupancy

    log = [{"start_s": 10.0, "end_s": 14.0}, {"start_s": 11.0, "end_s": 13.0},
           {"start_s": 17.0, "end_s": 18.0}, {"start_s": 18.0, "end_s": 18.5}]
    seconds, stretches = occupancy(log, jobs=2)
    assert seconds == {2: 2.0, 1: 3.5, 0: 3.0}
    assert stretches == [(10.0, 11.0, 1), (13.0, 14.0, 1), (14.0, 17.0, 0), (17.0, 18.0, 1)]
    assert occupancy(log, jobs=1)[0] == {1: 5.5, 0: 3.0}  # two at once count as the one job's
