"""The evidence loader: every bundle the extractor writes loads into records and dumps back to the
same bytes; the committed comparator inputs too."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from extractor.evidence.write import dumps_bundle
from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_json, load_evidence
from extractor.layers.records import Layer
from extractor.model import Node
from extractor.run.pipeline import extract_system
from extractor.structs.records import StructLayout
from extractor.layers.records import LAYERS
from extractor.structs.records import STRUCTS
from extractor.telemetry.records import METRICS
from tests.compare_support import INPUTS, ROOT, make_pysample_v2
from tests.conftest import cache_root, extract_real


def round_trip(path) -> str:
    return dumps_bundle(evidence_json(load_evidence(path)))


@pytest.mark.parametrize("name", ["mini_vllm", "triton_like", "pysample", "pysample_v2"])
def test_committed_inputs_round_trip(name):
    path = INPUTS / f"{name}.evidence.json"
    evidence = load_evidence(path)
    assert evidence.of(LAYERS) and all(isinstance(x, Layer) for x in evidence.of(LAYERS))
    assert all(isinstance(n, Node) for n in evidence.graph.nodes)
    assert round_trip(path) == path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def fixture_bundles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bundles")
    options = ExtractOptions(jobs=1, cache_dir=tmp / "cache")
    sources = {name: [str(ROOT / "fixtures" / name)] for name in
               ("mini_vllm", "triton_like", "pysample", "pymetrics", "torch_ops_like", "structs")}
    sources["pysample_v2"] = [str(make_pysample_v2(tmp))]
    sources["triton_like_multi"] = [f"{label}={ROOT / 'fixtures' / 'triton_like' / label}"
                                    for label in ("server", "core", "common")]
    out = {}
    for name, specs in sources.items():
        result = extract_system(specs, name=name, version="1", options=options)
        path = tmp / f"{name}.json"
        path.write_text(result.text, encoding="utf-8")
        out[name] = path
    return out


@pytest.mark.parametrize("name", ["mini_vllm", "triton_like", "pysample", "pysample_v2", "pymetrics",
                                  "torch_ops_like", "structs", "triton_like_multi"])
def test_fixture_bundles_round_trip(fixture_bundles, name):
    path = fixture_bundles[name]
    assert round_trip(path) == path.read_text(encoding="utf-8")


# Debian's prometheus-cpp-dev is a system header once installed (a Triton builder installs it)
_PROMETHEUS_CPP = {} if Path("/usr/include/prometheus/counter.h").is_file() else {
    "prometheus/counter.h": "apt: prometheus-cpp-dev"}


@pytest.mark.parametrize("name, definitions, missing", [
    ("triton_like_multi", 14, _PROMETHEUS_CPP),
    # the structs fixture's CUDA headers are laid out by nvcc
    pytest.param("structs", 34, {"torch/all.h": "--headers-from pypi:torch"}, marks=pytest.mark.compilers),
])
def test_every_header_aggregate_of_the_graph_has_a_layout_record(fixture_bundles, name, definitions, missing):
    """The layout invariant on the extractions above: every non-template struct/class/union node
    defined in a header has a record, and an unresolved one names what was missing and who supplies it."""
    from bench.structs_vs_graph import coverage
    from extractor.structs.compilers import find_nvcc

    assert name != "structs" or find_nvcc(), "nvcc is required (CUDA toolkit): the structs fixture has CUDA headers"
    bundle = json.loads(fixture_bundles[name].read_text(encoding="utf-8"))
    result = coverage(bundle)
    assert result["definitions"] == definitions
    assert result["without_record"] == [] and result["unresolved_without_reason"] == []
    unresolved = {s["missing"]: s["supplied_by"] for s in bundle["structs"] if s["method"] == "unresolved"}
    assert unresolved == missing and result["resolved"] == definitions - len(missing)


def test_struct_records_come_back_typed(fixture_bundles):
    structs = load_evidence(fixture_bundles["structs"]).of(STRUCTS)
    assert structs and all(isinstance(s, StructLayout) for s in structs)
    assert any(s.holes for s in structs) and any(m.bit_size for s in structs for m in s.members)


def test_optional_node_fields_round_trip(tmp_path):
    import json

    from extractor.evidence.read import evidence_from_json
    from extractor.model import Binding, Location, NodeKind, Parameter, ParamKind, Signature, node_json

    data = json.loads((INPUTS / "pysample.evidence.json").read_text(encoding="utf-8"))
    full = Node("py:m.f", NodeKind.FUNCTION, "f", "m.f", "python", "m.py", 3, params=(
        Parameter("a", ParamKind.POSITIONAL_ONLY, "int", None), Parameter("b", ParamKind.KEYWORD_ONLY, "", "1")),
        returns="str", decorators=("functools.cache",), sites=(Location("m.py", 9),), annotation="X",
        value_kind="call", api="public: m.__all__", bound=(Binding("np", 2, "import"),),
        overloads=(Signature((Parameter("a", ParamKind.VAR_POSITIONAL),), "int", "m.py", 2),))
    assert all(getattr(full, f.name) != f.default for f in msgspec.structs.fields(Node) if f.name in
               ("params", "returns", "decorators", "overloads", "sites", "annotation", "value_kind", "api", "bound"))
    data["graph"]["nodes"].append(node_json(full))
    evidence = evidence_from_json(data)
    assert evidence.graph.by_id()["py:m.f"] == full
    assert dumps_bundle(evidence_json(evidence)) == dumps_bundle(data)


@pytest.mark.real
def test_real_vllm_bundle_round_trips(vllm_src, tmp_path):
    result = extract_real(vllm_src, name="vllm", version="0.10.2",
                          options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff"))
    path = tmp_path / "evidence.json"
    path.write_text(result.text, encoding="utf-8")
    evidence = load_evidence(path)
    assert len(evidence.graph.nodes) > 20_000 and len(evidence.of(METRICS)) > 30 and evidence.of(STRUCTS)
    assert round_trip(path) == result.text
