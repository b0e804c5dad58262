"""archdiff from Python: load evidence, get its graph as networkx, and ask it the questions
``archdiff graph`` answers (``docs/graph-queries.md`` has an example).

    import archdiff
    vllm = archdiff.load("out/vllm/evidence.json")
    vllm.graph                      # networkx.MultiDiGraph, node attributes as evidence.json has them
    vllm.of(STRUCTS)                # the typed records of one kind (extractor.structs.records.STRUCTS)
    answer = vllm.reach("py:vllm._custom_ops.silu_and_mul", "kernel")
    for hit in answer.hits:
        print(hit.node.qualname, hit.node.path, hit.node.line)

The queries run on the evidence file's index (:mod:`extractor.evidence.index`), built once per
file and kept in the cache, so :func:`open_index` answers without reading the bundle at all: that
is what the CLI does. Answers are the records of :mod:`extractor.evidence.query`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from extractor.errors import UserInputError
from extractor.evidence.index import GraphIndex, build_index, load_index
from extractor.evidence.query import (DEFAULT_EDGES, FindAnswer, HitsAnswer, PathsAnswer, callees, callers, find,
                                      reach, shortest_paths)

if TYPE_CHECKING:
    import networkx as nx

    from extractor.evidence.read import Evidence
    from extractor.model import RecordKind

R = TypeVar("R")


class LoadedEvidence:
    """One evidence bundle: its typed records (``evidence``), its graph as networkx (``graph``,
    built on first use) and the graph queries."""

    def __init__(self, evidence: Evidence, index: GraphIndex) -> None:
        self.evidence = evidence
        self.index = index

    @functools.cached_property
    def graph(self) -> nx.MultiDiGraph:
        from extractor.evidence.graph import graph_of

        return graph_of(self.evidence.graph.nodes, self.evidence.graph.edges, self.evidence.system.name)

    def of(self, kind: RecordKind[R]) -> tuple[R, ...]:
        """The records of one evidence kind (``loaded.of(archdiff.STRUCTS)``)."""
        return self.evidence.of(kind)

    def path(self, source: str, target: str, edges: Iterable[str] = DEFAULT_EDGES, max_paths: int = 3) -> PathsAnswer:
        return shortest_paths(self.index, source, target, edges, max_paths)

    def callers(self, node: str, **options: Any) -> HitsAnswer:
        return callers(self.index, node, **options)

    def callees(self, node: str, **options: Any) -> HitsAnswer:
        return callees(self.index, node, **options)

    def reach(self, node: str, to_kind: str, **options: Any) -> HitsAnswer:
        return reach(self.index, node, to_kind, **options)

    def find(self, pattern: str, **options: Any) -> FindAnswer:
        return find(self.index, pattern, **options)


def load(source: str | Path, cache_dir: Path | None = None) -> LoadedEvidence:
    """An ``evidence.json`` (or a directory holding one), read and validated."""
    from extractor.evidence.read import load_evidence

    path = _evidence_file(source)
    if path is None:
        raise UserInputError(f"{source}: not an evidence file nor a directory with evidence.json "
                             "(archdiff.open_index also extracts a source spec)")
    evidence = load_evidence(path)
    return LoadedEvidence(evidence, load_index(path, cache_dir))


def open_index(source: str | Path, cache_dir: Path | None = None, jobs: int = 1) -> GraphIndex:
    """The graph index of ``source``: an evidence file or a directory holding one (its index read
    from the cache, or built and stored), or a source spec or system file, extracted now through
    the extraction cache as ``archdiff compare`` extracts a side."""
    path = _evidence_file(source)
    if path is not None:
        return load_index(path, cache_dir)
    from archdiff.sides import extract_side

    return build_index(extract_side(str(source), cache_dir, jobs))


def _evidence_file(source: str | Path) -> Path | None:
    from comparator.inputs import evidence_path

    return evidence_path(str(source))


__all__ = ["LoadedEvidence", "load", "open_index", "shortest_paths", "callers", "callees", "reach", "find",
           "DEFAULT_EDGES", "GraphIndex", "PathsAnswer", "HitsAnswer", "FindAnswer"]
