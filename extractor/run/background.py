"""Steps that wait on programs they run (``Step.background``: the struct probes' compilers), run
in a thread of the driver beside the steps after them.

On vLLM with default probes the driver spent five of its thirteen seconds waiting for the probes'
compilers, and only then ran the metrics, concepts, layers and the bundle; the compilers use the
cores the driver's own steps leave. A background step starts as soon as the steps it requires
are done (one still in a forked child, extractor.support.forkmap.Ahead, is read back by the
thread itself, once for both), and the driver joins it before the first later step that
requires it and before the bundle. What it computes does not depend on when it ran: it sees the
results of the steps it requires and none other (:meth:`extractor.context.Context.view`, in
order too), and while it runs, reading its result without requiring it raises.

Started earlier, during the scan once the C/C++ files are scanned, the compilers shared the two
cores with the scan's workers and the probe thread's planning held the interpreter's lock while the driver
fed them: the scan took twice as long and the run no less (vLLM, default probes, 3 rounds:
13.9 s against 13.6 s after the scan, 25.0 against 23.2 CPU s).

The thread is the driver's: its compilers are the driver's children, as before (bounded and
killed by extractor.support.safeproc), and a child forked meanwhile (fork_map) copies none of
its threads. The driver's phases' CPU clocks count the process, so the step's own Python work
lands in the phases it ran beside, and its compilers' in the phases they ended in; the run
log's ``background`` gives the phase it started during, its own wall and thread CPU seconds,
and its phase the driver's wait for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from extractor.context import Context
from extractor.model import Contribution, Step


class Background:
    """One step's ``extract`` in a thread of its own, its result (or its exception) at :meth:`result`."""

    def __init__(self, ctx: Context, step: Step[Any], needs: Mapping[str, Callable[[], Contribution[Any]]], *,
                 during: str) -> None:
        """``needs``: each required step's result, got in the thread (a result in hand, or a
        forked child's read back); ``during``: the driver's phase when it started (the run log
        says it)."""
        self.step = step
        self.during = during
        self.wall_s = 0.0
        self.cpu_s = 0.0
        self._ctx, self._needs = ctx, needs
        self._outcome: tuple[Contribution[Any] | None, BaseException | None] = (None, None)
        self._thread = threading.Thread(target=self._run, name=f"archdiff-{step.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            results = {name: need() for name, need in self._needs.items()}
            self._outcome = (self.step.extract(self._ctx.view(results)), None)
        except BaseException as err:  # noqa: BLE001 (raised again in the driver, at join)
            self._outcome = (None, err)
        finally:
            self.wall_s, self.cpu_s = time.perf_counter() - wall, time.thread_time() - cpu

    def result(self) -> Contribution[Any]:
        """The step's contribution once its thread is done; what it raised is raised here."""
        self._thread.join()
        result, error = self._outcome
        if error is not None:
            raise error
        assert result is not None
        if result.nodes or result.edges:
            # the layers merge every result's graph parts while this one may still run
            raise ValueError(f"step {self.step.name!r} runs in the background and may not add graph parts")
        return result

    def run_log(self) -> dict[str, float | str]:
        return {"started_during": self.during, "wall_s": round(self.wall_s, 3), "thread_cpu_s": round(self.cpu_s, 3)}
