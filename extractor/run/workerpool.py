"""Worker processes that one hostile input cannot take down with it.

A file can crash a native parser (libcst's overflows its stack on a few thousand nested
lambdas: SIGSEGV), keep it busy for hours (libcst is quadratic on long operator chains) or make
it allocate without end. ``ProcessPoolExecutor`` loses every pending result when one worker dies
(``BrokenProcessPool``) and cannot say which input killed it. Here each worker has a pipe of its
own and holds one item at a time, so the item a dead or overdue worker held is known: it alone
becomes a :class:`Failure`, and a fresh worker takes over the rest. With one job there is still
one worker process, so the run itself never executes a parser on untrusted input.

Forked workers inherit the items (the parent holds them when it starts each worker): the parent
sends an item's index, not the item, so a file's bytes are neither pickled nor copied through a
pipe by the parent, whose work per item is serial however many workers there are (vLLM: 25 MB,
about a tenth of a second of the parent's CPU). Without ``fork`` the items go through the pipe.

Each worker's address space is capped at its size when it starts plus ``memory_bytes``
(``RLIMIT_AS``; a forked worker is single-threaded, so setting it there is safe), and its stderr
goes to /dev/null: what a crashing native parser prints is noise, and the parent reports the
crash as a diagnostic of the file instead.

Small items travel in batches (``weight``, ``batch_weight``): the parent's work per message
(waking a worker, reading its reply, the pickles of both) was vLLM's largest serial cost in the
pool's window, about 0.1 ms a message, and most of vLLM's 2,468 files are small: batches of up
to 64 KB and 16 files carry them in 479 messages. A worker answers a batch in one message.
A batch whose worker dies or overruns is sent again one item at a time, so the item to blame is
still the one named (a hanging item in a batch costs its batch's timeout once more).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import faulthandler
import gc
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.reduction import ForkingPickler
from typing import Any

from extractor.errors import ArchdiffError
from extractor.support.forkmap import die_with_parent

_POLL_SECONDS = 0.5
_MAX_IDLE_DEATHS = 3  # workers dying before taking any item: the pool itself is broken


@dataclasses.dataclass(frozen=True, slots=True)
class Failure:
    """Why an item has no result: ``crashed`` (the worker died: ``detail`` names the signal),
    ``timed-out`` (``detail`` is the limit), or ``failed`` (an exception the work function let out)."""

    kind: str
    detail: str


@dataclasses.dataclass(slots=True)
class _Worker:
    process: Any
    conn: multiprocessing.connection.Connection
    held: tuple[int, ...] = ()  # the indexes of the items it works on (several: a batch)
    since: float = 0.0  # when it took that item
    ready: bool = False  # its init ran: a death from now on is the held item's doing
    inherited: bool = False  # it was forked holding the items: it is sent their indexes


def run_guarded(items: Sequence[Any], work: Callable[[Any], Any], *, jobs: int, timeout: float,
                memory_bytes: int | None = None, init: Callable[..., None] | None = None,
                initargs: tuple = (), weight: Callable[[Any], int] | None = None, batch_weight: int = 0,
                batch_items: int = 16) -> Iterator[Any]:
    """Yield ``work(item)`` for each item, in input order, or a :class:`Failure` for an item whose
    worker crashed, overran ``timeout`` seconds or raised. ``work`` and ``init`` run in workers.
    Consecutive items whose ``weight`` adds up to at most ``batch_weight`` go to a worker together,
    ``batch_items`` at most (none without ``weight``); ``timeout`` is a batch's."""
    if not items:
        return
    forked = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if forked else None)
    inherited = items if forked else None  # a forked worker has them: only indexes cross its pipe
    queue = collections.deque(range(len(items)))
    batches = _Batches(items, weight, batch_weight, batch_items)
    done: dict[int, Any] = {}
    workers: list[_Worker] = []
    idle_deaths = 0
    emitted = 0
    try:
        while emitted < len(items):
            for worker in workers:
                _feed(worker, queue, items, batches)
            while queue and len(workers) < jobs:  # never more workers than there is work for
                workers.append(_start(context, work, init, initargs, memory_bytes, [w.conn for w in workers],
                                      inherited))
                _feed(workers[-1], queue, items, batches)
            readable = set(multiprocessing.connection.wait([w.conn for w in workers] +
                                                           [w.process.sentinel for w in workers],
                                                           timeout=_POLL_SECONDS))
            for worker in list(workers):
                alive = _collect(worker, done, worker.conn in readable)
                overdue = alive and bool(worker.held) and time.monotonic() - worker.since > timeout
                if alive and not overdue:
                    continue
                if overdue:
                    worker.process.kill()
                _stop(worker)
                workers.remove(worker)
                if not worker.ready or not worker.held:
                    queue.extendleft(reversed(worker.held))  # not its doing: the worker never started on them
                    idle_deaths += 1
                    if idle_deaths > _MAX_IDLE_DEATHS:
                        raise ArchdiffError(f"worker processes keep dying before taking any file "
                                            f"({_exit_reason(worker.process.exitcode)})")
                    continue
                if len(worker.held) > 1:  # one of the batch's items is to blame: each goes again alone
                    batches.alone.update(worker.held)
                    queue.extendleft(reversed(worker.held))
                    continue
                done[worker.held[0]] = (Failure("timed-out", f"{timeout:g} s") if overdue
                                        else Failure("crashed", _exit_reason(worker.process.exitcode)))
            # The workers that just finished get their next file before the caller sees results:
            # it decodes and caches them meanwhile, and a worker would otherwise wait for that.
            for worker in workers:
                _feed(worker, queue, items, batches)
            while emitted in done:
                yield done.pop(emitted)
                emitted += 1
    finally:
        for worker in workers:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            _stop(worker, grace=1.0)


