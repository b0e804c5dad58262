"""Layers out of module roles: key symbols ranked by the graph, the one-line summary, statistics."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.concepts.records import ConceptEvidence
from extractor.layers.matrix import UpwardDependency
from extractor.layers.records import (UNASSIGNED, Confidence, KeySymbol, Layer, LayerConcept, LayerDependency,
                                      ModuleRole, RoleEvidence)
from extractor.layers.taxonomy import Role, Taxonomy
from extractor.model import Edge, Node, NodeKind

KEY_SYMBOL_KINDS = frozenset({NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.METHOD,
                              NodeKind.KERNEL, NodeKind.ENUM})
# as tuples for `in` over every node: identity, not Enum.__hash__
KEY_SYMBOL_KIND_TUPLE = tuple(sorted(KEY_SYMBOL_KINDS, key=lambda kind: kind.value))
CLASS_KINDS = (NodeKind.CLASS, NodeKind.STRUCT)
KEY_SYMBOLS_PER_LAYER = 8
EVIDENCE_PER_LAYER = 30
CONCEPT_ROWS_PER_LAYER = 8  # evidence rows kept per concept of a layer (one per module, by path)
# A layer whose modules hold it by corroborated evidence for less than this share of its lines is
# weak: shown, flagged, and never the ground of a takeaway.
WEAK_SHARE = 0.5


def rank_symbols(nodes: Mapping[str, Node], dependencies: Iterable[Edge], contains: Iterable[Edge]
                 ) -> dict[str, list[KeySymbol]]:
    """Key symbols per file path, ranked by in-degree over the dependency edges.

    A method's dependents count for the class that contains it, and methods themselves are not
    candidates: a layer is described by its classes, free functions and kernels (the scheduler
    class rather than its ``Size()`` accessor), and a class used through many methods ranks by
    all of that use.
    """
    degree: collections.Counter[str] = collections.Counter(e.target for e in dependencies if e.source != e.target)
    owner = {}
    for e in contains:
        method, cls = nodes.get(e.target), nodes.get(e.source)
        if method is not None and method.kind is NodeKind.METHOD and cls is not None and cls.kind in CLASS_KINDS:
            owner[e.target] = e.source
    for method_id, cls_id in owner.items():
        degree[cls_id] += degree.get(method_id, 0)
    by_path: dict[str, list[KeySymbol]] = collections.defaultdict(list)
    # only what something depends on can rank, in id order as the rows are listed
    for node_id in sorted(node_id for node_id, n in degree.items() if n > 0 and node_id in nodes):
        node = nodes[node_id]
        if node.kind not in KEY_SYMBOL_KIND_TUPLE or node.kind is NodeKind.METHOD and node_id in owner:
            continue
        if not node.path or node.name.startswith("_"):
            continue
        by_path[node.path].append(KeySymbol(node.path, node.line, node_id, node.name, node.kind.value,
                                            degree[node_id]))
    return by_path


def build_layers(taxonomy: Taxonomy, assignments: list[ModuleRole], ranked: Mapping[str, list[KeySymbol]],
                 concepts_by_file: Mapping[str, Mapping[str, Any]],
                 depends_on: Mapping[str, tuple[LayerDependency, ...]]) -> list[Layer]:
    by_role: dict[str, list[ModuleRole]] = collections.defaultdict(list)
    for a in assignments:
        by_role[a.role].append(a)
    layers = []
    for role in [*taxonomy.roles, Role(UNASSIGNED, "Unassigned (below the role threshold)", False, ())]:
        modules = by_role.get(role.id)
        if not modules:
            continue
        symbols = sorted((s for m in modules for s in ranked.get(m.path, ())),
                         key=lambda s: (-s.in_degree, s.name, s.id))[:KEY_SYMBOLS_PER_LAYER]
        carried = layer_concepts(modules, concepts_by_file)
        concepts = tuple(c.id for c in carried)
        lines = sum(m.lines for m in modules)
        corroborated = sum(m.lines for m in modules if m.confidence is Confidence.CORROBORATED)
        share = round(corroborated / lines, 4) if lines else 0.0
        evidence = strongest_rows(modules)
        layers.append(Layer(
            role=role.id, title=role.title, apart=role.apart, lines=lines, concepts=concepts,
            summary=summarize(role, modules, lines, symbols, concepts, evidence),
            key_symbols=tuple(symbols), modules=tuple(modules), evidence=evidence,
            depends_on=depends_on.get(role.id, ()), corroborated_lines=corroborated, corroborated_share=share,
            weak=role.id != UNASSIGNED and share < WEAK_SHARE, concept_evidence=carried))
    return layers


def layer_concepts(modules: list[ModuleRole], concepts_by_file: Mapping[str, Mapping[str, Any]]
                   ) -> tuple[LayerConcept, ...]:
    """The concepts of a layer, each only through the modules whose own facts showed it (most
    modules first), with the first hit in each of them as a row a reader can open."""
    found: dict[str, list[ConceptEvidence]] = collections.defaultdict(list)
    for m in sorted(modules, key=lambda m: m.path):
        for concept, hit in concepts_by_file.get(m.path, {}).items():
            found[concept].append(ConceptEvidence(m.path, hit.line, hit.matched, hit.via))
    return tuple(LayerConcept(c, len(rows), tuple(rows[:CONCEPT_ROWS_PER_LAYER]))
                 for c, rows in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def strongest_rows(modules: list[ModuleRole]) -> tuple[RoleEvidence, ...]:
    """The deciding row of each module (its heaviest), heaviest modules first, capped and sorted."""
    tops = [m.evidence[0] for m in sorted(modules, key=lambda m: (-m.score, m.path)) if m.evidence]
    return tuple(sorted(tops[:EVIDENCE_PER_LAYER]))


def summarize(role: Role, modules: list[ModuleRole], lines: int, symbols: list[KeySymbol],
              concepts: tuple[str, ...], evidence: tuple[RoleEvidence, ...]) -> str:
    """One line, built only from what was found."""
    parts = [f"{len(modules)} module{'s' if len(modules) != 1 else ''}, {lines:,} lines"]
    tools = collections.Counter(r.matched for m in modules for r in m.evidence[:1] if r.signal == "generator")
    if tools:
        # What a tool wrote is described by the tool: its class names are the schema's, not a design.
        ranked_tools = sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))
        parts.append("written by " + ", ".join(f"{t} ({n})" for t, n in ranked_tools))
        return f"{role.title}: " + "; ".join(parts) + "."
    if symbols:
        parts.append("key symbols " + ", ".join(s.name for s in symbols[:4]))
    if concepts:
        parts.append("concepts " + ", ".join(concepts[:4]))
    if not symbols and evidence:
        signals = collections.Counter(f"{r.signal} {r.matched}" for r in evidence)
        parts.append("decided by " + ", ".join(s for s, _n in signals.most_common(3)))
    return f"{role.title}: " + "; ".join(parts) + "."


def layer_stats(taxonomy: Taxonomy, assignments: list[ModuleRole], upward: Iterable[UpwardDependency]
                ) -> dict[str, Any]:
    apart = {r.id for r in taxonomy.roles if r.apart}
    counted = [a for a in assignments if a.role not in apart]
    total = sum(a.lines for a in counted)
    assigned = sum(a.lines for a in counted if a.role != UNASSIGNED)
    corroborated = sum(a.lines for a in counted if a.confidence is Confidence.CORROBORATED)
    by_role: collections.Counter[str] = collections.Counter()
    for a in assignments:
        by_role[a.role] += a.lines
    return {
        "modules": len(assignments),
        "modules_apart": len(assignments) - len(counted),
        "modules_assigned": sum(1 for a in counted if a.role != UNASSIGNED),
        "modules_path_only": sum(1 for a in counted if a.confidence is Confidence.PATH_ONLY),
        "lines_counted": total,
        "lines_assigned": assigned,
        "assigned_share": round(assigned / total, 4) if total else 0.0,
        "lines_corroborated": corroborated,
        # of the assigned lines, the share whose role more than path words decided
        "corroborated_share": round(corroborated / assigned, 4) if assigned else 0.0,
        "lines_by_role": dict(sorted(by_role.items())),
        "upward_edges": sum(u.edges for u in upward),
    }
