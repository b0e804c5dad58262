"""The Python symbol graph on a handwritten package whose every edge a reader can check by hand."""

from __future__ import annotations

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES
from tests.helpers import edge_set, nodes_by_id


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return extract_system([str(FIXTURES / "pysample")], options=ExtractOptions(jobs=1, cache_dir=cache)).bundle


P = "py:servekit.engine."


def test_qualnames_follow_python_rules(bundle):
    nodes = nodes_by_id(bundle)
    assert nodes[P + "core.Engine.step.<locals>.pick.<locals>.first"]["kind"] == "function"
    assert nodes[P + "core.Engine.Stats.total"]["kind"] == "method"
    assert nodes[P + "core.build.<locals>.make"]["line"] == 37  # first of the two if/else definitions
    assert "async" in nodes[P + "core.Engine.step"]["tags"]
    assert {"property"} <= set(nodes[P + "scheduler.Scheduler.waiting"]["tags"])
    assert "staticmethod" in nodes[P + "scheduler.Scheduler.make"]["tags"]
    assert "classmethod" in nodes[P + "scheduler.Scheduler.from_config"]["tags"]
    assert nodes[P + "scheduler.Scheduler"]["doc"] == "Priority scheduler over a heap."
    assert nodes[P + "scheduler.Scheduler.add"]["signature"] == "(self, priority: int, item: T) -> None"
    # src/ is not a package, so the module is servekit...; a script beside the package is top-level.
    assert nodes["py:servekit"]["path"] == "src/servekit/__init__.py"
    assert nodes["py:launch"]["path"] == "scripts/launch.py"


def test_inherits_resolve_through_imports_to_nodes_or_external_names(bundle):
    inherits = edge_set(bundle, "inherits")
    assert (P + "scheduler.Scheduler", P + "base.BaseScheduler") in inherits  # relative import
    assert (P + "core.Checked", P + "base.BaseScheduler") in inherits  # module attribute base.X
    assert (P + "scheduler.Scheduler", "py:typing.Generic") in inherits  # subscripted external base
    assert (P + "base.BaseScheduler", "py:abc.ABC") in inherits
    assert nodes_by_id(bundle)["py:abc.ABC"]["kind"] == "external"


def test_imports_are_module_to_module_with_relative_and_reexports(bundle):
    imports = edge_set(bundle, "imports")
    assert ("py:servekit", P + "scheduler") in imports  # from .engine.scheduler import ...
    assert (P + "core", "py:servekit") in imports  # from servekit import DefaultScheduler
    assert (P + "core", P + "base") in imports  # from servekit.engine import base (a submodule)
    assert (P + "scheduler", "py:heapq") in imports
    assert ("py:launch", "py:os.path") in imports


def test_calls_cover_locals_imports_self_super_and_instantiation(bundle):
    calls = edge_set(bundle, "calls")
    expected = {
        # re-exported alias: servekit.DefaultScheduler is engine.scheduler.Scheduler
        (P + "core.Engine.__init__", P + "scheduler.Scheduler"),
        # module alias and a static method: sched_mod.Scheduler.make()
        (P + "core.Engine.__init__", P + "scheduler.Scheduler.make"),
        # nested class through the enclosing class name
        (P + "core.Engine.__init__", P + "core.Engine.Stats"),
        # self.method, and a function-local import
        (P + "core.Engine.run_forever", P + "core.Engine.step"),
        (P + "core.Engine.run_forever", P + "scheduler.Scheduler.from_config"),
        # enclosing-function locals, two levels deep
        (P + "core.Engine.step", P + "core.Engine.step.<locals>.pick"),
        (P + "core.Engine.step.<locals>.pick", P + "core.Engine.step.<locals>.pick.<locals>.first"),
        # super() and an inherited method through self
        (P + "scheduler.Scheduler.__init__", P + "base.BaseScheduler.__init__"),
        (P + "scheduler.Scheduler.schedule", P + "base.BaseScheduler.reset"),
        (P + "core.Checked.schedule", P + "base.BaseScheduler.reset"),
        # cls(...) in a classmethod
        (P + "scheduler.Scheduler.from_config", P + "scheduler.Scheduler"),
        ("py:launch.main", P + "core.Engine"),
        ("py:launch", "py:launch.main"),
        # values of a known class: self.scheduler = DefaultScheduler(), a parameter annotated
        # Optional[base.BaseScheduler], and a local assigned Engine()
        (P + "core.Engine.step", P + "scheduler.Scheduler.schedule"),
        (P + "core.drain", P + "base.BaseScheduler.reset"),
        (P + "core.local_instance", P + "core.Engine.run_forever"),
    }
    assert expected <= calls
    # A parameter shadows the module-level name it spells: `base.BaseScheduler()` inside
    # shadowed(base) is not a call of servekit.engine.base.BaseScheduler.
    assert not {t for s, t in calls if s == P + "core.shadowed"}
    # Nothing resolves to a name that does not exist: every call edge ends at a defined node.
    nodes = nodes_by_id(bundle)
    assert all(nodes[t]["kind"] != "external" for _s, t in calls)
    stats = bundle["stats"]["python"]
    assert stats["calls_resolved"] >= len(calls)  # call sites, of which edges keep one per pair
    assert stats["call_sites"] == sum(stats[k] for k in ("calls_resolved", "calls_builtin", "calls_external",
                                                          "calls_unresolved"))


