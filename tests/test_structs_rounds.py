"""The probe rounds' schedule (extractor.structs.probe._Rounds): a header whose first attempt
failed goes on without waiting for headers it cannot share a batch with, and a group of headers
after one first preamble is planned once, with exactly its own waiting headers, when the last of
them has had its first attempt. Compiles are stood in for by fakes: what is checked is the order
of the work, which decides the run's wall time and none of its results."""

from __future__ import annotations

import concurrent.futures
import threading
from pathlib import Path

from extractor.model import Language
from extractor.structs.batch import BatchOutcome
from extractor.structs.header import HeaderProbe
from extractor.structs.probe import _Rounds
from extractor.structs.probecache import ProbeResult

WAIT = 20.0  # seconds a fake compile waits for what the schedule should let happen first


def _probe(name: str) -> HeaderProbe:
    return HeaderProbe(name, Path(f"/tree/{name}"), Language.CPP, ())


class _Fake:
    """A header's probe: ``first`` lays it out or leaves it waiting (after ``before`` is set, when
    given), ``rest`` lays it out and sets ``rest_started``."""

    def __init__(self, probe: HeaderProbe, fails_first: bool, before: threading.Event | None = None) -> None:
        self.probe, self.fails_first, self.before = probe, fails_first, before
        self.rest_started = threading.Event()
        self.waited_in_vain = False

    def first(self) -> ProbeResult | None:
        if self.before is not None:
            self.waited_in_vain = not self.before.wait(WAIT)
        return None if self.fails_first else ProbeResult(self.probe.path, ())

    def rest(self) -> ProbeResult:
        self.rest_started.set()
        return ProbeResult(self.probe.path, ())

    def close(self) -> None:
        pass


def _rounds(pool, fakes: dict[str, _Fake], groups: dict[str, tuple | None], plans: list[list[str]]) -> _Rounds:
    def plan_group(waiting: list[HeaderProbe]):
        plans.append([p.path for p in waiting])
        return [], waiting  # every one alone: its rest goes on

    def batch(members, after_preamble):
        return BatchOutcome({m.path: ProbeResult(m.path, ()) for m in members}, (), ())

    return _Rounds(pool, lambda p: fakes[p.path], batch, {}, None, {}, groups, plan_group)


def test_a_header_that_goes_on_alone_does_not_wait_for_the_other_first_attempts() -> None:
    """`slow.h`'s first attempt ends only once `alone.h` has gone on after its failed first
    attempt: with a barrier between the rounds, it would wait in vain."""
    alone, slow = _probe("alone.h"), _probe("slow.h")
    fakes = {"alone.h": _Fake(alone, fails_first=True)}
    fakes["slow.h"] = _Fake(slow, fails_first=False, before=fakes["alone.h"].rest_started)
    plans: list[list[str]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        rounds = _rounds(pool, fakes, {"alone.h": None, "slow.h": ("g",)}, plans)
        rounds.run([], [slow, alone])
    assert not fakes["slow.h"].waited_in_vain
    assert sorted(rounds.done) == ["alone.h", "slow.h"]
    assert plans == []  # the group of slow.h had no header waiting: nothing to plan


def test_a_group_is_planned_once_with_its_own_waiting_headers_when_its_last_first_attempt_ends() -> None:
    """Group g: `a.h` fails at once, `b.h` fails once `other.h` (group h) has gone on, `c.h` is laid
    out by its first attempt. Group h is planned while `b.h` still runs; g after `b.h`, with
    `a.h` and `b.h` alone (not `c.h`, laid out, nor `other.h`, of another group)."""
    probes = {name: _probe(name) for name in ("a.h", "b.h", "c.h", "other.h")}
    fakes = {"a.h": _Fake(probes["a.h"], fails_first=True), "c.h": _Fake(probes["c.h"], fails_first=False),
             "other.h": _Fake(probes["other.h"], fails_first=True)}
    fakes["b.h"] = _Fake(probes["b.h"], fails_first=True, before=fakes["other.h"].rest_started)
    groups = {"a.h": ("g",), "b.h": ("g",), "c.h": ("g",), "other.h": ("h",)}
    plans: list[list[str]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        rounds = _rounds(pool, fakes, groups, plans)
        rounds.run([], [probes["b.h"], probes["a.h"], probes["c.h"], probes["other.h"]])
    assert not fakes["b.h"].waited_in_vain
    assert plans == [["other.h"], ["a.h", "b.h"]]
    assert all(fakes[name].rest_started.is_set() for name in ("a.h", "b.h", "other.h"))
    assert not fakes["c.h"].rest_started.is_set()
    assert sorted(rounds.done) == sorted(probes) and not rounds.waiting


def test_a_batch_laying_out_a_header_counts_as_its_first_attempt() -> None:
    """`x.h` is laid out by a first-round batch; its group's other header `y.h` fails its first
    attempt: the group is planned with `y.h` alone once both have ended."""
    x, y = _probe("x.h"), _probe("y.h")
    fakes = {"y.h": _Fake(y, fails_first=True)}
    plans: list[list[str]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        rounds = _rounds(pool, fakes, {"x.h": ("g",), "y.h": ("g",)}, plans)
        rounds.run([(x, _probe("z.h"))], [y])
    assert plans == [["y.h"]]
    assert rounds.batches == 1 and rounds.headers_batched == 2
    assert sorted(rounds.done) == ["x.h", "y.h", "z.h"]
