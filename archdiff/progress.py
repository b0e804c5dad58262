"""Progress on a terminal, nothing elsewhere.

On a terminal (stderr is a TTY), a long command keeps one status line at the bottom of stderr:
what it works for (a comparison side, a release), the phase with its number among the run's
phases, files done of the total while files are read and scanned, and the time so far. Lines the
command prints meanwhile (:meth:`TerminalProgress.echo`, the library's warnings) go above it, and
the status line is wiped when the command is done. Off a terminal (a pipe, a CI log, a file)
nothing is drawn: stderr carries errors only, stdout the results.

Drawn by hand (a thread redrawing one line ten times a second) rather than with rich, whose
import alone takes longer than a warm extraction.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO

import click

from extractor.run.progress import Progress

REFRESH_SECONDS = 0.1
BAR_WIDTH = 24
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_UNITS = {"read": "files", "scan": "files"}  # what a counted phase counts
_ACTIVE: list[TerminalProgress] = []  # the display on screen, for lines printed while it is


class QuietProgress(Progress):
    """Off a terminal: nothing drawn."""

    def __enter__(self) -> QuietProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def echo(self, text: str, err: bool = False) -> None:
        """A line of the command's output, printed while the work goes on."""
        click.echo(text, err=err)


class TerminalProgress(Progress):
    """One status line on ``stream`` (a terminal), redrawn by a thread."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()
        self._section = ""
        self._phases: list[str] = []
        self._phase = ""
        self._total: int | None = None
        self._done = 0
        self._tick = 0
        self._shown = ""

    # -- what the pipeline and the commands call ------------------------------------------------

    def section(self, label: str) -> None:
        self._section = label
        self._redraw()

    def plan(self, phases: Sequence[str]) -> None:
        self._phases = list(phases)

    def phase(self, name: str, total: int | None = None) -> None:
        self._phase, self._total, self._done = name, total, 0
        self._redraw()  # at once: a phase may end before the next tick

    def advance(self, n: int = 1) -> None:
        self._done += n

    def echo(self, text: str, err: bool = False) -> None:
        """A line of the command's output (stdout, or stderr with ``err``), printed above the
        status line."""
        with self._lock:
            self._clear()
            click.echo(text, err=err)
            self._draw()

    # -- drawing ---------------------------------------------------------------------------------

    def __enter__(self) -> TerminalProgress:
        _ACTIVE.append(self)
        self._redraw()
        self._thread = threading.Thread(target=self._run, name="archdiff-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._clear()
        with contextlib.suppress(ValueError):
            _ACTIVE.remove(self)

    def _run(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            with self._lock:
                self._tick += 1
                self._draw()

    def line(self) -> str:
        """The status line as it would be drawn now (without terminal control characters)."""
        parts = [_SPINNER[self._tick % len(_SPINNER)]]
        if self._section:
            parts.append(self._section)
        if self._phase:
            number = (f"[{self._phases.index(self._phase) + 1}/{len(self._phases)}] "
                      if self._phase in self._phases else "")
            parts.append(f"{number}{self._phase}")
        if self._total:
            done = min(self._done, self._total)
            filled = BAR_WIDTH * done // self._total
            unit = _UNITS.get(self._phase, "")
            parts.append("━" * filled + "╸" * (filled < BAR_WIDTH) + " " * max(0, BAR_WIDTH - filled - 1))
            parts.append(f"{done:,}/{self._total:,}{' ' + unit if unit else ''}")
        elapsed = int(time.monotonic() - self._started)
        parts.append(f"{elapsed // 60}:{elapsed % 60:02d}")
        return " ".join(parts)

    def _redraw(self) -> None:
        if _ACTIVE and _ACTIVE[-1] is self:  # drawn only between __enter__ and __exit__
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns - 1
        text = self.line()[:width]
        self._stream.write("\r\x1b[2K" + text)
        self._stream.flush()
        self._shown = text

    def _clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
            self._shown = ""


def on_terminal(stream: IO[str] | None = None) -> bool:
    stream = stream if stream is not None else sys.stderr
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def open_progress(stream: IO[str] | None = None) -> TerminalProgress | QuietProgress:
    """A status line on stderr when it is a terminal, else nothing."""
    stream = stream if stream is not None else sys.stderr
    return TerminalProgress(stream) if on_terminal(stream) else QuietProgress()


def echo_above(text: str, err: bool = True) -> bool:
    """Print ``text`` above the status line on screen; False when none is drawn."""
    if not _ACTIVE:
        return False
    _ACTIVE[-1].echo(text, err=err)
    return True
