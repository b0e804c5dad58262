"""The class inside a subscripted annotation types the name, as ``Optional[X]``'s does: typing's
``Final``/``Annotated`` (``ClassVar`` too), and an actor framework's reference to an actor (xoscar's and
Mars's ``ActorRefType[X]``, ``Union[ActorRef, X]``), whose method calls run the actor's methods
(``self._tracker_ref: xo.ActorRefType[Tracker]``, ``await self._tracker_ref.record(...)``).
A container (``list[X]``) still names no class of the object."""

from __future__ import annotations

import textwrap

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.helpers import edge_set

ACTORS = '''
import xoscar as xo


class Tracker(xo.StatelessActor):
    async def record(self, uid):
        return uid


class Guard(xo.StatelessActor):
    def update(self, info):
        return info


class Worker(xo.StatelessActor):
    def __init__(self):
        super().__init__()
        self._tracker_ref: xo.ActorRefType[Tracker] = None
        self._guard_ref: xo.ActorRefType["Guard"] = None
        self._all: list[Tracker] = []

    def guard(self) -> xo.ActorRefType["Guard"]:
        return self._guard_ref

    async def launch(self, uid):
        await self._tracker_ref.record(uid)
        self.guard().update(uid)

    def spread(self):
        for tracker in self._all:
            tracker.record(1)
'''

TYPING = '''
from typing import Annotated, Final

from .actors import Guard, Tracker


def make():
    return Tracker()


class Holder:
    def __init__(self, guard: Annotated[Guard, "injected"]):
        self.guard: Final[Guard] = guard

    def run(self):
        tracker: Final[Tracker] = make()
        tracker.record(1)
        self.guard.update(2)
'''

P = "py:pkg."


def test_an_actor_reference_and_typing_qualifiers_type_their_names(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "actors.py").write_text(textwrap.dedent(ACTORS))
    (tmp_path / "src" / "pkg" / "holder.py").write_text(textwrap.dedent(TYPING))
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache", probe_structs=False)
    calls = edge_set(extract_system([str(tmp_path / "src")], options=options).bundle, "calls")
    assert {target for source, target in calls if source == P + "actors.Worker.launch"} == {
        P + "actors.Tracker.record", P + "actors.Worker.guard", P + "actors.Guard.update"}
    assert {target for source, target in calls if source == P + "actors.Worker.spread"} == set()
    assert {target for source, target in calls if source == P + "holder.Holder.run"} == {
        P + "holder.make", P + "actors.Tracker.record", P + "actors.Guard.update"}
