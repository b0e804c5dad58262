"""What the Python graph says about a package's API: signatures, attributes, overloads and why each
symbol is public, on a handwritten package (fixtures/pyapi/apipkg) a reader can check by hand."""

from __future__ import annotations

import pytest

from extractor.model import EdgeKind, NodeKind, ParamKind
from tests.apidiff_support import graph
from tests.conftest import FIXTURES

P = "py:apipkg."


@pytest.fixture(scope="module")
def built():
    nodes, edges = graph(FIXTURES / "pyapi")
    return {n.id: n for n in nodes}, edges


@pytest.fixture(scope="module")
def nodes(built):
    return built[0]


def api(nodes, nid):
    return nodes[nid].api


def test_parameters_are_records_with_kinds_annotations_and_defaults(nodes):
    helper = nodes[P + "util.helper"]
    assert [(p.name, p.kind, p.annotation, p.default) for p in helper.params] == [
        ("x", ParamKind.POSITIONAL_ONLY, "int", None), ("y", ParamKind.POSITIONAL_OR_KEYWORD, "int", "2"),
        ("args", ParamKind.VAR_POSITIONAL, "str", None), ("z", ParamKind.KEYWORD_ONLY, "bool", None),
        ("kw", ParamKind.VAR_KEYWORD, "float", None)]
    assert helper.returns == "'list[int]'"
    assert helper.signature == "(x: int, /, y: int=2, *args: str, z: bool, **kw: float) -> 'list[int]'"


def test_overloads_are_kept_each_with_its_line(nodes):
    run = nodes[P + "engine.Engine.run"]
    assert [(o.line, [p.annotation for p in o.params], o.returns) for o in run.overloads] == [
        (45, ["", "int"], "int"), (48, ["", "str"], "str")]
    assert [p.name for p in run.params] == ["self", "job"]  # the implementation


def test_redefinitions_a_later_unconditional_one_wins_a_conditional_one_never(nodes):
    step = nodes[P + "engine.Engine.step"]
    assert step.line == 55 and [p.name for p in step.params] == ["self", "n"]
    assert [(s.line) for s in step.sites] == [53]
    fallback = nodes[P + "engine.Engine.fallback"]  # try/except: which one runs is not known
    assert fallback.line == 58 and [s.line for s in fallback.sites] == [60]


def test_attributes_module_class_instance_properties_and_enum_members(nodes):
    expect = {
        "engine.LIMIT": ("module-attribute", "int", "constant"),
        "engine.Alias": ("module-attribute", "", "expression"),
        "engine.Engine.kind": ("class-attribute", "", "constant"),
        "engine.Engine.size": ("class-attribute", "int", ""),
        "engine.Engine.workers": ("instance-attribute", "int", "alias"),
        "engine.Engine.a": ("instance-attribute", "", ""),  # self.a, self.b = 1, 2
        "engine.Engine.busy": ("property", "bool", "property"),
        "engine.Engine.stats": ("property", "dict", "property"),
        "engine.Mode.FAST": ("class-attribute", "", "enum-member"),
    }
    for name, (tag, annotation, value_kind) in expect.items():
        node = nodes[P + name]
        assert node.kind is NodeKind.ATTRIBUTE and tag in node.tags, name
        assert (node.annotation, node.value_kind) == (annotation, value_kind), name
    # private names, and what a nested function sets on self, are no attributes
    for missing in ("engine._cache", "engine.Engine._secret", "engine.Engine.not_an_attribute", "engine.Mode._ignore_"):
        assert P + missing not in nodes


def test_public_api_reasons(nodes):
    assert api(nodes, P + "engine.Engine") == "public: module-level name"
    assert api(nodes, P + "Engine") == "public: listed in __all__"  # the re-export
    assert api(nodes, P + "_impl.core.Runner") == "public: re-exported as apipkg.Runner"
    assert api(nodes, P + "_impl.core.Runner.start") == "public: class member"  # through its re-exported class
    assert api(nodes, P + "_impl.core.Runner._tick") == "private: underscore name"
    assert api(nodes, P + "_impl.core.Hidden") == "private: in a non-public module"
    assert api(nodes, P + "_impl") == "private: underscore name (_impl)"
    assert api(nodes, P + "util.undocumented") == "private: not listed in __all__"
    assert api(nodes, P + "helper") == "private: not listed in __all__"  # `as helper`, but __all__ decides
    assert api(nodes, P + "engine.Engine.__init__") == "public: special member"
    assert api(nodes, P + "engine.Engine.__hidden") == "private: class-private name"
    assert api(nodes, P + "engine.Engine.__init__.<locals>.inner") == "private: local to a function"
    assert api(nodes, "py:test_engine") == "private: in a tests/ tree"
    assert api(nodes, "py:bench.bench") == "private: in a non-public module"
    assert api(nodes, "py:run") == "private: a script outside any package"
    assert api(nodes, P + "util.DEFAULT") == "private: not listed in __all__"  # imported elsewhere: no re-export


def test_reexports_and_imports_are_aliases_edges(built):
    nodes, edges = built
    aliases = {(e.source, e.target) for e in edges if e.kind is EdgeKind.ALIASES}
    assert (P + "Runner", P + "_impl.core.Runner") in aliases
    assert (P + "Engine", P + "engine.Engine") in aliases
    assert nodes[P + "Runner"].value_kind == "re-export" and nodes[P + "Runner"].line == 6
    # a module importing a symbol under its own name: an edge from the module, no node
    assert (P + "engine", P + "util.DEFAULT") in aliases and P + "engine.DEFAULT" not in nodes


def test_reasons_follow_containers_whose_ids_do_not_prefix_their_members():
    # Sorted ids put ``py:a.member`` before its container ``py:z._p``: the reasons still read the
    # container's first (a member of a private module is private).
    from extractor.model import Node
    from extractor.python.api import ModuleInfo, api_reasons, load_rules

    nodes = {nid: Node(nid, kind, nid.rsplit(".", 1)[-1], nid[3:], "python") for nid, kind in (
        ("py:z._p", NodeKind.MODULE), ("py:a.member", NodeKind.CLASS), ("py:a.member.go", NodeKind.METHOD))}
    parents = {"py:a.member": "py:z._p", "py:a.member.go": "py:a.member"}
    reasons = api_reasons(nodes, parents, {"z._p": ModuleInfo("z._p", "z/_p.py", False, None)}, {}, load_rules())
    assert reasons == {"py:z._p": "private: underscore name (_p)", "py:a.member": "private: in a non-public module",
                       "py:a.member.go": "private: member of a non-public class"}
