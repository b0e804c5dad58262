"""A C/C++ graph built from a handwritten tree (``{relative path: code}``) written at test time."""

from __future__ import annotations

from pathlib import Path

from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution, EdgeKind


def cpp_graph(root: Path, files: dict[str, str]) -> Contribution:
    for rel, code in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    return extract_cpp_graph(scan_trees({"": root}))


def edges(graph: Contribution, kind: EdgeKind) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in graph.edges if e.kind is kind}
