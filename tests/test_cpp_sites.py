"""Every definition site kept: per-platform alternatives, `#if` branches, specialisations and
overloads stay findable by file and line; file-local helpers never merge; exports carry it all."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.evidence.graph import export_graph
from extractor.model import Contribution, EdgeKind, Location, ParamKind

from tests.conftest import FIXTURES

SITES = FIXTURES / "cpp_sites"


@pytest.fixture(scope="module")
def graph() -> Contribution:
    return extract_cpp_graph(scan_trees({"": SITES}))


def nodes(graph: Contribution) -> dict:
    return {n.id: n for n in graph.nodes}


def test_per_platform_alternatives_are_one_node_with_every_site(graph):
    vec16 = nodes(graph)["cpp:vec_op::FP32Vec16"]
    assert (vec16.path, vec16.line) == ("src/cpu_types_arm.hpp", 6)
    assert vec16.sites == (Location("src/cpu_types_x86.hpp", 6),)
    # the constructor of each platform's struct, too
    assert nodes(graph)["cpp:vec_op::FP32Vec16::FP32Vec16"].sites == (Location("src/cpu_types_x86.hpp", 8),)


def test_both_branches_of_an_if_are_sites_of_one_node(graph):
    vec8 = nodes(graph)["cpp:vec_op::FP32Vec8"]
    assert {(vec8.path, vec8.line), *((s.path, s.line) for s in vec8.sites)} == {
        ("src/cpu_types_x86.hpp", 15), ("src/cpu_types_x86.hpp", 20)}
    assert "template" not in vec8.tags


def test_specialisations_are_sites_of_the_template(graph):
    vec = nodes(graph)["cpp:vllm::Vec"]
    assert (vec.path, vec.line) == ("src/vec.cuh", 7)  # the primary template stands for it
    assert vec.sites == (Location("src/dtype_bfloat16.cuh", 7), Location("src/dtype_float32.cuh", 7))
    assert {"template", "specialization"} <= set(vec.tags)


def test_overloads_keep_each_parameter_list_and_the_declarations_defaults(graph):
    scale = nodes(graph)["cpp:scale"]
    assert "overloaded" in scale.tags
    assert [(o.path, o.line) for o in scale.overloads] == [("src/scale.cpp", 3), ("src/scale.cpp", 7)]
    assert [[(p.annotation, p.default) for p in o.params] for o in scale.overloads] == [
        [("float*", None), ("int", None), ("float", "2.0f")],
        [("double*", None), ("int", None), ("double", "2.0")]]
    assert [(p.name, p.kind) for p in scale.params] == [("data", ParamKind.POSITIONAL_ONLY),
                                                        ("n", ParamKind.POSITIONAL_ONLY),
                                                        ("factor", ParamKind.POSITIONAL_ONLY)]
    assert scale.returns == "void"
    assert scale.sites == (Location("src/scale.cpp", 7),)


def test_anonymous_namespace_helpers_of_two_files_stay_two_nodes(graph):
    by_id = nodes(graph)
    a = by_id["cpp:(anonymous namespace@src/attention.cu)::round_up"]
    b = by_id["cpp:(anonymous namespace@src/layernorm.cu)::round_up"]
    assert a.qualname == b.qualname == "(anonymous namespace)::round_up"
    assert [p.name for p in a.params] == ["x"] and [p.name for p in b.params] == ["x", "to"]
    assert a.api == b.api == "internal: anonymous namespace"
    calls = {(e.source, e.target) for e in graph.edges if e.kind is EdgeKind.CALLS}
    # each caller reaches the helper of its own file
    assert ("cpp:attention_blocks", a.id) in calls and ("cpp:layernorm_grid", b.id) in calls
    assert ("cpp:attention_blocks", b.id) not in calls
    assert ("file:src/layernorm.cu", "cpp:(anonymous namespace@src/layernorm.cu)::Launch") in {
        (e.source, e.target) for e in graph.edges if e.kind is EdgeKind.CONTAINS}
    assert by_id["cpp:clamp_index"].api == "internal: static function"


def test_aggregates_for_the_struct_step_are_every_definition(graph):
    aggregates = {(a.path, a.line, a.qualname, a.template) for a in graph.shared.aggregates}
    assert ("src/cpu_types_x86.hpp", 20, "vec_op::FP32Vec8", False) in aggregates
    assert ("src/cpu_types_arm.hpp", 6, "vec_op::FP32Vec16", False) in aggregates
    assert ("src/layernorm.cu", 7, "(anonymous namespace)::Launch", False) in aggregates
    assert ("src/vec.cuh", 7, "vllm::Vec", True) in aggregates


@pytest.mark.parametrize("fmt", ["graphml", "gexf", "json"])
def test_graph_exports_carry_sites_and_parameters(graph, fmt, tmp_path):
    from extractor.model import edge_json, node_json

    bundle = {"system": {"name": "sites"}, "graph": {"nodes": [node_json(n) for n in graph.nodes],
                                                     "edges": [edge_json(e) for e in graph.edges]}}
    out = tmp_path / f"graph.{fmt}"
    export_graph(bundle, fmt, out)
    if fmt == "json":
        data = {n["id"]: n for n in json.loads(out.read_text())["nodes"]}
        sites, params = data["cpp:vec_op::FP32Vec8"]["sites"], data["cpp:scale"]["params"]
    else:
        g = nx.read_graphml(out) if fmt == "graphml" else nx.read_gexf(out)
        sites = json.loads(g.nodes["cpp:vec_op::FP32Vec8"]["sites"])
        params = json.loads(g.nodes["cpp:scale"]["params"])
        assert g.nodes["cpp:scale"]["tags"] == "overloaded"  # plain lists stay comma-separated
    assert sites == [{"path": "src/cpu_types_x86.hpp", "line": 20}]
    assert [p["annotation"] for p in params] == ["float*", "int", "float"]