def _start(context, work, init, initargs, memory_bytes, siblings: list, inherited: Sequence[Any] | None) -> _Worker:
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(child, work, init, initargs, memory_bytes, [*siblings, parent],
                                                   inherited), daemon=True)
    process.start()
    child.close()
    return _Worker(process, parent, inherited=inherited is not None)


class _Batches:
    """Which of the queue's next items go to a worker together."""

    def __init__(self, items: Sequence[Any], weight: Callable[[Any], int] | None, most: int, count: int) -> None:
        self._weights = [weight(item) for item in items] if weight is not None and most > 0 and count > 1 else None
        self._most, self._count = most, count
        self.alone: set[int] = set()  # items of a batch whose worker died or overran: sent alone since

    def take(self, queue: collections.deque) -> tuple[int, ...]:
        first = queue.popleft()
        weights = self._weights
        if weights is None or first in self.alone or weights[first] > self._most:
            return (first,)
        batch, total = [first], weights[first]
        while (queue and len(batch) < self._count and queue[0] not in self.alone
               and total + weights[queue[0]] <= self._most):
            total += weights[queue[0]]
            batch.append(queue.popleft())
        return tuple(batch)


def _feed(worker: _Worker, queue: collections.deque, items: Sequence[Any], batches: _Batches) -> None:
    """Send the next item, or batch of small items, to a worker that holds none. One message at a
    time, on purpose: with two, the parent could block sending a large file while the worker
    blocks sending a large result."""
    if not queue or worker.held:
        return
    held = batches.take(queue)
    try:
        worker.conn.send(held if worker.inherited else tuple((index, items[index]) for index in held))
    except OSError:  # the worker is gone; the items were never taken, so none is the culprit
        queue.extendleft(reversed(held))
        return
    worker.since = time.monotonic()
    worker.held = held


def _collect(worker: _Worker, done: dict[int, Any], readable: bool) -> bool:
    """Take the message waiting on a ``readable`` worker's pipe (another one still there wakes the
    next wait at once), and every one a worker that is gone left; False once it is gone. No poll
    per item where the wait already told: each poll builds a selector, about 2% of the parent's
    CPU in the pool's window on vLLM."""
    try:
        if readable:
            _take(worker, done, worker.conn.recv())
        alive = worker.process.is_alive()
        while not alive and worker.conn.poll():
            _take(worker, done, worker.conn.recv())
    except (EOFError, OSError):
        return False
    return alive


def _take(worker: _Worker, done: dict[int, Any], message: list[tuple[int, bool, Any]] | str) -> None:
    """A worker's message: "ready" (its init is done), or the replies to what it held, in a list."""
    if isinstance(message, str):  # "ready"
        worker.ready = True
        worker.since = time.monotonic()
        return
    worker.held = ()
    for index, ok, value in message:
        done[index] = value if ok else Failure("failed", value)


def _stop(worker: _Worker, grace: float = 0.0) -> None:
    worker.process.join(grace)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join()
    worker.conn.close()


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


# -- in the worker -----------------------------------------------------------------------------

def _serve(conn, work, init, initargs, memory_bytes, parent_ends, inherited) -> None:
    # A forked worker holds copies of the parent's end of its own pipe and of its siblings': all
    # closed, so that when the parent dies (even by SIGKILL) every worker reads end-of-file and exits.
    for other in parent_ends:
        with contextlib.suppress(OSError):
            other.close()
    die_with_parent()
    # Forked from a driver that turns the cyclic collector off for a run (extractor.run.pipeline):
    # everything the driver made is still in the young generations, and the worker's first
    # collections would walk it all (and copy every page it touches). Those objects are the
    # driver's: frozen, never walked here. The worker's own cycles are collected (_work_on).
    gc.freeze()
    gc.enable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    faulthandler.disable()  # its dump of a crashing parser would reach the user's terminal
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    if memory_bytes is not None:
        _cap_address_space(memory_bytes)
    if init is not None:
        init(*initargs)
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        # the indexes held (a forked worker has the items), or (index, item) pairs
        entries = [(index, inherited[index]) for index in message] if inherited is not None else message
        replies = [_work_on(index, item, work) for index, item in entries]
        try:
            conn.send(replies)
        except (OSError, ValueError):
            return
        except Exception:  # noqa: BLE001 (a result that does not pickle: that item's failure)
            conn.send([_picklable(reply) for reply in replies])


def _picklable(reply: tuple[int, bool, Any]) -> tuple[int, bool, Any]:
    try:
        ForkingPickler.dumps(reply)
    except Exception as err:  # noqa: BLE001 (whatever pickling raises is the item's failure)
        return reply[0], False, f"{type(err).__name__}: {err}"
    return reply


def _work_on(index: int, item: Any, work: Callable[[Any], Any]) -> tuple[int, bool, Any]:
    """``work(item)`` as the reply to send, with the cyclic collector paused while it runs.

    An item's work builds a large tree (a file's syntax tree, its index) that lives until the
    item is done and is then freed by reference counting. A collection in between walks that
    live tree for nothing, and the collections a parse triggers walk it over and over: on
    vLLM's files a fifth of the workers' CPU went to the collector. Paused, the collector still
    counts what the item allocates and does not free, and the first allocation after the pause
    (the next item's message) starts the collections those leftovers call for: cycles are
    collected between items, as the thresholds would have had them collected."""
    gc.disable()
    try:
        return index, True, work(item)
    except Exception as err:  # noqa: BLE001 (reported as this item's failure, the rest go on)
        return index, False, f"{type(err).__name__}: {err}"
    finally:
        gc.enable()


def _cap_address_space(extra: int) -> None:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return  # no /proc: no cap rather than a wrong one
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = current + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or limit < soft:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
