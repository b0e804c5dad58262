"""Layers: the architectural role of every module, from a role taxonomy kept as data (roles.yaml).

A module is a Python module or a C/C++/CUDA file. Its role is decided by weighted signals (path
words, imports, includes, names used, base classes, defined symbols, detected concepts) and every
decision keeps the rows that made it. The facts come from the concepts step's scanner (imports,
includes, bases, defs) so layering works with or without the graph steps; the graph, when present,
adds key symbols (by centrality) and the layer-to-layer dependency matrix.

The package is split by concept: :mod:`.records` (what goes into the bundle), :mod:`.taxonomy`
(roles.yaml), :mod:`.facts` (what a module offers the signals), :mod:`.scoring`, :mod:`.matrix`
(layer-to-layer dependencies) and :mod:`.summary` (layers, key symbols, one-line summaries).
"""

from __future__ import annotations

import collections
import re

from extractor.concepts import imported_modules, module_name
from extractor.context import Context
from extractor.layers.facts import collect_module_facts, module_id
from extractor.layers.matrix import dependency_matrix
from extractor.layers.records import UNASSIGNED, KeySymbol, Layer, ModuleRole, RoleEvidence
from extractor.layers.scoring import score_module
from extractor.layers.summary import KEY_SYMBOL_KINDS, build_layers, layer_stats, rank_symbols
from extractor.layers.taxonomy import TAXONOMY_FILE, Taxonomy, load_taxonomy
from extractor.model import Contribution, Edge, EdgeKind, Language, Node, NodeKind, Step, edge_key, node_key

__all__ = ["STEP", "TAXONOMY_FILE", "UNASSIGNED", "KeySymbol", "Layer", "ModuleRole", "RoleEvidence", "Taxonomy",
           "extract_layers", "load_taxonomy"]

CODE_LANGUAGES = (Language.PYTHON, Language.CPP, Language.CUDA)


def extract_layers(ctx: Context) -> Contribution:
    taxonomy_path = ctx.options.extra.get("taxonomy") or TAXONOMY_FILE
    taxonomy = load_taxonomy(taxonomy_path)
    concepts_result = ctx.results.get("concepts")
    concepts_by_file = concepts_result.extra.get("by_file", {}) if concepts_result else {}

    nodes, edges = graph_parts(ctx)
    symbols_by_path: dict[str, list[Node]] = collections.defaultdict(list)
    for node in nodes.values():
        if node.path and node.kind in KEY_SYMBOL_KINDS:
            symbols_by_path[node.path].append(node)
    bases_by_path: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
    for edge in edges:
        if edge.kind is EdgeKind.INHERITS and edge.source in nodes:
            target = nodes.get(edge.target)
            shown = target.qualname if target is not None else edge.target.split(":", 1)[-1]
            bases_by_path[nodes[edge.source].path].append((shown, edge.line or nodes[edge.source].line))
    module_ids: dict[str, str] = {}
    for n in sorted(nodes.values(), key=node_key):  # the graph steps' own module node first, if there is one
        if n.kind in (NodeKind.MODULE, NodeKind.FILE) and n.path:
            module_ids.setdefault(n.path, n.id)

    assignments: list[ModuleRole] = []
    for file in ctx.files:
        if file.language not in CODE_LANGUAGES:
            continue
        facts = file.facts.get("concepts") or {}
        mf = collect_module_facts(file, facts, concepts_by_file.get(file.path, {}), symbols_by_path.get(file.path, ()),
                                  bases_by_path.get(file.path, ()), module_ids.get(file.path, module_id(file)))
        assignments.append(score_module(mf, taxonomy))
    assignments.sort()

    role_of = {a.path: a.role for a in assignments}
    ranked = rank_symbols(nodes, edges)
    layers = build_layers(taxonomy, assignments, ranked, concepts_by_file)
    matrix, upward = dependency_matrix(taxonomy, nodes, edges, role_of)
    stats = layer_stats(taxonomy, assignments, matrix, upward)
    return Contribution(records=tuple(layers), stats=stats,
                        extra={"matrix": matrix, "upward": upward,
                               "roles_by_path": dict(sorted(role_of.items()))})


