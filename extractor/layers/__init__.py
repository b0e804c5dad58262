"""Layers: the architectural role of every module, from a role taxonomy kept as data (roles.yaml).

A module is a Python module or a C/C++/CUDA file. Its role is decided by weighted signals (path
words, imports, includes, names used and called, base classes, defined symbols and methods,
detected concepts, the generator that wrote it) and every decision keeps the rows that made it.
Path words alone are weak: a role must be corroborated by the kinds of signal the taxonomy names
for it, or the module falls to the next role or stays unassigned with why, and every layer states
how much of it rests on more than path words. Generated code is a layer apart, its tools named.
The facts come from the concepts step's scanner (imports, includes, bases, defs) so roles are
assigned with or without the graph steps; the graph adds key symbols (by centrality) and the
layer-to-layer dependency matrix, and without it there are none.

The package is split by concept: :mod:`.records` (what goes into the bundle), :mod:`.taxonomy`
(roles.yaml), :mod:`.facts` (what a module offers the signals), :mod:`.scoring`, :mod:`.package`
(a weak module takes its package's role), :mod:`.matrix` (layer-to-layer dependencies) and
:mod:`.summary` (layers, key symbols, concepts with their rows, one-line summaries).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence

import msgspec

from extractor import bindings, concepts, cpp, generated, python
from extractor.context import Context, ExtractOptions, SourceFile
from extractor.layers.facts import ModuleFacts, collect_module_facts, companion_headers, module_id, top_packages
from extractor.graphparts import graph_parts as merged_graph
from extractor.layers.matrix import (DEPENDENCY_KINDS, PathDependency, UpwardDependency, dependency_matrix,
                                     path_dependencies)
from extractor.layers.package import settle_by_package
from extractor.layers.records import (LAYERS, UNASSIGNED, Confidence, KeySymbol, Layer, LayerConcept,
                                      LayerDependency, ModuleRole, RoleEvidence)
from extractor.layers.scoring import score_facade, score_module, signal_index
from extractor.layers.summary import KEY_SYMBOL_KIND_TUPLE, build_layers, layer_stats, rank_symbols
from extractor.layers.taxonomy import TAXONOMY_FILE, Taxonomy, load_taxonomy
from extractor.model import Contribution, Edge, EdgeKind, Language, Node, NodeKind, Step, node_key
from extractor.support.forkmap import fork_calls, spans

__all__ = ["STEP", "TAXONOMY_FILE", "UNASSIGNED", "Confidence", "KeySymbol", "Layer", "LayerConcept",
           "LayerDependency", "ModuleRole", "RoleEvidence", "Taxonomy", "extract_layers", "load_taxonomy"]

# Not Language.PROTO: a .proto file declares an interface, it is no code of a layer, a mechanism or a
# generator's output; its definitions are graph nodes only (extractor.proto).
CODE_LANGUAGES = (Language.PYTHON, Language.CPP, Language.CUDA, Language.RUST, Language.GO)
# C++ and CUDA files include each other and make one engine: one family for package context
LANGUAGE_FAMILIES = {Language.CPP: "c", Language.CUDA: "c"}


@dataclasses.dataclass(frozen=True, slots=True)
class LayersShared:
    """What the layers step shares with later steps: the upward dependencies it counted."""

    upward: tuple[UpwardDependency, ...]


def indexed_taxonomy(options: ExtractOptions) -> Taxonomy:
    """The run's taxonomy (the user's file, or archdiff's own roles.yaml) with its signal index
    built. The step's ``prepare``: 0.08 s on vLLM's run that needs nothing the scan finds, so the
    pipeline does it while the pool scans and the step finds both in their caches."""
    taxonomy = load_taxonomy(options.extra.get("taxonomy") or TAXONOMY_FILE)
    signal_index(taxonomy)
    return taxonomy


def extract_layers(ctx: Context) -> Contribution[LayersShared]:
    taxonomy = indexed_taxonomy(ctx.options)
    shared = ctx.result(concepts.STEP).shared
    concepts_by_file = shared.by_file if shared is not None else {}

    nodes, edges = graph_parts(ctx)
    inherits, dependencies, contains = _edges_by_use(edges)
    symbols_by_path: dict[str, list[Node]] = collections.defaultdict(list)
    for node in nodes.values():
        if node.path and node.kind in KEY_SYMBOL_KIND_TUPLE:
            symbols_by_path[node.path].append(node)
    bases_by_path: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
    for edge in inherits:
        if edge.source in nodes:
            target = nodes.get(edge.target)
            shown = target.qualname if target is not None else edge.target.split(":", 1)[-1]
            bases_by_path[nodes[edge.source].path].append((shown, edge.line or nodes[edge.source].line))
    module_ids: dict[str, str] = {}
    modules = [n for n in nodes.values() if (n.kind is NodeKind.MODULE or n.kind is NodeKind.FILE) and n.path]
    for n in sorted(modules, key=node_key):  # the graph steps' own module node first, if there is one
        module_ids.setdefault(n.path, n.id)

    written = generated.generated_files(ctx)
    tops = top_packages(ctx.files)
    headers = companion_headers(ctx.files)

    def facts_of(file: SourceFile) -> ModuleFacts:
        return collect_module_facts(file, file.facts.get("concepts"), concepts_by_file.get(file.path, {}),
                                    symbols_by_path.get(file.path, ()),
                                    bases_by_path.get(file.path, ()), module_ids.get(file.path, module_id(file)),
                                    written.get(file.path),
                                    frozenset({tops[file.path]}) if file.path in tops else frozenset(),
                                    headers.get(file.path))

    scored, ranked, path_deps = score_modules([file for file in ctx.files if file.language in CODE_LANGUAGES],
                                              facts_of, taxonomy, (nodes, dependencies, contains), ctx.options.jobs)
    facades = {role.path: facade for role, facade in scored}
    families = {file.path: LANGUAGE_FAMILIES.get(file.language, file.language.value) for file in ctx.files}
    assignments = sorted(settle_by_package([role for role, _facade in scored], taxonomy, families))
    assignments = [(facades[a.path] or a) if a.role == UNASSIGNED else a for a in assignments]

    role_of = {a.path: a.role for a in assignments}
    matrix = dependency_matrix(taxonomy, path_deps, role_of)
    layers = build_layers(taxonomy, assignments, ranked, concepts_by_file, matrix.depends_on)
    stats = layer_stats(taxonomy, assignments, matrix.upward)
    return Contribution(records=tuple(layers), stats=stats, shared=LayersShared(matrix.upward))


_SCORED = msgspec.msgpack.Decoder(list[tuple[ModuleRole, ModuleRole | None]])
_RANKED = msgspec.msgpack.Decoder(dict[str, list[KeySymbol]])
_PATH_DEPENDENCIES = msgspec.msgpack.Decoder(list[PathDependency])

Graph = tuple[Mapping[str, Node], list[Edge], list[Edge]]  # nodes by id, dependency edges, contains edges


def score_modules(files: Sequence[SourceFile], facts_of: Callable[[SourceFile], ModuleFacts], taxonomy: Taxonomy,
                  graph: Graph, jobs: int
                  ) -> tuple[list[tuple[ModuleRole, ModuleRole | None]], dict[str, list[KeySymbol]],
                             list[PathDependency]]:
    """Each module's own role and, when it has none, the role the names it re-exports give it
    (:func:`score_facade`: settling by package never leaves unassigned a module that had a role,
    so no other module needs it), in the order of ``files``; and what the graph gives whatever
    the roles: key symbols by path (:func:`rank_symbols`) and the dependencies between files
    (:func:`path_dependencies`, which the matrix sums by role).

    Scored by spans of modules in ``jobs`` forked children (extractor.support.forkmap) that
    inherit the facts, the graph and the taxonomy's signal index, built here first; the two graph
    passes (0.1 s of vLLM's driver) go to the same children. Everything comes back as msgpack,
    decoded by msgspec in C: 2,099 roles of vLLM with their rows, where unpickling as many
    dataclasses runs a Python ``__setstate__`` per record. The same encoding runs with one job,
    so every ``jobs`` gives the same records."""
    signal_index(taxonomy)
    nodes, dependencies, contains = graph

    def score(span: range) -> bytes:
        pairs = []
        for file in files[span.start:span.stop]:
            mf = facts_of(file)
            role = score_module(mf, taxonomy)
            pairs.append((role, score_facade(mf, taxonomy) if role.role == UNASSIGNED else None))
        return msgspec.msgpack.encode(pairs)

    def rank() -> bytes:
        return msgspec.msgpack.encode(rank_symbols(nodes, dependencies, contains))

    def depend() -> bytes:
        return msgspec.msgpack.encode(path_dependencies(nodes, dependencies))

    calls: list[Callable[[], bytes]] = [*(functools.partial(score, span) for span in spans(len(files), jobs)),
                                        rank, depend]
    *scored, ranked, path_deps = fork_calls(calls, jobs)
    return ([pair for encoded in scored for pair in _SCORED.decode(encoded)], _RANKED.decode(ranked),
            _PATH_DEPENDENCIES.decode(path_deps))


def graph_parts(ctx: Context) -> tuple[dict[str, Node], list[Edge]]:
    """Nodes and edges of the steps that ran before this one (the graph steps), merged as the bundle
    merges them (and merged once: the bundle writer takes the same merge when no step after this
    one adds to the graph)."""
    graph = merged_graph(ctx, [name for name in ctx.results if name != STEP.name])
    return graph.nodes, graph.edges


def _edges_by_use(edges: list[Edge]) -> tuple[list[Edge], list[Edge], list[Edge]]:
    """``(inherits, dependencies, contains)``, each in the order of ``edges``, in one pass (an enum
    in a set is hashed by a Python function, so the kinds are a tuple: 110,000 edges, one scan)."""
    inherits: list[Edge] = []
    dependencies: list[Edge] = []
    contains: list[Edge] = []
    for edge in edges:
        kind = edge.kind
        if kind is EdgeKind.CONTAINS:
            contains.append(edge)
        elif kind in DEPENDENCY_KINDS:
            dependencies.append(edge)
            if kind is EdgeKind.INHERITS:
                inherits.append(edge)
    return inherits, dependencies, contains


# The graph steps' nodes and edges give key symbols and the matrix; the concepts step its hits; the
# generated-code step which files a tool wrote.
STEP = Step(name="layers", extract=extract_layers, records=LAYERS, version="2", prepare=indexed_taxonomy,
            requires=(python.STEP, cpp.STEP, bindings.PYTHON_CPP_STEP, generated.STEP, concepts.STEP))
