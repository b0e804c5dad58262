"""Where a run's time went: wall and CPU seconds per phase, in the driver and in its workers.

Amdahl decides what more cores buy, so the run log says how much of a run is *serial*: the wall
seconds the driver spends outside the scan pool's working window (acquiring, reading, every
step's ``extract``, writing the bundle). More workers shorten only the pool's window; a 12 s
serial part caps a 40 s run at 2.5x on sixteen cores, whatever the pool.

Per phase, three clocks: ``wall_s`` (the phase's elapsed time), ``cpu_s`` (this process's CPU,
all its threads) and ``workers_cpu_s`` (CPU of child processes that ended during the phase: the
scan's workers once the pool is closed, the struct probes' compilers, the children that
extractor.support.forkmap forks for the layers and the bundle); and ``peak_rss_mb``, the
driver's resident memory high-water mark when the phase ended (it only rises: the phase that
raised it holds what the peak is made of). The keys are documented in ``docs/performance.md``;
timings never enter ``evidence.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from extractor.support.forkmap import forked_seconds

RUN_LOG_VERSION = 1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ru_maxrss is in kilobytes on Linux, in bytes on macOS
_MAXRSS_BYTES = 1 if sys.platform == "darwin" else 1024


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """The resident memory high-water mark of this process (or of the largest child that ended)."""
    return resource.getrusage(who).ru_maxrss * _MAXRSS_BYTES / 2**20


@dataclasses.dataclass(slots=True)
class PhaseTime:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    workers_cpu_s: float = 0.0
    peak_rss_mb: float = 0.0

    def as_json(self) -> dict[str, float]:
        return {"wall_s": round(self.wall_s, 3), "cpu_s": round(self.cpu_s, 3),
                "workers_cpu_s": round(self.workers_cpu_s, 3), "peak_rss_mb": round(self.peak_rss_mb, 1)}


@dataclasses.dataclass(slots=True)
class ScanCounts:
    """What crossed the process boundary during the scan."""

    files: int = 0  # files the run read
    parsed: int = 0  # ... scanned in workers this run
    cached: int = 0  # ... whose facts came from the fact cache
    bytes_sent: int = 0  # file contents handed to workers (the local pool's inherit them at the fork)
    bytes_received: int = 0  # encoded results (msgpack) handed back
    pool_wall_s: float = 0.0  # from the first file handed out to the last result back
    # the driver's CPU in that window (handing out, reading, decoding and caching results): with
    # enough workers the window lasts at least this long
    pool_cpu_s: float = 0.0


@runtime_checkable
class RunLogged(Protocol):
    """What a step's shared result implements to put its own counts in the run log
    (``step_details.<step>``): how it spent its time, never evidence."""

    def run_log(self) -> dict[str, float | int]: ...


class RunLog:
    """The clocks of one extraction, phase by phase, in the order the phases ran."""

    def __init__(self, jobs: int = 1, executor: str = "local") -> None:
        self.jobs = jobs
        self.executor = executor
        self.phases: dict[str, PhaseTime] = {}
        self.scan = ScanCounts()
        self.bundle_bytes = 0
        self.memo = False
        self.details: dict[str, dict[str, float | int]] = {}  # step -> its RunLogged counts
        # step -> its own wall and thread CPU seconds, for the steps run in the background
        self.background: dict[str, dict[str, float | str]] = {}
        self._start = time.perf_counter()
        self._end: float | None = None
        self._forked_before = forked_seconds()
        self._forked_s: float | None = None

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        try:
            yield
        finally:
            spent = self.phases.setdefault(name, PhaseTime())
            spent.wall_s += time.perf_counter() - wall
            spent.cpu_s += time.process_time() - cpu
            spent.workers_cpu_s += _children_cpu() - children
            spent.peak_rss_mb = _peak_rss_mb()

    def finish(self) -> None:
        self._end = time.perf_counter()
        self._forked_s = forked_seconds() - self._forked_before

    @property
    def forked_s(self) -> float:
        """Wall seconds in fork_map's working windows (extractor.support.forkmap) during the run."""
        return (self._forked_s if self._forked_s is not None else forked_seconds() - self._forked_before)

    @property
    def wall_s(self) -> float:
        return (self._end if self._end is not None else time.perf_counter()) - self._start

    @property
    def serial_s(self) -> float:
        """Wall seconds outside the scan pool's and fork_map's working windows: what more workers
        cannot shorten."""
        return max(0.0, self.wall_s - self.scan.pool_wall_s - self.forked_s)

    def timings(self) -> dict[str, float]:
        """Wall seconds per phase (the run log's ``timings_s``, as it always was)."""
        return {name: spent.wall_s for name, spent in self.phases.items()}

    def as_json(self) -> dict[str, Any]:
        scan = self.scan
        return {
            "run_log_version": RUN_LOG_VERSION,
            "executor": self.executor,
            "jobs": self.jobs,
            "wall_s": round(self.wall_s, 3),
            "serial_s": round(self.serial_s, 3),
            "pool_s": round(scan.pool_wall_s, 3),
            "pool_cpu_s": round(scan.pool_cpu_s, 3),
            "fork_map_s": round(self.forked_s, 3),
            "cpu_s": round(sum(p.cpu_s for p in self.phases.values()), 3),
            "workers_cpu_s": round(sum(p.workers_cpu_s for p in self.phases.values()), 3),
            "peak_rss_mb": round(_peak_rss_mb(), 1),
            "workers_peak_rss_mb": round(_peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
            # insertion order is run order; the JSON writer sorts keys, so the order is kept as a list
            "order": list(self.phases),
            "steps": {name: spent.as_json() for name, spent in self.phases.items()},
            "files": {"total": scan.files, "parsed": scan.parsed, "cached": scan.cached,
                      "bundle_from_cache": self.memo},
            "workers": {"bytes_sent": scan.bytes_sent, "bytes_received": scan.bytes_received},
            "bundle_bytes": self.bundle_bytes,
            "step_details": dict(self.details),
            "background": dict(self.background),
        }
