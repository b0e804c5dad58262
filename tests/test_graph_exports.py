"""Graph exports: the streaming GraphML writer gives networkx's ``write_graphml`` bytes for the same
graph (the file users already read keeps its exact shape, without the whole document held in
memory); a GEXF export is the same bytes whatever day it is written."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from networkx.readwrite import gexf

from extractor.evidence.graph import export_graph, to_networkx
from extractor.evidence.graphml import write_graphml

_IDS = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("&<>\"'\t\n\r "), min_size=1,
               max_size=6)
_SCALARS = st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=8) | \
    st.floats(allow_nan=False, allow_infinity=False, width=32)
_VALUES = _SCALARS | st.lists(st.integers(0, 9) | st.text(max_size=3), max_size=3) | \
    st.lists(st.dictionaries(st.sampled_from("ab"), st.integers(0, 3), max_size=2), min_size=1, max_size=2) | \
    st.dictionaries(st.sampled_from(["path", "line"]), st.integers(0, 9) | st.text(max_size=3), max_size=2)
# A few names, so that one name takes several types across records (networkx then declares a key
# per type); "id", "source" and "target" are the records' own fields.
_ATTRIBUTES = st.dictionaries(st.sampled_from(["kind", "line", "api", "sites", "doc", "name"]), _VALUES, max_size=4)


@st.composite
def bundles(draw) -> dict:
    ids = draw(st.lists(_IDS, max_size=8))  # repeats allowed: add_node merges them
    nodes = [{"id": i, **draw(_ATTRIBUTES)} for i in ids]
    ends = st.sampled_from(ids) | _IDS if ids else _IDS  # endpoints no node names are added bare
    edges = [{"source": draw(ends), "target": draw(ends), **draw(_ATTRIBUTES)}
             for _ in range(draw(st.integers(0, 10)))]
    return {"system": {"name": draw(st.text(max_size=5))}, "graph": {"nodes": nodes, "edges": edges}}


def _networkx(bundle: dict, path: Path) -> bytes:
    nx.write_graphml(to_networkx(bundle, scalars_only=True), path)
    return path.read_bytes()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bundle=bundles())
def test_the_same_bytes_as_networkx(bundle, tmp_path):
    write_graphml(bundle, tmp_path / "stream.graphml")
    assert (tmp_path / "stream.graphml").read_bytes() == _networkx(bundle, tmp_path / "nx.graphml")


def test_a_graph_with_no_nodes_and_its_name_escaped(tmp_path):
    bundle = {"system": {"name": "a<b & c"}, "graph": {"nodes": [], "edges": []}}
    write_graphml(bundle, tmp_path / "g.graphml")
    assert (tmp_path / "g.graphml").read_bytes() == _networkx(bundle, tmp_path / "nx.graphml")
    assert nx.read_graphml(tmp_path / "g.graphml").graph["name"] == "a<b & c"


def test_edges_come_grouped_by_source_and_read_back_with_their_positions(tmp_path):
    bundle = {"system": {"name": "s"}, "graph": {
        "nodes": [{"id": "a", "kind": "class"}, {"id": "b", "kind": "function", "line": 3}],
        "edges": [{"source": "b", "target": "a", "kind": "calls"}, {"source": "a", "target": "x", "kind": "imports"},
                  {"source": "b", "target": "a", "kind": "uses"}]}}
    write_graphml(bundle, tmp_path / "g.graphml")
    text = (tmp_path / "g.graphml").read_text()
    assert text.index('source="a" target="x" id="1"') < text.index('source="b" target="a" id="0"') \
        < text.index('source="b" target="a" id="2"')
    graph = nx.read_graphml(tmp_path / "g.graphml", force_multigraph=True)
    assert sorted(graph.edges(keys=True)) == [("a", "x", 1), ("b", "a", 0), ("b", "a", 2)]
    assert graph.nodes["x"] == {} and graph.nodes["b"]["line"] == 3


def test_a_gexf_export_does_not_depend_on_the_day(tmp_path, monkeypatch):
    bundle = {"system": {"name": "s"}, "graph": {"nodes": [{"id": "a", "kind": "class", "tags": ["x", "y"]}],
                                                 "edges": [{"source": "a", "target": "a", "kind": "calls"}]}}
    written = []
    for day in ("2026-01-01", "2027-06-30"):
        monkeypatch.setattr(gexf.time, "strftime", lambda _fmt, day=day: day)
        export_graph(bundle, "gexf", tmp_path / f"{day}.gexf")
        written.append((tmp_path / f"{day}.gexf").read_bytes())
    assert written[0] == written[1]
    graph = nx.read_gexf(tmp_path / "2026-01-01.gexf")
    assert graph.nodes["a"]["tags"] == "x,y" and graph.number_of_edges() == 1
