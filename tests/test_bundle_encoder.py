"""The fast bundle writer writes the bytes the json one wrote: proved on adversarial values, on
generated graphs and on real evidence.

``encode_bundle`` sends nodes and edges through msgspec's JSON encoder, everything else through
``json`` as ``dumps_bundle`` does. The two encoders agree on every kind of value a node or an edge
holds (str with any character, int of any size, bool, None, lists, tuples, str enums, dataclasses)
and disagree on floats, which is why no float may ever reach a node or an edge: the annotations of
their record types are checked here.
"""

from __future__ import annotations

import dataclasses
import json
import typing
import zlib

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor.context import Context, ExtractOptions, SourceFile
from extractor.evidence.write import _COMPACT, _GRAPH_ENCODER, build_bundle, dumps_bundle, encode_bundle
from extractor.model import (Binding, Contribution, Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind,
                             Parameter, ParamKind, Severity, Signature, Step, node_fields, node_json)
from tests.conftest import cache_root, extract_real

# Every character class that JSON escaping treats differently: controls (short and \u00XX forms),
# quote, backslash, slash, DEL, C1 controls, line/paragraph separators (json does not escape them,
# JavaScript's eval would), BOM, non-characters, astral planes.
ADVERSARIAL_STRINGS = [
    "", "plain", "\"quoted\"", "back\\slash", "sl/ash", "\b\f\n\r\t", "".join(map(chr, range(0x20))), "\x7f",
    "\u0080\u009f\u00a0", "\u2028\u2029", "\ufeff", "\ufffe\uffff", "é ü ß 中文 日本語", "\U0001F600\U0010FFFF",
    "\ud7ff\ue000", "</script><!--", "a\x00b", "tab\there",
]
ADVERSARIAL_INTS = [0, -0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, -(2**64), 10**40, -(10**40)]


def _both(value) -> tuple[bytes, bytes]:
    return _GRAPH_ENCODER.encode(value), _COMPACT.encode(value).encode("utf-8")


@pytest.mark.parametrize("value", ADVERSARIAL_STRINGS + ADVERSARIAL_INTS + [True, False, None])
def test_scalars_encode_the_same(value):
    fast, reference = _both(value)
    assert fast == reference


def test_containers_and_key_order_encode_the_same():
    keys = ["b", "a", "Z", "a\x00", "ab", "é", "e", "\u2028", "\U0001F600", "", "A", "_", "~"]
    value = {k: [k, (1, k), {"nested": k, "Nested": None}] for k in keys}
    fast, reference = _both(value)
    assert fast == reference
    assert _both([]) == (b"[]", b"[]") and _both({}) == (b"{}", b"{}") and _both(()) == (b"[]", b"[]")


def test_record_dataclasses_and_enums_encode_as_to_jsonable_writes_them():
    param = Parameter("x\u2028", ParamKind.KEYWORD_ONLY, "dict[str, \"int\"]", None)
    signature = Signature((param, Parameter("y", default="'\\n'")), "None", "p/é.py", 2**40)
    node = Node("py:m.f", NodeKind.FUNCTION, "f", "m.f", "python", "m.py", 3, "doc\n\"x\"", "f(x)", ("async", "é"),
                params=(param,), returns="int", decorators=("functools.cache",), overloads=(signature,),
                sites=(Location("m.py", 9), Location("n.py", 0)), annotation="A", value_kind="call", api="public")
    fast, reference = _GRAPH_ENCODER.encode(node_fields(node)), _COMPACT.encode(node_json(node)).encode("utf-8")
    assert fast == reference
    edge = Edge("py:a", "cpp:b::c", EdgeKind.BINDS, "x/\u00e9.py", 12)
    assert _GRAPH_ENCODER.encode(edge) == _COMPACT.encode(
        {"source": "py:a", "target": "cpp:b::c", "kind": "binds", "path": "x/\u00e9.py", "line": 12}).encode("utf-8")


@pytest.mark.parametrize("value, json_text", [(1e16, "1e+16"), (1e-05, "1e-05"), (float("nan"), "NaN"),
                                              (float("inf"), "Infinity"), (1e22, "1e+22")])
def test_floats_are_where_the_encoders_part(value, json_text):
    """Why no float may reach a node or an edge (next test): msgspec writes them otherwise."""
    fast, reference = _both(value)
    assert reference == json_text.encode() and fast != reference


def _annotation_types(tp) -> set:
    origin = typing.get_origin(tp)
    if origin is None:
        return {tp}
    return {t for arg in typing.get_args(tp) if arg is not Ellipsis for t in _annotation_types(arg)}


def test_the_graph_record_types_hold_no_float():
    """The fast path is exact only for what these types hold: a float (or anything msgspec would
    write otherwise) added to them must go through json instead."""
    allowed = {str, int, bool, type(None), NodeKind, EdgeKind, ParamKind, Parameter, Signature, Location, Binding}
    for record in (Node, Edge, Parameter, Signature, Location, Binding):
        hints = typing.get_type_hints(record)
        fields = msgspec.structs.fields(record) if issubclass(record, msgspec.Struct) else dataclasses.fields(record)
        for name in (field.name for field in fields):
            found = _annotation_types(hints[name])
            assert found <= allowed, f"{record.__name__}.{name}: {found - allowed}"
            assert not name.endswith("_"), f"{record.__name__}.{name}: to_jsonable renames it"


