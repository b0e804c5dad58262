"""`archdiff graph path/callers/callees/reach/find` and the Python API, on handwritten fixtures:
Python -> C++/CUDA through a torch op and pybind11 (fixtures/graph_ops), Python -> Rust through
PyO3 (fixtures/pyo3_ext), Go -> C++ through cgo (fixtures/cgo_mini)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import networkx as nx
import pytest

from tests.conftest import FIXTURES


def run(*args: str, cache=None) -> subprocess.CompletedProcess:
    env_args = ["--cache-dir", str(cache)] if cache is not None else []
    return subprocess.run([sys.executable, "-m", "archdiff.cli", *args, *env_args], capture_output=True, text=True)


def query(evidence, *args: str) -> dict:
    proc = run("graph", *args[:1], str(evidence), *args[1:], "--format", "json", cache=evidence.parent / "cache")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """fixture name -> its evidence.json, each extracted once (no struct probes: nothing to probe)."""
    out = {}
    for name in ("graph_ops", "pyo3_ext", "cgo_mini"):
        target = tmp_path_factory.mktemp(name)
        proc = run("extract", str(FIXTURES / name), "-o", str(target), "-j", "1", "--no-probes", cache=target / "cache")
        assert proc.returncode == 0, proc.stderr
        out[name] = target / "evidence.json"
    return out


def chain_of(path: list[dict]) -> list[tuple[str | None, str]]:
    """(edge kind, node id) per step; the first step has no edge."""
    return [(step["edge"]["kind"] if step["edge"] else None, step["node"]["id"]) for step in path]


# --------------------------------------------------------------------------------- python -> c++


def test_path_from_the_public_api_to_the_cuda_kernel_goes_through_the_torch_op(extracted):
    answer = query(extracted["graph_ops"], "path", "Engine.generate", "act_and_mul_kernel")
    assert answer["edges"] == ["binds", "calls", "launches"]
    assert [chain_of(p) for p in answer["paths"]] == [[
        (None, "py:minikern.engine.Engine.generate"),
        ("calls", "py:minikern.layers.activation.silu_and_mul"),
        ("calls", "py:minikern._custom_ops.silu_and_mul"),
        ("binds", "cpp:silu_and_mul"),
        ("calls", "cpp:launch_act_and_mul"),
        ("launches", "cpp:minikern::act_and_mul_kernel"),
    ]]
    binds = answer["paths"][0][3]
    # the edge is where the operator is called; the node is where its implementation is defined
    assert binds["edge"] == {"kind": "binds", "path": "minikern/_custom_ops.py", "line": 7}
    assert (binds["node"]["path"], binds["node"]["line"]) == ("csrc/activation_kernels.cu", 20)
    assert answer["paths"][0][-1]["node"]["kind"] == "kernel"


def test_a_method_calling_the_operator_held_in_an_attribute_binds_at_its_call(extracted):
    """``self.op = torch.ops._C.silu_and_mul`` in ``__init__``, ``self.op(out, x)`` in forward_cuda."""
    answer = query(extracted["graph_ops"], "path", "SiluAndMul.forward_cuda", "act_and_mul_kernel")
    assert [chain_of(p) for p in answer["paths"]] == [[
        (None, "py:minikern.layers.activation.SiluAndMul.forward_cuda"), ("binds", "cpp:silu_and_mul"),
        ("calls", "cpp:launch_act_and_mul"), ("launches", "cpp:minikern::act_and_mul_kernel")]]
    assert answer["paths"][0][1]["edge"] == {"kind": "binds", "path": "minikern/layers/activation.py", "line": 20}


def test_path_text_prints_one_chain_line_per_step(extracted):
    evidence = extracted["graph_ops"]
    proc = run("graph", "path", str(evidence), "SiluAndMul.__init__", "minikern::act_and_mul_kernel",
               cache=evidence.parent / "cache")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[2:] == [
        "minikern.layers.activation.SiluAndMul.__init__ [method, python] (minikern/layers/activation.py:15)",
        "  -[binds minikern/layers/activation.py:16]-> silu_and_mul [function, cuda] (csrc/activation_kernels.cu:20)",
        "  -[calls csrc/activation_kernels.cu:21]-> launch_act_and_mul [function, cuda] (csrc/activation_kernels.cu:15)",
        "  -[launches csrc/activation_kernels.cu:17]-> minikern::act_and_mul_kernel [kernel, cuda] "
        "(csrc/activation_kernels.cu:6)",
    ]


def test_reach_lists_only_the_kernels_the_node_reaches_each_with_its_chain(extracted):
    answer = query(extracted["graph_ops"], "reach", "py:minikern.engine.Engine.generate", "--to-kind", "kernel")
    # rms_norm's kernel is in the system but not on any chain from generate
    assert [h["node"]["id"] for h in answer["hits"]] == ["cpp:minikern::act_and_mul_kernel"]
    (hit,) = answer["hits"]
    assert hit["depth"] == 5 and "binds" in [k for k, _ in chain_of(hit["chain"])]
    assert query(extracted["graph_ops"], "reach", "minikern._custom_ops.rms_norm", "--to-kind", "kernel")["hits"][0][
        "node"]["id"] == "cpp:minikern::rms_norm_kernel"


def test_a_launcher_called_only_through_nested_macros_is_reached(extracted):
    """paged_attention names CALL_LAUNCHER_BLOCK_SIZE, which invokes CALL_LAUNCHER_SPARSITY, which
    invokes CALL_LAUNCHER, whose body calls the launcher: the call is the function's, at the line
    that names the outer macro. ``dim3 grid(...)`` in a macro declares a variable: no call of the
    function ``grid``."""
    evidence = extracted["graph_ops"]
    answer = query(evidence, "reach", "minikern._custom_ops.paged_attention", "--to-kind", "kernel")
    (hit,) = answer["hits"]
    assert chain_of(hit["chain"]) == [
        (None, "py:minikern._custom_ops.paged_attention"), ("binds", "cpp:paged_attention"),
        ("calls", "cpp:paged_attention_launcher"), ("launches", "cpp:minikern::paged_attention_kernel")]
    assert hit["chain"][2]["edge"] == {"kind": "calls", "path": "csrc/attention/paged_attention.cu", "line": 45}
    assert query(evidence, "callers", "cpp:grid")["hits"] == []


def test_pybind11_binding_leads_on_to_what_the_cpp_function_calls(extracted):
    answer = query(extracted["graph_ops"], "path", "Engine.generate", "minikern::select_largest")
    assert chain_of(answer["paths"][0]) == [
        (None, "py:minikern.engine.Engine.generate"), ("calls", "py:minikern._ops.topk"),
        ("binds", "cpp:minikern::fast_topk"), ("calls", "cpp:minikern::select_largest")]


def test_callers_of_a_cpp_implementation_are_its_python_callers_by_depth(extracted):
    evidence = extracted["graph_ops"]
    near = query(evidence, "callers", "cpp:silu_and_mul")
    assert [(h["depth"], h["node"]["id"]) for h in near["hits"]] == [
        (1, "py:minikern._custom_ops.silu_and_mul"), (1, "py:minikern.layers.activation.SiluAndMul.__init__"),
        (1, "py:minikern.layers.activation.SiluAndMul.forward_cuda")]
    far = query(evidence, "callers", "cpp:silu_and_mul", "--depth", "3", "--language", "python", "--kind", "method")
    assert [(h["depth"], h["node"]["id"]) for h in far["hits"]] == [
        (1, "py:minikern.layers.activation.SiluAndMul.__init__"),
        (1, "py:minikern.layers.activation.SiluAndMul.forward_cuda"),
        (3, "py:minikern.engine.Engine._warm_up"), (3, "py:minikern.engine.Engine.generate")]
    # a caller's chain runs from the caller to the node asked about, in the edges' direction
    assert chain_of(far["hits"][3]["chain"]) == [
        (None, "py:minikern.engine.Engine.generate"), ("calls", "py:minikern.layers.activation.silu_and_mul"),
        ("calls", "py:minikern._custom_ops.silu_and_mul"), ("binds", "cpp:silu_and_mul")]


def test_callees_follow_the_edges_asked_for(extracted):
    evidence = extracted["graph_ops"]
    default = query(evidence, "callees", "cpp:silu_and_mul", "--depth", "2")
    assert [h["node"]["id"] for h in default["hits"]] == ["cpp:launch_act_and_mul", "cpp:minikern::act_and_mul_kernel"]
    calls_only = query(evidence, "callees", "cpp:silu_and_mul", "--depth", "2", "--edges", "calls")
    assert [h["node"]["id"] for h in calls_only["hits"]] == ["cpp:launch_act_and_mul"]


def test_find_by_glob_regex_kind_and_api(extracted):
    evidence = extracted["graph_ops"]
    ids = lambda answer: [n["id"] for n in answer["nodes"]]  # noqa: E731
    assert ids(query(evidence, "find", "*silu_and_mul")) == [
        "cpp:silu_and_mul", "py:minikern._custom_ops.silu_and_mul", "py:minikern.layers.activation.silu_and_mul",
        "torchop:<TORCH_EXTENSION_NAME>::silu_and_mul"]
    assert ids(query(evidence, "find", "_kernel$", "--regex", "--kind", "kernel")) == [
        "cpp:minikern::act_and_mul_kernel", "cpp:minikern::paged_attention_kernel", "cpp:minikern::rms_norm_kernel"]
    public = ids(query(evidence, "find", "minikern.engine.*", "--api", "public"))
    private = ids(query(evidence, "find", "minikern.engine.*", "--api", "private"))
    assert "py:minikern.engine.Engine.generate" in public and "py:minikern.engine.Engine._warm_up" in private
    assert not set(public) & set(private)
    # C++ kernels outside a public header are internal: not public, so "private"
    kernels = {"cpp:minikern::act_and_mul_kernel", "cpp:minikern::paged_attention_kernel",
               "cpp:minikern::rms_norm_kernel"}
    assert set(ids(query(evidence, "find", "*", "--kind", "kernel", "--api", "private"))) == kernels
    assert ids(query(evidence, "find", "*", "--kind", "kernel", "--api", "public")) == []
    assert ids(query(evidence, "find", "minikern.*", "--layer", "kernels", "--language", "python")) == [
        "py:minikern._custom_ops", "py:minikern._custom_ops.paged_attention", "py:minikern._custom_ops.rms_norm",
        "py:minikern._custom_ops.silu_and_mul", "py:minikern._ops", "py:minikern._ops.topk"]  # not engine, layers


def test_evidence_may_be_a_source_directory_extracted_through_the_cache(tmp_path):
    proc = run("graph", "find", str(FIXTURES / "graph_ops"), "*", "--kind", "kernel", "--format", "json",
               cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    assert [n["id"] for n in json.loads(proc.stdout)["nodes"]] == [
        "cpp:minikern::act_and_mul_kernel", "cpp:minikern::paged_attention_kernel", "cpp:minikern::rms_norm_kernel"]


# ------------------------------------------------------------------------- python -> rust, go -> c


def test_python_reaches_rust_through_pyo3(extracted):
    evidence = extracted["pyo3_ext"]
    answer = query(evidence, "path", "fastok.pipeline.build", "rs:fastok_py::models::PyBPE::new")
    assert chain_of(answer["paths"][0]) == [(None, "py:fastok.pipeline.build"),
                                             ("binds", "rs:fastok_py::models::PyBPE::new")]
    callers = query(evidence, "callers", "rs:fastok_py::normalize_text", "--language", "python")
    assert [h["node"]["id"] for h in callers["hits"]] == ["py:fastok.pipeline.clean"]


def test_go_reaches_cpp_through_cgo(extracted):
    evidence = extracted["cgo_mini"]
    answer = query(evidence, "callers", "cpp:engine_load", "--depth", "2")
    assert [(h["depth"], h["node"]["id"], h["node"]["language"]) for h in answer["hits"]] == [
        (1, "go:example.com/cgomini/llm.Load", "go"), (2, "go:example.com/cgomini/server.New", "go")]
    assert answer["hits"][0]["chain"][1]["edge"]["kind"] == "binds"


# ------------------------------------------------------------------------------ errors and output


@pytest.mark.parametrize("node, fragment", [
    ("Engine.generat", "no node 'Engine.generat' in the graph of graph_ops; nearest: py:minikern.engine.Engine.generate"),
    # a qualname or suffix two nodes have: the id decides
    (".silu_and_mul", "2 nodes end with '.silu_and_mul': py:minikern._custom_ops.silu_and_mul, "
                      "py:minikern.layers.activation.silu_and_mul; give the node id"),
])
def test_an_unknown_or_ambiguous_node_is_one_line_and_exit_2(extracted, node, fragment):
    evidence = extracted["graph_ops"]
    proc = run("graph", "callers", str(evidence), node, cache=evidence.parent / "cache")
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert fragment in proc.stderr


def test_unknown_edge_kind_is_refused(extracted):
    evidence = extracted["graph_ops"]
    proc = run("graph", "path", str(evidence), "Engine.generate", "cpp:silu_and_mul", "--edges", "calls,call",
               cache=evidence.parent / "cache")
    assert proc.returncode == 2 and "unknown edge kind call:" in proc.stderr


def test_no_path_is_said_not_guessed(extracted):
    answer = query(extracted["graph_ops"], "path", "cpp:silu_and_mul", "Engine.generate")
    assert answer["paths"] == []  # edges point from the caller: nothing leads back up


@pytest.mark.compilers
def test_dot_output_renders_with_graphviz(extracted, tmp_path):
    dot = shutil.which("dot")
    assert dot, "dot is not installed: apt-get install graphviz (tests/run.sh does)"
    evidence = extracted["graph_ops"]
    proc = run("graph", "reach", str(evidence), "Engine.generate", "--to-kind", "kernel", "--format", "dot",
               cache=evidence.parent / "cache")
    assert proc.returncode == 0, proc.stderr
    svg = subprocess.run([dot, "-Tsvg"], input=proc.stdout, capture_output=True, text=True, check=True).stdout
    # every node of the chain is drawn, and the edge labels name the edge kinds
    for text in ("minikern::act_and_mul_kernel", "minikern._custom_ops.silu_and_mul", ">binds<", ">launches<"):
        assert text in svg
    assert svg.count('class="node"') == 6 and svg.count('class="edge"') == 5


def test_the_index_is_built_once_per_evidence_file_and_rebuilt_when_it_changes(extracted, tmp_path):
    from extractor.evidence.index import build_index, index_path, load_index
    from extractor.evidence.read import load_evidence

    evidence = tmp_path / "evidence.json"
    shutil.copy(extracted["graph_ops"], evidence)
    cache = tmp_path / "cache"
    built = load_index(evidence, cache)
    stored = index_path(evidence, cache)
    assert stored.is_file() and load_index(evidence, cache) == built == build_index(load_evidence(evidence))
    bundle = json.loads(evidence.read_text())
    bundle["system"]["name"] = "renamed"
    evidence.write_text(json.dumps(bundle))
    assert index_path(evidence, cache) != stored and load_index(evidence, cache).system == "renamed"


def test_python_api_loads_typed_evidence_a_networkx_graph_and_the_same_answers(extracted):
    import archdiff
    from extractor.model import NodeKind

    loaded = archdiff.load(extracted["graph_ops"])
    assert isinstance(loaded.graph, nx.MultiDiGraph)
    assert loaded.graph.number_of_nodes() == len(loaded.evidence.graph.nodes)
    assert loaded.graph.nodes["cpp:minikern::act_and_mul_kernel"]["kind"] == "kernel"
    assert {n.kind for n in loaded.evidence.graph.nodes} >= {NodeKind.KERNEL, NodeKind.METHOD}
    answer = loaded.reach("Engine.generate", "kernel")
    assert [h.node.id for h in answer.hits] == ["cpp:minikern::act_and_mul_kernel"]
    from archdiff.graphformat import render_json

    cli = query(extracted["graph_ops"], "reach", "Engine.generate", "--to-kind", "kernel")
    assert json.loads(render_json(answer)) == cli
