"""Calls on values whose class the code says: module-level names, and what calls return.

Servers keep their registries and platforms as module-level objects (vLLM's
``MULTIMODAL_REGISTRY = MultiModalRegistry()``, ``current_platform: Platform`` declared for type
checkers) and call them from everywhere: ``MULTIMODAL_REGISTRY.register_processor(...)``. Such a
call runs the class's method when every assignment the module makes to the name says it holds that
class; when one assignment says another class, or nothing a reader can follow, or a ``global``
statement or a loop rebinds the name, the call stays unresolved (no guess).

They also call methods on what a call returns: ``get_world_group().barrier()``,
``EngineArgs(...).create_engine_config()``, ``self.get_hf_processor().get_num_image_tokens(...)``.
The class called, or the one class of the system a function's return annotation names, is what
the method is looked up in.
"""

from __future__ import annotations

from tests.native_support import edges, written_bundle

FILES = {
    "app/__init__.py": "",
    "app/registry.py": """
        from typing import TYPE_CHECKING


        class Registry:
            def register(self, name):
                return name


        class Other:
            def register(self, name):
                return name


        class Platform:
            def is_cuda(self):
                return True


        REGISTRY = Registry()
        maybe = Registry()
        maybe = Other()
        made = Registry()
        made = make_one()
        rebound = Registry()
        looped = Registry()
        for looped in range(3):
            pass

        if TYPE_CHECKING:
            current_platform: Platform


        def reset():
            global rebound
            rebound = None


        def register_here():
            REGISTRY.register("here")
            maybe.register("maybe")
            made.register("made")
            rebound.register("rebound")
            looped.register("looped")


        def shadowed(REGISTRY):
            REGISTRY.register("a parameter")
        """,
    "app/models.py": """
        from app import registry
        from app.registry import REGISTRY, current_platform


        def load():
            REGISTRY.register("model")
            if current_platform.is_cuda():
                return 1


        def load_through_the_module():
            registry.REGISTRY.register("model")
        """,
}
P = "py:app."


def test_a_module_level_instance_calls_its_class_method(tmp_path):
    calls = edges(written_bundle(tmp_path, FILES), "calls")
    assert (P + "registry.register_here", P + "registry.Registry.register") in calls
    assert (P + "models.load", P + "registry.Registry.register") in calls
    assert (P + "models.load_through_the_module", P + "registry.Registry.register") in calls
    # a name declared for type checkers only: the class it is declared as
    assert (P + "models.load", P + "registry.Platform.is_cuda") in calls


def test_a_name_assigned_otherwise_somewhere_resolves_nowhere(tmp_path):
    bundle = written_bundle(tmp_path, FILES)
    calls = edges(bundle, "calls")
    here = {target for source, target in calls if source == P + "registry.register_here"}
    # REGISTRY's call only: maybe (Other too), made (a function's result), rebound (`global`),
    # looped (a `for` target) are unresolved
    assert here == {P + "registry.Registry.register"}
    assert not {target for source, target in calls if source == P + "registry.shadowed"}
    assert bundle["stats"]["python"]["calls_unresolved"] == 6  # those four, make_one() and the parameter's


CHAINS = {
    "app/__init__.py": "",
    "app/group.py": """
        from typing import Optional


        class Group:
            def barrier(self):
                pass

            def sub(self) -> "Group":
                return self


        _WORLD: Optional[Group] = None


        def get_world_group() -> Group:
            return _WORLD


        def get_count() -> int:
            return 0


        def get_any():
            return _WORLD
        """,
    "app/worker.py": """
        from typing import Optional

        from app.group import Group, get_any, get_count, get_world_group


        class Base:
            def group(self) -> Optional[Group]:
                return None


        class Worker(Base):
            def sync(self):
                get_world_group().barrier()

            def sync_sub(self):
                Group().sub().sub().barrier()

            def sync_inherited(self):
                super().group().barrier()
                self.group().barrier()

            def unknown(self):
                get_any().barrier()
                get_count().bit_length()
        """,
}


def test_a_method_of_what_a_call_returns(tmp_path):
    calls = edges(written_bundle(tmp_path, CHAINS), "calls")
    barrier, sub = P + "group.Group.barrier", P + "group.Group.sub"
    assert (P + "worker.Worker.sync", barrier) in calls  # a function's return annotation
    assert {(P + "worker.Worker.sync_sub", target) for target in (P + "group.Group", sub, barrier)} <= calls
    # a method's annotation (Optional, read in its class body), through super() and self
    assert (P + "worker.Worker.sync_inherited", barrier) in calls
    # no annotation, or a builtin: the method is not guessed
    assert {target for source, target in calls if source == P + "worker.Worker.unknown"} == {
        P + "group.get_any", P + "group.get_count"}


CLASS_BODIES = {
    "app/__init__.py": "",
    "app/service.py": """
        from dataclasses import dataclass
        from typing import ClassVar, Optional


        class Tracker:
            def record(self):
                pass


        class Service:
            shared: Tracker = Tracker()  # annotated
            made = Tracker()  # the class called
            counter: ClassVar[int] = 0

            def run(self):
                self.shared.record()
                self.made.record()
                self.counter.bit_length()


        @dataclass
        class Config:
            tracker: Optional[Tracker] = None

            def note(self):
                self.tracker.record()


        class Child(Service):
            def go(self):
                self.shared.record()
        """,
}


def test_an_attribute_the_class_body_types_gives_self_calls_its_class(tmp_path):
    bundle = written_bundle(tmp_path, CLASS_BODIES)
    calls = edges(bundle, "calls")
    record = P + "service.Tracker.record"
    assert {(P + "service.Service.run", record), (P + "service.Config.note", record),
            (P + "service.Child.go", record)} <= calls  # a base's class body too
    assert {target for source, target in calls if source == P + "service.Service.run"} == {record}
