"""Progress on a terminal, quiet elsewhere: what each long command prints where.

Off a terminal (pipes, CI logs) stderr carries nothing but errors and stdout the results; on a
terminal (a real pseudo-terminal here) stderr carries one status line, redrawn in place and wiped
at the end, naming the phase and the files scanned."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import sys

import pytest

from archdiff.progress import QuietProgress, TerminalProgress, open_progress
from tests.conftest import FIXTURES

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_plain(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "archdiff.cli", *args], capture_output=True, text=True)


def run_on_terminal(*args: str) -> tuple[int, str, str]:
    """The CLI with stderr on a pseudo-terminal (stdout a pipe): (exit code, stdout, terminal text)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "archdiff.cli", *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    stdout = proc.stdout.read().decode()
    code = proc.wait()
    os.close(master)
    return code, stdout, b"".join(chunks).decode("utf-8", errors="replace")


def _extract_args(tmp_path, *more: str) -> list[str]:
    return ["extract", str(FIXTURES / "pysample"), "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
            "-j", "1", "--no-probes", *more]


def test_off_a_terminal_extract_prints_results_on_stdout_and_nothing_on_stderr(tmp_path):
    proc = run_plain(*_extract_args(tmp_path))
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert re.match(r"^\S+evidence\.json: \d+ nodes, \d+ edges from \d+ files; \d+ diagnostics", proc.stdout)
    again = run_plain(*_extract_args(tmp_path))  # warm: the same, from the memo
    assert again.stderr == "" and again.stdout.splitlines()[0].endswith("(6 cached, 0 parsed)")


def test_on_a_terminal_extract_draws_one_status_line_and_wipes_it(tmp_path):
    code, stdout, terminal = run_on_terminal(*_extract_args(tmp_path))
    assert code == 0
    assert "evidence.json: " in stdout  # results still on stdout
    frames = [ANSI.sub("", f) for f in terminal.split("\r") if f.strip()]
    assert frames, terminal
    assert any(re.search(r"\[\d+/\d+\] scan .*\d+/6 files", f) for f in frames), frames
    assert any(re.search(r"\[\d+/\d+\] layers", f) for f in frames), frames
    assert "\n" not in terminal.replace("\r\n", "")  # redrawn in place, never scrolled
    assert terminal.endswith("\r\x1b[2K")  # and wiped at the end


def test_warnings_are_grouped_with_their_fix(tmp_path):
    """A struct probe that misses a header from a package is one line with the flag that brings it."""
    tree = tmp_path / "tree"
    (tree / "csrc").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (tree / "csrc" / f"{name}.h").write_text(f"#include <torch/all.h>\nstruct {name.upper()} {{ int x; }};\n")
    (tree / "pyproject.toml").write_text('[build-system]\nrequires = ["torch == 2.8.0"]\n')
    proc = run_plain("extract", str(tree), "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "-j", "1")
    assert proc.returncode == 0 and proc.stderr == ""
    grouped = [line for line in proc.stdout.splitlines() if "[probe-failed]" in line]
    assert grouped == ["  warning: 3 struct probes failed, missing torch/all.h; fix: --headers-from pypi:torch==2.8.0 "
                       "[probe-failed]"], proc.stdout
    bundle = json.loads((tmp_path / "out" / "evidence.json").read_text())
    assert sum(d["code"] == "probe-failed" for d in bundle["diagnostics"]) == 3  # the details stay in the evidence


def test_errors_of_single_files_stay_on_stderr(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "bad.py").write_text("def broken(:\n")
    (tree / "good.py").write_text("x = 1\n")
    proc = run_plain("extract", str(tree), "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
                     "-j", "1", "--no-probes")
    assert proc.returncode == 0
    assert proc.stderr.startswith("bad.py:1: error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_off_a_terminal_compare_prints_nothing_on_stderr(tmp_path):
    run_plain(*_extract_args(tmp_path))
    evidence = str(tmp_path / "out" / "evidence.json")
    proc = run_plain("compare", evidence, str(FIXTURES / "pysample"), "-o", str(tmp_path / "report"),
                     "--cache-dir", str(tmp_path / "cache"), "-j", "1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[-1].endswith("0 differences, 0 breaking")


def test_on_a_terminal_compare_shows_which_side_it_works_on(tmp_path):
    run_plain(*_extract_args(tmp_path))
    evidence = str(tmp_path / "out" / "evidence.json")
    code, stdout, terminal = run_on_terminal("compare", evidence, str(FIXTURES / "pysample"), "-o",
                                             str(tmp_path / "report"), "--cache-dir", str(tmp_path / "cache"), "-j", "1",
                                             "--format", "json")
    assert code == 0
    frames = [ANSI.sub("", f) for f in terminal.split("\r") if f.strip()]
    assert any("A " in f and "reading evidence" in f for f in frames), frames
    assert any(f"B {FIXTURES / 'pysample'}" in f for f in frames), frames
    assert any("comparing" in f for f in frames), frames
    assert "report.json" in stdout


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_counts_files_and_numbers_phases():
    progress = TerminalProgress(FakeTerminal())
    progress.section("release 2/5 v0.10.1")
    progress.plan(["acquire", "read", "scan", "python", "bundle"])
    progress.phase("scan", 2468)
    progress.advance(1234)
    line = progress.line()
    assert "release 2/5 v0.10.1 [3/5] scan" in line and "1,234/2,468 files" in line
    progress.phase("python")
    assert "[4/5] python" in progress.line() and "files" not in progress.line() and "?" not in progress.line()
    progress.phase("comparing")  # a phase outside the plan has no number
    assert "] comparing" not in progress.line() and "comparing" in progress.line()


def test_progress_is_drawn_on_terminals_only(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    assert isinstance(open_progress(FakeTerminal()), TerminalProgress)
    assert isinstance(open_progress(io.StringIO()), QuietProgress)
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(open_progress(FakeTerminal()), QuietProgress)


@pytest.mark.parametrize("width", [20, 200])
def test_the_status_line_fits_the_terminal(monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    stream = FakeTerminal()
    with TerminalProgress(stream) as progress:
        progress.section("x" * 300)
        progress.phase("scan", 10)
    frames = [ANSI.sub("", f) for f in stream.getvalue().split("\r") if f.strip()]
    assert frames and all(len(f) < width for f in frames)
