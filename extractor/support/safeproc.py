"""Run an external program (git, a probe compiler) with bounds on time, memory and output.

Every program archdiff starts on behalf of untrusted input goes through :func:`run_bounded`:

- it runs in a session (process group) of its own, and a timeout kills the whole group, so a
  compiler driver's children (cc1plus, cicc, ptxas) never outlive archdiff;
- its address space is capped (``ulimit -v`` in a ``/bin/sh`` wrapper, because ``preexec_fn`` is
  not safe in a process that runs threads, as the probe pool does);
- stdout and stderr go to files and only their first ``max_output`` bytes are read back, so a
  program that prints gigabytes costs disk for a moment, never memory;
- a compile can be bounded by the CPU seconds its process group uses (``cpu_seconds``), not by
  the wall clock: a probe's outcome becomes evidence, and a wall-clock bound made it depend on
  the machine's load (at a load of 12-17, a vLLM header timed out after 300 s of wall time). The wall
  ``timeout`` then only stops a program that waits without computing (an include of a FIFO).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_MAX_OUTPUT = 1024 * 1024
_PROC = Path("/proc")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100
# How often, at most, the CPU of a group still within its budget is read again: a group of
# several processes can spend its budget faster than the wall clock runs.
_RECHECK_S = 5.0


@dataclasses.dataclass(frozen=True, slots=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def run_bounded(argv: Sequence[str], *, cwd: Path | str | None = None, timeout: float,
                memory_bytes: int | None = None, env: Mapping[str, str] | None = None,
                max_output: int = DEFAULT_MAX_OUTPUT, stdin: bytes | None = None,
                stdout_to: Path | None = None, cpu_seconds: float | None = None) -> Finished:
    """Run ``argv``; never raises for the program's own failure (OSError if it cannot start).

    ``stdout_to``: write the whole stdout to that file instead (``Finished.stdout`` is then empty).
    ``cpu_seconds``: stop the program once its process group has used that much CPU (read from
    ``/proc``; where there is none, at ``cpu_seconds`` of wall time, as a plain timeout would);
    ``timeout`` stays the bound on wall time, so give it room above ``cpu_seconds``."""
    command = list(argv)
    if memory_bytes is not None:
        command = ["/bin/sh", "-c", f'ulimit -v {max(1, memory_bytes // 1024)} && exec "$@"', "sh", *command]
    with (open(stdout_to, "wb") if stdout_to is not None else tempfile.TemporaryFile()) as out, \
            tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, cwd=cwd, env=dict(env) if env is not None else None,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True)
        try:
            timed_out = _wait(proc, stdin, timeout, cpu_seconds)
        finally:
            # The group outlives the leader when a driver's child still runs: kill it either way.
            _kill_group(proc.pid)
            proc.wait()
        stdout = b"" if stdout_to is not None else _head(out, max_output)
        return Finished(proc.returncode, stdout, _head(err, max_output), timed_out)


def _wait(proc: subprocess.Popen, stdin: bytes | None, timeout: float, cpu_seconds: float | None) -> bool:
    """Wait for ``proc`` within its bounds; True if it overran one. One process spends at most one
    CPU second per second, so the group's CPU is read first once ``cpu_seconds`` have passed, then
    again when the rest of the budget could be spent (every :data:`_RECHECK_S` at most: a group
    of several processes spends it faster)."""
    deadline = time.monotonic() + timeout
    wait = timeout if cpu_seconds is None else min(timeout, cpu_seconds)
    while True:
        try:
            proc.communicate(input=stdin, timeout=max(wait, 0.01))
            return False
        except subprocess.TimeoutExpired:
            pass
        left = deadline - time.monotonic()
        if cpu_seconds is None or not _PROC.is_dir() or left <= 0:
            return True
        rest = cpu_seconds - group_cpu_seconds(proc.pid)
        if rest <= 0:
            return True
        wait = min(rest, _RECHECK_S, left)


def group_cpu_seconds(pgid: int) -> float:
    """CPU seconds (user and system) used by the live processes of process group ``pgid`` and by
    the children they have reaped, from ``/proc/PID/stat``."""
    ticks = 0
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{entry.path}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone since the listing, or not ours to read
        # after the command's ")": state ppid pgrp ... utime(14) stime cutime cstime(17), 1-based
        if len(fields) > 14 and int(fields[2]) == pgid:
            ticks += sum(int(f) for f in fields[11:15])
    return ticks / _TICK


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _head(fh, limit: int) -> bytes:
    fh.seek(0)
    return fh.read(limit)