def graph_parts(ctx: Context) -> tuple[dict[str, Node], list[Edge]]:
    """Nodes and edges of the graph steps, completed from this step's own facts for the files the
    graph does not cover (so layering works before, or without, the graph steps)."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for name, result in sorted(ctx.results.items()):
        if name in ("concepts", STEP.name):
            continue
        for node in result.nodes:
            nodes.setdefault(node.id, node)
        edges.extend(result.edges)
    covered = {n.path for n in nodes.values() if n.kind in KEY_SYMBOL_KINDS}
    have_imports = {e.source for e in edges if e.kind in (EdgeKind.IMPORTS, EdgeKind.INCLUDES)}
    python_modules = {module_name(f.rel) for f in ctx.files if f.language is Language.PYTHON}
    synthesized: set[str] = set()
    code_files = [f for f in ctx.files if f.language in CODE_LANGUAGES]
    graph_modules = {n.path: n.id for n in sorted(nodes.values(), key=node_key)
                     if n.kind in (NodeKind.MODULE, NodeKind.FILE) and n.path}
    for file in code_files:
        mid = graph_modules.get(file.path) or module_id(file)
        if mid not in nodes:
            kind = NodeKind.MODULE if file.language is Language.PYTHON else NodeKind.FILE
            nodes[mid] = Node(mid, kind, file.rel.rsplit("/", 1)[-1], mid.split(":", 1)[1],
                              file.language.value, file.path, 0)
        if file.path in covered:
            continue
        for qualname, kind, line, _bases in (file.facts.get("concepts") or {}).get("defs", ()):
            sid = f"{mid}.{qualname}" if file.language is Language.PYTHON else f"cpp:{file.path}:{qualname}"
            node_kind = {"class": NodeKind.CLASS, "struct": NodeKind.STRUCT, "kernel": NodeKind.KERNEL}.get(
                kind, NodeKind.METHOD if ("." in qualname and file.language is Language.PYTHON) else NodeKind.FUNCTION)
            short = re.split(r"\.|::", qualname)[-1]
            if sid not in nodes:
                nodes[sid] = Node(sid, node_kind, short, qualname, file.language.value, file.path, line)
                synthesized.add(sid)
                edges.append(Edge(mid, sid, EdgeKind.CONTAINS, file.path, line))
    # Dependencies for what the graph steps did not provide: Python imports (of modules, and of the
    # synthesized symbols by name) and C/C++ uses of a name that exactly one synthesized symbol has.
    cpp_by_name: dict[str, set[str]] = collections.defaultdict(set)
    for sid in synthesized:
        if sid.startswith("cpp:") and nodes[sid].kind is not NodeKind.STRUCT:
            cpp_by_name[nodes[sid].name].add(sid)
    for file in code_files:
        mid = graph_modules.get(file.path) or module_id(file)
        facts = file.facts.get("concepts") or {}
        if file.language is Language.PYTHON:
            for module, name, line in imported_modules(file.rel, facts):
                target = None
                if name and f"py:{module}.{name}" in synthesized:
                    target = f"py:{module}.{name}"
                elif mid in have_imports:
                    continue
                elif name and f"{module}.{name}" in python_modules:
                    target = f"py:{module}.{name}"
                elif module in python_modules:
                    target = f"py:{module}"
                if target is not None and target != mid:
                    edges.append(Edge(mid, target, EdgeKind.IMPORTS, file.path, line))
        elif cpp_by_name:
            for name, line in facts.get("names", ()):
                hits = cpp_by_name.get(name.rsplit("::", 1)[-1])
                if hits and len(hits) == 1:
                    (target,) = hits
                    if nodes[target].path != file.path:
                        edges.append(Edge(mid, target, EdgeKind.CALLS, file.path, line))
    return nodes, sorted(set(edges), key=edge_key)


STEP = Step(name="layers", extract=extract_layers, bundle_key="layers", version="1")
