"""What the Rust and Go graph steps share: running a builder with the system's manifests, and
turning a file's parse errors into a diagnostic."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from extractor.native.manifests import Manifests, system_manifests
from extractor.model import Contribution, Diagnostic, Edge, Language, Node, Severity, edge_key, node_key

X = TypeVar("X")
F = TypeVar("F")  # a scanner's facts (RustFacts, GoFacts)


def extract_with_manifests(ctx: Any, step: str, language: Language,
                           build: Callable[[Iterable[tuple[str, F]], Manifests], Contribution[X]],
                           manifest: str) -> Contribution[X]:
    """``build`` over the step's per-file facts and the manifests; the problems of the manifests
    named ``manifest`` (Cargo.toml/pyproject.toml, go.mod) are reported by this step."""
    files = [(f.path, facts) for f, facts in ctx.facts(step, language)]
    if not files:
        return Contribution()
    manifests = ctx.once(system_manifests)  # read once per system, whichever step asks first
    result = build(files, manifests)
    problems = tuple(d for d in manifests.diagnostics if (d.path.rsplit("/", 1)[-1] == "go.mod") == (manifest == "go.mod"))
    return dataclasses.replace(result, diagnostics=tuple(sorted(result.diagnostics + problems)))


def parse_error_diagnostic(path: str, errors: int, lines: Sequence[int]) -> Diagnostic | None:
    """The diagnostic of a file whose tree has ``errors`` ERROR nodes (the first at ``lines[0]``)."""
    if not errors:
        return None
    return Diagnostic(path, lines[0] if lines else 0, "parse-errors",
                      f"{errors} ERROR node(s) in the syntax tree; definitions there may be missing",
                      Severity.INFO if errors <= 3 else Severity.WARNING)


def finish_graph(nodes: Iterable[Node], external: Iterable[Node], edges: Iterable[Edge],
                 stats: dict[str, Any], files: int) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    """Sorted nodes and (deduplicated) edges, and the counts every graph step reports."""
    own = list(nodes)
    all_nodes = tuple(sorted([*own, *external], key=node_key))
    all_edges = tuple(sorted(set(edges), key=edge_key))
    for n in own:
        stats[f"nodes_{n.kind.value}"] += 1
    for e in all_edges:
        stats[f"edges_{e.kind.value}"] += 1
    stats["files"] = files
    calls = stats["calls_resolved"] + stats["calls_unresolved"]
    stats["calls_resolution_rate"] = round(stats["calls_resolved"] / calls, 4) if calls else 0.0
    return all_nodes, all_edges
