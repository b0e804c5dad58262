"""scripts/benchmark.py's own measuring: the CPU and peak memory it reports for a command are that
command's whole process tree's, and a target's verdict follows its bound's direction."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

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
