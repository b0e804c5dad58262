"""A line per test file as it finishes, and a line at least every minute while tests run.

Under pytest-xdist the default output is dots for a quarter of an hour; a newcomer cannot tell a
slow test from a hung one. The controller (or the single process with ``-n 0``) sees every test's
start and end, so it can say when a file is done (how many passed, how long it took) and, when a
minute goes by with nothing finished, which tests are running and for how long.

``-p no:archdiff_progress`` turns it off; the ini option ``progress_interval`` sets the minute.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable

import pytest



def add_progress_options(parser: pytest.Parser) -> None:
    """Called from ``tests/conftest.py``'s ``pytest_addoption``."""
    parser.addini("progress_interval", "seconds without a finished test file before a line says what runs",
                  default="60")


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class FileProgress:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.last_line = self.start
        self.expected: Counter[str] = Counter()
        self.outcomes: dict[str, Counter[str]] = {}
        self.first_start: dict[str, float] = {}
        self.running: dict[str, float] = {}  # nodeid -> when it started
        self.finished: set[str] = set()
        self.files_done = 0
        self.collected = False
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.interval = float(config.getini("progress_interval"))

    # -- what there is to run ------------------------------------------------------------------

    def expect(self, nodeids: Iterable[str]) -> None:
        with self.lock:
            if self.collected:  # every xdist worker collects the same ids: count them once
                return
            self.expected.update(_file_of(n) for n in nodeids)
            self.collected = True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:  # empty on the xdist controller: the workers collect
            self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        self.expect(ids)

    # -- what runs -----------------------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Only where a test cannot capture the line: the xdist controller runs no test itself.
        if getattr(self.config.option, "numprocesses", None):
            self.thread = threading.Thread(target=self._heartbeat, name="archdiff-progress", daemon=True)
            self.thread.start()

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        with self.lock:
            now = time.monotonic()
            self.running[nodeid] = now
            self.first_start.setdefault(_file_of(nodeid), now)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = None
        if report.failed:
            outcome = "error" if report.when != "call" else "failed"
        elif report.skipped and report.when in ("setup", "call"):
            outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        elif report.passed and report.when == "call":
            outcome = "xpassed" if hasattr(report, "wasxfail") else "passed"
        with self.lock:
            if outcome and report.nodeid not in self.finished:
                self.finished.add(report.nodeid)
                self.outcomes.setdefault(_file_of(report.nodeid), Counter())[outcome] += 1
        if report.when == "teardown":
            self._test_done(report.nodeid)

    def _test_done(self, nodeid: str) -> None:
        path = _file_of(nodeid)
        with self.lock:
            self.running.pop(nodeid, None)
            counts = self.outcomes.get(path, Counter())
            if not self.expected[path] or sum(counts.values()) < self.expected[path]:
                return
            self.files_done += 1
            now = time.monotonic()
            took = now - self.first_start.get(path, now)
            summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
            line = (f"[{_clock(now - self.start)}] {path}: {summary} in {_clock(took)} "
                    f"({self.files_done}/{len(self.expected)} files, "
                    f"{len(self.finished)}/{sum(self.expected.values())} tests)")
            self._write(line, now)

    def _heartbeat(self) -> None:
        while not self.stop.wait(min(5.0, self.interval / 4)):
            with self.lock:
                now = time.monotonic()
                if now - self.last_line < self.interval:
                    continue
                total = sum(self.expected.values())
                if not self.collected:
                    line = "starting the workers and collecting the tests"
                elif self.running:
                    longest = sorted(self.running.items(), key=lambda kv: kv[1])[:3]
                    line = f"{len(self.finished)}/{total} tests done; running: " + "; ".join(
                        f"{nodeid} ({_clock(now - began)})" for nodeid, began in longest)
                elif len(self.finished) < total:
                    line = f"{len(self.finished)}/{total} tests done; starting the next"
                else:
                    continue  # all done: pytest's summary comes next
                self._write(f"[{_clock(now - self.start)}] {line}", now)

    def _write(self, line: str, now: float) -> None:
        # called with self.lock held
        self.last_line = now
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if reporter._tw.width_of_current_line:  # after a row of progress dots: a line of its own
            reporter.write("\n")
        reporter.write_line(line)

    def pytest_sessionfinish(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=10)


def register_progress(config: pytest.Config) -> None:
    """Called from ``tests/conftest.py``'s ``pytest_configure``."""
    # Workers report to the controller, which prints; a worker printing too would double each line.
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    if not config.pluginmanager.has_plugin("archdiff_progress") and not config.pluginmanager.is_blocked("archdiff_progress"):
        config.pluginmanager.register(FileProgress(config), "archdiff_progress")