def test_external_calls_are_kept_as_call_sites_for_cross_language_binding(tmp_path):
    from extractor.python import graph as pysymbols
    from extractor.run.cache import FactCache
    from extractor.context import Context
    from extractor.acquire.inventory import list_files
    from extractor.run.compute import Progress, _read, _scan
    from extractor.acquire.sources import acquire, parse_spec

    pkg = tmp_path / "src" / "kern"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("import torch\nfrom torch import ops as tops\n\n\n"
                                "def attn(q):\n    tops._C.cache(q)\n    return torch.ops._C.paged_attention_v1(q)\n")
    source = acquire(parse_spec(str(tmp_path / "src")), tmp_path / "c")
    entries, _ = list_files(source)
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "c")
    blobs, _ = _read([(source, e) for e in entries], (pysymbols.STEP,))
    files, _, _, _ = _scan(blobs, (pysymbols.STEP,), options, FactCache(None), Progress())
    ctx = Context("kern", "1", (source,), files, options)
    sites = pysymbols.extract_python_graph(ctx).shared.call_sites
    assert [(s.caller, s.callee, s.path, s.line) for s in sites] == [
        ("py:kern.ops.attn", "torch.ops._C.cache", "kern/ops.py", 6),
        ("py:kern.ops.attn", "torch.ops._C.paged_attention_v1", "kern/ops.py", 7),
    ]


def test_a_name_resolves_per_scope_though_module_level_names_are_looked_up_once(tmp_path):
    # The same spelling ``run`` bound four ways: a module-level import, an import inside one
    # function, a parameter of another, and a method seen from its class body. Each call goes to
    # what its own scope binds, whatever scope asked first.
    pkg = tmp_path / "src" / "twice"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("def run():\n    pass\n\n\nclass Other:\n    pass\n")
    (pkg / "a.py").write_text(
        "from twice.b import run\n\n\n"
        "def module_level():\n    run()\n\n\n"
        "def local_import():\n    from twice.b import Other as run\n    run()\n\n\n"
        "def parameter(run):\n    run()\n\n\n"
        "class K:\n    def run(self):\n        pass\n    x = run(None)\n\n\n"
        "def after():\n    run()\n")
    bundle = extract_system([str(tmp_path / "src")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    calls = {(s, t) for s, t in edge_set(bundle, "calls") if s.startswith("py:twice.a")}
    assert calls == {
        ("py:twice.a.module_level", "py:twice.b.run"),
        ("py:twice.a.local_import", "py:twice.b.Other"),
        ("py:twice.a.K", "py:twice.a.K.run"),
        ("py:twice.a.after", "py:twice.b.run"),
    }


def test_contains_edges_form_a_tree_rooted_at_modules(bundle):
    contains = edge_set(bundle, "contains")
    parents: dict[str, str] = {}
    for source, target in contains:
        assert target not in parents, f"{target} has two parents"
        parents[target] = source
    nodes = nodes_by_id(bundle)
    for nid, node in nodes.items():
        if node["kind"] in ("class", "function", "method"):
            root = nid
            while root in parents:
                root = parents[root]
            assert nodes[root]["kind"] == "module"
