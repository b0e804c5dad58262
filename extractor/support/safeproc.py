"""Run an external program (git, a probe compiler) with bounds on time, memory and output.

Every program archdiff starts on behalf of untrusted input goes through :func:`run_bounded`:

- it runs in a session (process group) of its own, and a timeout kills the whole group, so a
  compiler driver's children (cc1plus, cicc, ptxas) never outlive archdiff;
- its address space is capped (``ulimit -v`` in a ``/bin/sh`` wrapper, because ``preexec_fn`` is
  not safe in a process that runs threads, as the probe pool does);
- stdout and stderr go to files and only their first ``max_output`` bytes are read back, so a
  program that prints gigabytes costs disk for a moment, never memory.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_MAX_OUTPUT = 1024 * 1024


@dataclasses.dataclass(frozen=True, slots=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def run_bounded(argv: Sequence[str], *, cwd: Path | str | None = None, timeout: float,
                memory_bytes: int | None = None, env: Mapping[str, str] | None = None,
                max_output: int = DEFAULT_MAX_OUTPUT, stdin: bytes | None = None,
                stdout_to: Path | None = None) -> Finished:
    """Run ``argv``; never raises for the program's own failure (OSError if it cannot start).

    ``stdout_to``: write the whole stdout to that file instead (``Finished.stdout`` is then empty)."""
    command = list(argv)
    if memory_bytes is not None:
        command = ["/bin/sh", "-c", f'ulimit -v {max(1, memory_bytes // 1024)} && exec "$@"', "sh", *command]
    with (open(stdout_to, "wb") if stdout_to is not None else tempfile.TemporaryFile()) as out, \
            tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, cwd=cwd, env=dict(env) if env is not None else None,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True)
        timed_out = False
        try:
            proc.communicate(input=stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # The group outlives the leader when a driver's child still runs: kill it either way.
            _kill_group(proc.pid)
            proc.wait()
        stdout = b"" if stdout_to is not None else _head(out, max_output)
        return Finished(proc.returncode, stdout, _head(err, max_output), timed_out)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _head(fh, limit: int) -> bytes:
    fh.seek(0)
    return fh.read(limit)