# -- whole bundles: encode_bundle against dumps_bundle(build_bundle(...)) ----------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(ADVERSARIAL_STRINGS)
_ints = st.integers(min_value=0, max_value=2**70) | st.sampled_from([0, 1, 2**63])
_params = st.builds(Parameter, _text, st.sampled_from(list(ParamKind)), _text, st.none() | _text)
_nodes = st.builds(
    Node, _text, st.sampled_from(list(NodeKind)), _text, _text, st.sampled_from(["python", "cpp", "é"]), _text, _ints,
    _text, _text, st.lists(_text, max_size=2).map(tuple),
    params=st.lists(_params, max_size=2).map(tuple), returns=_text,
    decorators=st.lists(_text, max_size=2).map(tuple),
    overloads=st.lists(st.builds(Signature, st.lists(_params, max_size=2).map(tuple), _text, _text, _ints),
                       max_size=2).map(tuple),
    sites=st.lists(st.builds(Location, _text, _ints), max_size=2).map(tuple),
    bound=st.lists(st.builds(Binding, _text, _ints, _text, _text), max_size=2).map(tuple),
    annotation=_text, value_kind=_text, api=_text)
_edges = st.builds(Edge, _text, _text, st.sampled_from(list(EdgeKind)), _text, _ints)


@dataclasses.dataclass(frozen=True, slots=True)
class FakeRecord:
    path: str
    line: int
    score: float  # floats in records go through json, as before
    for_: str  # to_jsonable writes it as "for"


def _context(nodes, edges, records=()) -> tuple[Context, tuple[Step, ...]]:
    from extractor.model import RecordKind

    graph = Step("graph", lambda ctx: Contribution())
    more = Step("more", lambda ctx: Contribution(), records=RecordKind("fakes", FakeRecord))
    files = (SourceFile("a/é.py", "a/é.py", "", Language.PYTHON, "0" * 64, 3, {}, 7),)
    ctx = Context("sys\u2028", "1.0", (), files, ExtractOptions())
    ctx.results["graph"] = Contribution(nodes=tuple(nodes), edges=tuple(edges), stats={"é": 1.5e-07})
    ctx.results["more"] = Contribution(nodes=tuple(nodes[:1]), records=tuple(records),
                                       diagnostics=(Diagnostic("a/é.py", 2, "x", "m\u2028", Severity.INFO),))
    return ctx, (graph, more)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_nodes, max_size=6), st.lists(_edges, max_size=6))
def test_generated_graphs_give_the_same_bytes(nodes, edges):
    records = [FakeRecord("p", 1, 1e16, "x"), FakeRecord("p", 1, float("nan"), "y"), FakeRecord("", 0, 0.1, "z")]
    ctx, steps = _context(nodes, edges, records)
    diagnostics = [Diagnostic("z", 0, "c", "\x00", Severity.ERROR)]
    expected = dumps_bundle(build_bundle(ctx, steps, diagnostics)).encode("utf-8")
    encoded = encode_bundle(ctx, steps, diagnostics)
    assert encoded.data == expected
    assert zlib.decompress(encoded.compressed) == expected  # the memo's form
    bundle = json.loads(expected)
    assert encoded.summary == {"nodes": len(bundle["graph"]["nodes"]), "edges": len(bundle["graph"]["edges"]),
                               "files": 1, "diagnostics": bundle["diagnostics"]}


def test_an_empty_graph_writes_empty_lists():
    ctx, steps = _context([], [])
    data = encode_bundle(ctx, steps, []).data
    assert data == dumps_bundle(build_bundle(ctx, steps, [])).encode("utf-8")
    assert b'"edges":[]' in data and b'"nodes":[]' in data


@pytest.mark.real
def test_real_evidence_reencodes_to_the_same_bytes(vllm_src, tmp_path):
    """vLLM's evidence (48,000 nodes, 110,000 edges), read back into records and written again by
    both writers: the same bytes as the extraction wrote."""
    from extractor.evidence.read import evidence_json, load_evidence

    # The facts the other real tests cached: this test is about the writer, not about a cold parse.
    result = extract_real(vllm_src, options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff",
                                                           probe_structs=False))
    path = tmp_path / "evidence.json"
    path.write_bytes(result.data)
    evidence = load_evidence(path)
    assert dumps_bundle(evidence_json(evidence)).encode("utf-8") == result.data
    nodes = [_GRAPH_ENCODER.encode(node_fields(n)) for n in evidence.graph.nodes]
    assert nodes == [_COMPACT.encode(node_json(n)).encode("utf-8") for n in evidence.graph.nodes]
    edges = [_GRAPH_ENCODER.encode(e) for e in evidence.graph.edges]
    assert edges == [_COMPACT.encode(e).encode("utf-8") for e in json.loads(result.data)["graph"]["edges"]]
    assert len(nodes) > 40_000 and len(edges) > 100_000


# -- the merged graph: one string key per edge sorts and dedups as the Edge tuples do ---------

_edge_texts = st.sampled_from(["", "a", "a\x00", "a\x00b", "ab", "\x00", "é", "b", "a\x01"]) | _text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.builds(Edge, _edge_texts, _edge_texts, st.sampled_from(list(EdgeKind)), _edge_texts,
                                   st.integers(min_value=0, max_value=2**80) | st.sampled_from([0, 1, 9, 10])),
                         max_size=8), max_size=3))
def test_edges_merge_and_sort_as_edge_key_says(groups):
    from extractor.graphparts import unique_sorted_edges
    from extractor.model import edge_key

    expected = sorted({e for group in groups for e in group}, key=edge_key)
    assert unique_sorted_edges(groups) == expected


def test_edges_with_huge_lines_and_nul_merge_as_edge_key_says():
    from extractor.graphparts import unique_sorted_edges
    from extractor.model import edge_key

    odd = [Edge("a", "b", EdgeKind.CALLS, "p", 10**25), Edge("a", "b", EdgeKind.CALLS, "p", 3),
           Edge("a", "b", EdgeKind.CALLS, "p", 3), Edge("a\x00", "b", EdgeKind.CALLS, "p", 1)]
    assert unique_sorted_edges([odd]) == sorted(set(odd), key=edge_key)
