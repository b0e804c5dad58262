"""``archdiff graph`` answers as text, JSON or Graphviz DOT; formatting only, the answers are
computed by :mod:`extractor.evidence.query`.

JSON is the answer record as it is (``docs/graph-queries.md`` gives the schema), with sorted keys
and a ``schema_version``; DOT draws the chains of an answer (the paths, or each hit's witness
chain), one node per symbol, coloured by language, each edge labelled with its kind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from extractor.evidence.query import EdgeRef, FindAnswer, HitsAnswer, NodeRef, PathsAnswer, Step
from extractor.model import to_jsonable

Answer = PathsAnswer | HitsAnswer | FindAnswer
GRAPH_QUERY_SCHEMA = 1  # the version of the JSON answers; a key changes meaning only with a new one


def render(answer: Answer, fmt: str) -> str:
    if fmt == "json":
        return render_json(answer)
    if fmt == "dot":
        return render_dot(answer)
    return render_text(answer)


def render_json(answer: Answer) -> str:
    return json.dumps({"schema_version": GRAPH_QUERY_SCHEMA, **to_jsonable(answer)},
                      indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------------------- text


def node_text(node: NodeRef) -> str:
    return f"{node.qualname} [{node.kind}, {node.language}] ({node.path}:{node.line})"


def edge_text(edge: EdgeRef) -> str:
    return f"-[{edge.kind} {edge.path}:{edge.line}]->"


def chain_lines(chain: Iterable[Step], indent: str = "") -> list[str]:
    """A chain as ``qualname (path:line)`` lines, each after the first led by the edge to it."""
    return [f"{indent}{node_text(step.node)}" if step.edge is None
            else f"{indent}  {edge_text(step.edge)} {node_text(step.node)}" for step in chain]


def render_text(answer: Answer) -> str:
    if isinstance(answer, PathsAnswer):
        return _paths_text(answer)
    if isinstance(answer, HitsAnswer):
        return _hits_text(answer)
    return _find_text(answer)


def _paths_text(answer: PathsAnswer) -> str:
    over = ", ".join(answer.edges)
    if not answer.paths:
        return f"no path from {answer.source.id} to {answer.target.id} over {over}\n"
    head = (f"{len(answer.paths)} shortest path{'s' if len(answer.paths) > 1 else ''} "
            f"({len(answer.paths[0]) - 1} steps) from {answer.source.id} to {answer.target.id} over {over}")
    lines = [head]
    for chain in answer.paths:
        lines.append("")
        lines.extend(chain_lines(chain))
    return "\n".join(lines) + "\n"


def _hits_text(answer: HitsAnswer) -> str:
    what = {"callers": "callers of", "callees": "callees of", "reach": "nodes reached from"}[answer.query]
    lines = [f"{len(answer.hits)} {what} {answer.start.id} over {', '.join(answer.edges)}"]
    for hit in answer.hits:
        lines.append(f"{hit.depth}  {node_text(hit.node)}")
        if hit.depth > 1 or answer.query == "reach":
            lines.extend(chain_lines(hit.chain, "     "))
        else:
            edge = hit.chain[1].edge
            assert edge is not None  # a chain of one step has its edge on its second node
            lines.append(f"     via {edge.kind} at {edge.path}:{edge.line}")
    return "\n".join(lines) + "\n"


def _find_text(answer: FindAnswer) -> str:
    lines = [f"{len(answer.nodes)} nodes match {answer.pattern!r}"]
    for node in answer.nodes:
        extra = "; ".join(x for x in (node.api, f"layer: {node.layer}" if node.layer else "") if x)
        lines.append(f"{node.id}  [{node.kind}, {node.language}] ({node.path}:{node.line})"
                     + (f"  {extra}" if extra else ""))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ dot

_LANGUAGE_COLOURS = {"python": "#cfe2ff", "cpp": "#d1e7dd", "cuda": "#fff3cd", "rust": "#f8d7da", "go": "#e2d9f3"}


def render_dot(answer: Answer) -> str:
    chains: list[tuple[Step, ...]]
    if isinstance(answer, PathsAnswer):
        chains = list(answer.paths) or [(Step(answer.source, None),), (Step(answer.target, None),)]
    elif isinstance(answer, HitsAnswer):
        chains = [hit.chain for hit in answer.hits] or [(Step(answer.start, None),)]
    else:
        chains = [(Step(node, None),) for node in answer.nodes]
    nodes: dict[str, NodeRef] = {}
    edges: set[tuple[str, str, str, str]] = set()
    for chain in chains:
        for before, step in zip((None, *chain), chain):
            nodes[step.node.id] = step.node
            if before is not None and step.edge is not None:
                edges.add((before.node.id, step.node.id, step.edge.kind, f"{step.edge.path}:{step.edge.line}"))
    lines = [f"digraph {_quote(answer.query)} {{", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    for nid in sorted(nodes):
        node = nodes[nid]
        label = f"{node.qualname}\n{node.kind}, {node.language}\n{node.path}:{node.line}"
        colour = _LANGUAGE_COLOURS.get(node.language, "#eeeeee")
        lines.append(f"  {_quote(nid)} [label={_quote(label)}, fillcolor={_quote(colour)}];")
    for source, target, kind, where in sorted(edges):
        lines.append(f"  {_quote(source)} -> {_quote(target)} [label={_quote(kind)}, tooltip={_quote(where)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, newlines as DOT's centred line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
