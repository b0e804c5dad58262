"""Whole-system work split over forked children: :func:`fork_map`; and one call started in a
child beside the driver's own work: :func:`fork_ahead` (a whole step, extractor.run.compute).

After the scan, the driver builds its indexes over the whole system (the merged graph, the
taxonomy's signal index, the facts by file) and then does work that splits by module, node or
edge: scoring every module, encoding every node. That work is the serial part of a run (Amdahl:
what more cores cannot shorten) unless it leaves the driver. Sending it to a pool would mean
pickling the indexes to every worker, which costs as much as building them; a forked child
inherits them copy-on-write for nothing. So :func:`fork_map` forks ``jobs`` children *after* the
indexes exist, each computes its share of the tasks and writes one pickled list of results to a
file in memory of its own (``memfd``: read back in one copy once the child has exited, where a
pipe hands 64 KB per wake-up), and the driver puts them back in input order: the output is the
same whichever child did what.

The results must be compact (bytes, tuples of str and int, msgpack): unpickling a large graph of
dataclasses in the driver costs as much as building it there, and that cost is serial.

Runs in-process, with the same results, when ``jobs`` is 1, when there is one task, when the
platform has no ``fork``, and for the share of any child that fails (fork refused, crashed,
raised, wrote something that does not unpickle): a task that raises therefore raises in the
driver as it would with ``jobs=1``, with its own traceback.

Threads alive at fork time (the progress line's redraw thread on a terminal; a Ray worker's own
threads when Ray runs the extraction; the struct probes' compiler threads are joined before their
step returns) are not copied into the child, and the locks they held stay held there. A child
therefore only computes: it never draws, logs or writes a file; its ``sys.stdout`` and
``sys.stderr`` are its own (``/dev/null``: a warning cannot wait on the lock of a stream the
progress thread was writing to); it leaves with ``os._exit`` (no atexit handler, no flush of
buffers it shares with the driver, no finaliser of the driver's sqlite connection); and ``work``
must be plain computation on what the driver holds (no locks, no I/O). A child ignores Ctrl-C
(the driver kills its children and raises) and dies with the driver (``PR_SET_PDEATHSIG``). Its
cyclic garbage collector is off: a collection writes to every tracked object and would copy the
driver's whole heap.

Accounting: a child's CPU is the driver's children's CPU (``RUSAGE_CHILDREN``, once reaped before
:func:`fork_map` returns), so the run log counts it as workers' time of the phase; the driver's
forking, reading and unpickling is the driver's own, serial.
"""

from __future__ import annotations

import ctypes
import gc
import mmap
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Each fork costs the driver 12-26 ms on vLLM (copying the page tables of its heap): serial CPU
# that grows with the children, where the work split here is a few tenths of a second. Four
# children bring that work's wall time under a tenth; each one more would cost the driver about
# as much CPU as it saves in wall time.
MAX_CHILDREN = 4

_forked = [0.0]  # wall seconds this process has waited on fork_map's children, since it started


def forked_seconds() -> float:
    """Wall seconds this process has spent in fork_map's working windows (first fork to last
    result read), since it started: a run log takes the difference over a run, as it takes the
    scan pool's window, because more cores shorten that time too."""
    return _forked[0]


