"""The symbol graph as a networkx ``MultiDiGraph``, and its exports (GraphML, GEXF, node-link JSON).

GraphML is written in one stream by :mod:`extractor.evidence.graphml` (the same bytes as networkx
writes, a quarter of the time, without the document in memory); GEXF goes through networkx."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Iterable
from typing import Any

import networkx as nx
from networkx.readwrite.gexf import GEXFWriter

from extractor.errors import UserInputError
from extractor.evidence.graphml import flat, write_graphml
from extractor.model import Edge, Node, node_json
from extractor.support.storage import atomic_path, write_atomic


def to_networkx(bundle: dict[str, Any], scalars_only: bool = False) -> nx.MultiDiGraph:
    """The bundle's graph; ``scalars_only`` flattens list attributes for GraphML and GEXF."""
    value = flat if scalars_only else (lambda v: v)
    graph = nx.MultiDiGraph(name=bundle["system"]["name"])
    for node in bundle["graph"]["nodes"]:
        graph.add_node(node["id"], **{k: value(v) for k, v in node.items() if k != "id"})
    for i, edge in enumerate(bundle["graph"]["edges"]):
        graph.add_edge(edge["source"], edge["target"], key=i,
                       **{k: value(v) for k, v in edge.items() if k not in ("source", "target")})
    return graph


def graph_of(nodes: Iterable[Node], edges: Iterable[Edge], name: str = "") -> nx.MultiDiGraph:
    """Typed nodes and edges as a ``MultiDiGraph``: node attributes as ``evidence.json`` writes
    them (enums as their values, tuples as lists), each edge keyed by its position."""
    graph = nx.MultiDiGraph(name=name)
    for node in nodes:
        graph.add_node(node.id, **{k: v for k, v in node_json(node).items() if k != "id"})
    for i, edge in enumerate(edges):
        graph.add_edge(edge.source, edge.target, key=i, kind=edge.kind.value, path=edge.path, line=edge.line)
    return graph


def export_graph(bundle: dict[str, Any], fmt: str, output: Path) -> None:
    if fmt not in ("json", "graphml", "gexf"):
        raise UserInputError(f"unknown graph format {fmt!r}: use graphml, gexf or json")
    if fmt == "json":
        data = {"directed": True, "multigraph": True, "graph": {"name": bundle["system"]["name"]},
                "nodes": bundle["graph"]["nodes"], "edges": bundle["graph"]["edges"]}
        write_atomic(output, json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
        return
    if fmt == "graphml":
        write_graphml(bundle, output)
        return
    writer = GEXFWriter(encoding="utf-8", prettyprint=True)
    writer.add_graph(to_networkx(bundle, scalars_only=True))
    # networkx stamps the day it wrote the file: the same evidence must give the same bytes
    writer.xml.find("meta").attrib.pop("lastmodifieddate", None)
    with atomic_path(output) as tmp, open(tmp, "wb") as out:
        writer.write(out)
