"""tests/progress.py on a small suite of its own, run as the real suite runs (pytest-xdist) and in one
process: a line per finished file with its counts, and a line naming the running test when a
long one leaves the terminal quiet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SUITE = {
    "conftest.py": "from tests.progress import add_progress_options as pytest_addoption\n"
                   "from tests.progress import register_progress as pytest_configure\n",
    "test_quick.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    "test_mixed.py": "import pytest\n\ndef test_fails():\n    assert False\n\n"
                     "@pytest.mark.skip(reason='shown')\ndef test_skipped():\n    pass\n",
    "test_slow.py": "import time\n\ndef test_sleeps():\n    time.sleep(4)\n",
}


def _run(tmp_path: Path, *args: str) -> str:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\nprogress_interval = 1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the one failing test
    return proc.stdout


def _file_lines(out: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^\[\d+s\] (test_\w+\.py): (.*?) in \d+s \(", out, re.M)}


def test_a_line_per_finished_file_in_parallel_and_a_line_while_a_long_test_runs(tmp_path):
    out = _run(tmp_path, "-n", "2")
    assert _file_lines(out) == {"test_quick.py": "2 passed", "test_mixed.py": "1 failed, 1 skipped",
                                "test_slow.py": "1 passed"}
    assert re.search(r"\(3/3 files, 5/5 tests\)$", out, re.M), out
    # the slow file's 4 s are longer than the 1 s interval: a line names it while it runs
    assert re.search(r"^\[\d+s\] \d/5 tests done; running: test_slow\.py::test_sleeps \(\d+s\)", out, re.M), out


def test_a_line_per_finished_file_in_one_process(tmp_path):
    out = _run(tmp_path, "-n", "0")
    assert _file_lines(out) == {"test_quick.py": "2 passed", "test_mixed.py": "1 failed, 1 skipped",
                                "test_slow.py": "1 passed"}
    lines = [line for line in out.splitlines() if re.match(r"^\[\d+s\] test_", line)]
    assert [re.search(r"\((\d)/3 files", line).group(1) for line in lines] == ["1", "2", "3"]
