"""``run_bounded``'s bounds: a CPU budget counts the CPU the program's process group uses, not the
time it waits, so a probe's outcome does not depend on the machine's load; the wall clock still
stops a program that waits without computing."""

from __future__ import annotations

import subprocess
import sys
import time

from extractor.support.safeproc import group_cpu_seconds, run_bounded

SPIN = [sys.executable, "-c", "while True: pass"]


def test_a_program_that_waits_is_not_stopped_by_its_cpu_budget():
    # Under a wall-clock bound of 0.3 s this sleep would have timed out, as a compile starved by
    # a loaded machine did.
    done = run_bounded(["sleep", "1"], timeout=20, cpu_seconds=0.3)
    assert (done.timed_out, done.returncode) == (False, 0)


def test_a_program_that_computes_is_stopped_at_its_cpu_budget():
    started = time.monotonic()
    done = run_bounded(SPIN, timeout=60, cpu_seconds=0.5)
    assert done.timed_out
    assert time.monotonic() - started < 30  # the CPU budget stopped it, not the wall bound


def test_the_cpu_of_a_grandchild_counts():
    # A compiler driver's cc1plus is its child: the budget is the whole group's.
    script = f"import subprocess, sys; subprocess.run({SPIN!r})"
    started = time.monotonic()
    done = run_bounded(["/bin/sh", "-c", f'"{sys.executable}" -c "$0"', script], timeout=60, cpu_seconds=0.5)
    assert done.timed_out and time.monotonic() - started < 30


def test_the_wall_clock_still_stops_a_program_that_waits_for_ever():
    started = time.monotonic()
    done = run_bounded(["sleep", "30"], timeout=0.5, cpu_seconds=10)
    assert done.timed_out and time.monotonic() - started < 10


def test_group_cpu_seconds_reads_a_running_group():
    proc = subprocess.Popen(SPIN, start_new_session=True)
    try:
        time.sleep(0.6)
        used = group_cpu_seconds(proc.pid)
        assert 0.05 < used <= 0.6 + 0.1
        assert group_cpu_seconds(proc.pid + 10_000_000) == 0  # no such group
    finally:
        proc.kill()
        proc.wait()