def fork_map(work: Callable[[T], R], tasks: Sequence[T], jobs: int,
             meanwhile: Callable[[], object] | None = None) -> list[R]:
    """``[work(task) for task in tasks]``, computed by up to ``jobs`` forked children (at most
    :data:`MAX_CHILDREN`).

    Child ``k`` of ``n`` takes tasks ``k, k + n, k + 2n, ...`` (tasks next to each other often
    cost alike, so each child gets a like share of cheap and dear ones); give a few tasks per job,
    each a span of the items (:func:`spans`). ``work`` is never pickled (a closure over the
    driver's indexes is the usual case); what it returns is, so keep it compact. See the module's
    docstring for when it runs in-process and what ``work`` may not do.

    ``meanwhile``: work of the driver's own, called once the children are forked and before their
    results are read, so that it runs beside theirs (in-process: after the tasks). It must not
    change what the tasks read. Its time is the driver's, not the children's window."""
    children = min(jobs, len(tasks), MAX_CHILDREN)
    if children <= 1 or not hasattr(os, "fork"):
        computed = run_here(work, tasks)
        if meanwhile is not None:
            run_meanwhile(meanwhile)
        return computed
    shares: list[list[R] | None] = [None] * children
    running: dict[int, tuple[int, int]] = {}  # share -> (pid, its results file)
    window = time.perf_counter()
    try:
        for share in range(children):
            started = _fork(work, tasks[share::children])
            if started is not None:
                running[share] = started
        if meanwhile is not None:
            own = time.perf_counter()
            run_meanwhile(meanwhile)
            window += time.perf_counter() - own  # the driver's own work: not the children's window
        for share, (pid, fd) in list(running.items()):
            shares[share] = _results(pid, fd)
            del running[share]
            os.close(fd)
    finally:
        for pid, fd in running.values():  # interrupted: no child outlives the call
            _end(pid, fd)
        _forked[0] += time.perf_counter() - window
    ordered: list[R] = [None] * len(tasks)  # type: ignore[list-item]
    for share, results in enumerate(shares):
        # never forked, or failed: its tasks run here, a task's exception included
        ordered[share::children] = run_here(work, tasks[share::children]) if results is None else results
    return ordered


def run_meanwhile(meanwhile: Callable[[], object]) -> None:
    """The driver's own work beside a round of children (:func:`fork_map`'s ``meanwhile``); one
    function, so that a profiler can tell it from the round's tasks (bench.extract_vs_baselines)."""
    meanwhile()


class Ahead(Generic[R]):
    """One call started in a forked child beside the driver's own work (:func:`fork_ahead`), its
    result read back when the driver needs it. The result crosses as pickled bytes whichever
    process computed it, so unpickling it is the driver's CPU with any ``jobs``."""

    def __init__(self, call: Callable[[], R], child: tuple[int, int] | None) -> None:
        self._call = call
        self._child = child
        self._lock = threading.Lock()
        self._done: tuple[R] | None = None

    def result(self, *, driver: bool = True) -> R:
        """The call's result: the child's once it has exited, else (never forked, or it failed)
        computed here. Computed once: a step in the background (``Step.background``) may ask for
        it from its thread before the driver does, and both get the same object. The time the
        driver waits for the child is counted with fork_map's windows (the run log's
        ``fork_map_s``): the driver only waits then, as it does for fork_map's children; a
        thread's wait (``driver=False``) is not, the driver works meanwhile."""
        with self._lock:
            if self._done is None:
                self._done = (self._compute(driver),)
            return self._done[0]

    def _compute(self, driver: bool) -> R:
        if self._child is not None:
            encoded = self._wait(*self._child, driver)
            if encoded is not None:
                try:
                    return pickle.loads(encoded[0])
                except Exception:  # noqa: BLE001 (what does not unpickle here is computed here)
                    pass
        return pickle.loads(run_here(_pickled, [self._call])[0])

    def _wait(self, pid: int, fd: int, driver: bool) -> list | None:
        """The child's results once it has exited (None: it failed), the driver's wait in the window."""
        window = time.perf_counter()
        try:
            return _results(pid, fd)
        finally:
            self._child = None
            os.close(fd)
            if driver:
                _forked[0] += time.perf_counter() - window

    def cancel(self) -> None:
        """The driver gave up on the result (a step before it raised): the child ends now, or
        once a thread already waiting for it has its result."""
        with self._lock:
            if self._child is not None:
                _end(*self._child)
                self._child = None


def fork_ahead(call: Callable[[], R], jobs: int) -> Ahead[R]:
    """``call()`` started in a forked child when ``jobs`` allows more than the driver, while the
    driver goes on with work of its own; the same rules as :func:`fork_map` (``call`` is plain
    computation on what the driver holds at the fork; its result must pickle). With one job, or
    without ``fork``, the call waits for :meth:`Ahead.result` and runs in the driver."""
    child = _fork(_pickled, [call]) if jobs > 1 and hasattr(os, "fork") else None
    return Ahead(call, child)


def start_call(call: Callable[[], R], *, outlive: bool = False) -> tuple[int, int] | None:
    """``call()`` started in a forked child (its pid and results file, for :func:`finish_call`),
    or None without ``fork`` or when the system refuses a process. The rules of :func:`fork_map`,
    but for ``outlive``: such a child is not killed when the driver dies, so work that must end
    whole once begun (writing a tree into place: extractor.acquire.archives) may run in it."""
    return _fork(_call, [call], outlive) if hasattr(os, "fork") else None


def finish_call(child: tuple[int, int]) -> tuple[Any] | None:
    """``(result,)`` of a :func:`start_call` child once it has exited; None when it failed (it
    died, raised, or was reaped by someone else): the caller then does the work itself."""
    pid, fd = child
    try:
        found = _results(pid, fd)
    finally:
        os.close(fd)
    return None if found is None else (found[0],)


def _pickled(call: Callable[[], R]) -> bytes:
    return pickle.dumps(call(), protocol=pickle.HIGHEST_PROTOCOL)


def fork_calls(calls: Sequence[Callable[[], R]], jobs: int) -> list[R]:
    """``[call() for call in calls]`` by :func:`fork_map`: work of different kinds (each call a
    closure over the driver's indexes) shared by one round of children, forked once."""
    return fork_map(_call, calls, jobs)


def _call(call: Callable[[], R]) -> R:
    return call()


def run_here(work: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
    """The tasks computed in this process (a benchmark wraps it to tell this CPU apart from the
    driver's serial part)."""
    return [work(task) for task in tasks]


def spans(count: int, parts: int) -> list[range]:
    """``range(count)`` cut into at most ``parts`` contiguous, non-empty spans of near-equal length."""
    parts = max(1, min(parts, count))
    return [range(count * i // parts, count * (i + 1) // parts) for i in range(parts) if count]


def _fork(work: Callable[[T], R], tasks: Sequence[T], outlive: bool = False) -> tuple[int, int] | None:
    """Start a child that computes ``tasks``: (its pid, the file it writes its results to), or
    None when the system refuses a process (those tasks then run in the driver). ``outlive``: it
    does not die with the driver."""
    fd = _results_file()
    try:
        with warnings.catch_warnings():
            # Python 3.12 warns on fork with other threads alive: the module's docstring says why it is safe here
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(fd)
        return None
    if pid == 0:
        _serve(work, tasks, fd, outlive)
    return pid, fd


def _results_file() -> int:
    """A file only this process and its children can reach: in memory (Linux), else unlinked."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("archdiff-fork-map", os.MFD_CLOEXEC)
    fd, path = tempfile.mkstemp(prefix="archdiff-fork-map-")
    os.unlink(path)
    return fd


def _serve(work: Callable[[T], R], tasks: Sequence[T], fd: int, outlive: bool = False) -> None:
    """In the child: compute, write, leave. Never returns: a child that got back into the
    caller's code would run the rest of the driver's pipeline a second time."""
    code = 1
    try:
        gc.disable()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not outlive:
            die_with_parent()
        # The progress thread may have held the lock of the driver's stderr at the fork, held in
        # this copy forever: a warning the work raises goes to streams of the child's own.
        sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (left to os._exit)
        with open(fd, "wb", closefd=False) as out:
            pickle.dump(run_here(work, tasks), out, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)


def _results(pid: int, fd: int) -> list | None:
    """A child's results, once it has exited: None when it failed."""
    try:
        _pid, status = os.waitpid(pid, 0)
    except ChildProcessError:  # reaped by someone else: how it went is not known here
        return None
    size = os.fstat(fd).st_size
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not size:
        return None
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as written:
        try:
            return pickle.loads(written)
        except Exception:  # noqa: BLE001 (what does not unpickle here is computed here)
            return None


def _end(pid: int, fd: int) -> None:
    """A child the driver no longer waits for: killed and reaped, its file closed."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass  # reaped already
    os.close(fd)


def die_with_parent() -> None:
    """Linux: SIGKILL this process (a child of :func:`fork_map`, a worker of
    extractor.run.workerpool) when its parent dies, even in the middle of work that would never
    end (a pipe's end-of-file only reaches a process that reads)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
