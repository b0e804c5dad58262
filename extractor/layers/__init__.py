"""Layers: the architectural role of every module, from a role taxonomy kept as data (roles.yaml).

A module is a Python module or a C/C++/CUDA file. Its role is decided by weighted signals (path
words, imports, includes, names used, base classes, defined symbols, detected concepts) and every
decision keeps the rows that made it. The facts come from the concepts step's scanner (imports,
includes, bases, defs) so layering works with or without the graph steps; the graph, when present,
adds key symbols (by centrality) and the layer-to-layer dependency matrix.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


from extractor import naming
from extractor.concepts import imported_modules, resolve_relative
from extractor.context import Context, SourceFile
from extractor.datafile import Regex, load_data_file
from extractor.errors import UserInputError
from extractor.model import Contribution, Edge, EdgeKind, Language, Node, NodeKind, Step, edge_key, node_key

TAXONOMY_FILE = Path(__file__).with_name("roles.yaml")
UNASSIGNED = "unassigned"
SIGNAL_KINDS = ("path", "import", "include", "name", "base", "symbol", "defines", "concept", "language")
CODE_LANGUAGES = (Language.PYTHON, Language.CPP, Language.CUDA)
# Edges that say "this module depends on that one"; `contains` only says where a symbol lives.
DEPENDENCY_EDGES = frozenset({EdgeKind.IMPORTS, EdgeKind.INCLUDES, EdgeKind.CALLS, EdgeKind.INHERITS,
                              EdgeKind.BINDS, EdgeKind.LAUNCHES})
KEY_SYMBOL_KINDS = frozenset({NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.METHOD,
                              NodeKind.KERNEL, NodeKind.ENUM})
KEY_SYMBOLS_PER_LAYER = 8
EVIDENCE_PER_LAYER = 30
UPWARD_EXAMPLES = 5
FAR_PATH_FACTOR = 0.75  # weight of a path word above the file's own directory

TAXONOMY_SCHEMA = {
    "version": int,
    "threshold": float,
    "stack": [(str, [str])],
    "roles": [{
        "id": str,
        "title": str,
        "apart?": bool,
        "description?": str,
        "signals": [{"kind": str, "weight": float, "any": [Regex], "min?": int}],
    }],
}


# --- records ----------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, order=True, slots=True)
class RoleEvidence:
    """One signal that fired for a module: where, what matched, and what it was worth."""

    path: str
    line: int  # 0 for whole-file signals (path words, language)
    role: str
    signal: str  # one of SIGNAL_KINDS
    matched: str  # the fact that matched: "fastapi", "BlockPool", "entrypoints"
    weight: float


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class ModuleRole:
    path: str
    line: int  # always 0: a whole module
    module: str  # graph node id ("py:pkg.mod", "file:core/src/x.cc")
    role: str  # best role, or "unassigned"
    score: float
    lines: int
    runner_up: str  # the second-best role ("" if none scored), to show how close the call was
    runner_up_score: float
    evidence: tuple[RoleEvidence, ...]  # the rows behind `role` (for "unassigned": behind the best guess)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class KeySymbol:
    path: str
    line: int
    id: str
    name: str
    kind: str
    in_degree: int  # dependency edges into the symbol (for a class, into its methods too)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Layer:
    role: str
    title: str
    summary: str
    apart: bool  # tests/examples and vendored code: reported, but not part of the architecture
    lines: int
    concepts: tuple[str, ...]
    key_symbols: tuple[KeySymbol, ...]
    modules: tuple[ModuleRole, ...]
    evidence: tuple[RoleEvidence, ...]  # the strongest rows over the layer's modules, capped


# --- taxonomy ---------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Signal:
    kind: str
    weight: float
    pattern: re.Pattern[str]
    min: int = 1  # distinct matching items needed: one incidental torch.ops call is not a kernel module


@dataclasses.dataclass(frozen=True, slots=True)
class Role:
    id: str
    title: str
    apart: bool
    signals: tuple[Signal, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Taxonomy:
    roles: tuple[Role, ...]  # in precedence order: ties go to the earlier role
    threshold: float
    stack: tuple[tuple[str, ...], ...]  # levels, top (client) to bottom (hardware); roles in one level are peers

    def role(self, role_id: str) -> Role | None:
        return next((r for r in self.roles if r.id == role_id), None)


def load_taxonomy(path: Path | str = TAXONOMY_FILE) -> Taxonomy:
    path = Path(path)
    data = load_data_file(path, TAXONOMY_SCHEMA)
    roles, seen = [], set()
    for i, entry in enumerate(data["roles"]):
        if entry["id"] in seen or entry["id"] == UNASSIGNED:
            raise UserInputError(f"{path}: roles[{i}].id: {entry['id']!r} is used twice or reserved")
        seen.add(entry["id"])
        signals = []
        for j, sig in enumerate(entry["signals"]):
            if sig["kind"] not in SIGNAL_KINDS:
                raise UserInputError(f"{path}: roles[{i}].signals[{j}].kind: {sig['kind']!r} is not one of "
                                     f"{', '.join(SIGNAL_KINDS)}")
            signals.append(Signal(sig["kind"], float(sig["weight"]),
                                  re.compile("|".join(f"(?:{p})" for p in sig["any"])), sig.get("min", 1)))
        roles.append(Role(entry["id"], entry["title"], bool(entry.get("apart", False)), tuple(signals)))
    levels = []
    for i, level in enumerate(data["stack"]):
        level = (level,) if isinstance(level, str) else tuple(level)
        for role_id in level:
            if role_id not in seen:
                raise UserInputError(f"{path}: stack[{i}]: {role_id!r} is not a role id defined under roles")
        levels.append(level)
    return Taxonomy(tuple(roles), float(data["threshold"]), tuple(levels))


# --- what a module looks like to the signals ---------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class ModuleFacts:
    """Per signal kind, the (item, line) pairs a module offers to the role signals."""

    file: SourceFile
    module: str
    items: Mapping[str, tuple[tuple[str, int], ...]]


def module_id(file: SourceFile) -> str:
    return naming.py_id(file.module) if file.language is Language.PYTHON else naming.file_id(file.path)


def path_segments(rel: str) -> tuple[tuple[str, int], ...]:
    parts = rel.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return tuple((p.lower(), 0) for p in [*parts[:-1], stem] if p)


def collect_module_facts(file: SourceFile, facts: Mapping[str, Any], concepts: Mapping[str, Any],
                         graph_symbols: Iterable[Node], graph_bases: Iterable[tuple[str, int]],
                         module: str) -> ModuleFacts:
    is_python = file.language is Language.PYTHON
    imports: list[tuple[str, int]] = []
    if is_python:
        for mod, name, line in imported_modules(file, facts):
            imports.append((mod, line))
            if name and name != "*":
                imports.append((f"{mod}.{name}", line))
    names = [((resolve_relative(n, file) if is_python else n), line) for n, line in facts.get("names", ())]
    defs = facts.get("defs", ())
    # Symbol signals look at classes and top-level functions: a method called "schedule" does not
    # make its module a scheduler.
    symbols = [(re.split(r"\.|::", q)[-1], line) for q, kind, line, _b in defs
               if not is_python or "." not in q or kind == "class"]
    symbols += [(n.name, n.line) for n in graph_symbols
                if n.kind in (NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.KERNEL)]
    bases = [((resolve_relative(b, file) if is_python else b), line) for _q, _k, line, bs in defs for b in bs]
    bases += list(graph_bases)
    kinds = [(kind, line) for _q, kind, line, _b in defs]
    items = {
        "path": path_segments(file.rel),
        "import": tuple(sorted(set(imports))),
        "include": tuple(sorted({(h, line) for h, line in facts.get("includes", ())})),
        "name": tuple(sorted(set(names))),
        "base": tuple(sorted(set(bases))),
        "symbol": tuple(sorted(set(symbols), key=lambda s: (s[1], s[0]))),
        "defines": tuple(sorted(set(kinds), key=lambda s: (s[1], s[0]))),
        "concept": tuple(sorted((cid, hit[0]) for cid, hit in concepts.items())),
        "language": ((file.language.value, 0),),
    }
    return ModuleFacts(file, module, items)


def score_module(mf: ModuleFacts, taxonomy: Taxonomy) -> ModuleRole:
    scored: list[tuple[float, int, int, Role, list[RoleEvidence]]] = []  # score, unnamed, order, role, rows
    for order, role in enumerate(taxonomy.roles):
        rows = []
        for signal in role.signals:
            if signal.kind == "path":
                # The file's own name and its directory speak for it; a word further up the tree
                # (vllm/model_executor/layers/linear.py: "model_executor") counts for less.
                segments = mf.items["path"]
                hits = [i for i, item in enumerate(segments) if signal.pattern.fullmatch(item[0])]
                if hits:
                    near = hits[-1] >= len(segments) - 2
                    rows.append(RoleEvidence(mf.file.path, 0, role.id, "path", segments[hits[-1]][0],
                                             signal.weight if near else signal.weight * FAR_PATH_FACTOR))
                continue
            if signal.min > 1:
                matched = {item[0] for item in mf.items[signal.kind] if signal.pattern.fullmatch(item[0])}
                if len(matched) < signal.min:
                    continue
            hit = next((item for item in mf.items[signal.kind] if signal.pattern.fullmatch(item[0])), None)
            if hit is not None:
                rows.append(RoleEvidence(mf.file.path, hit[1], role.id, signal.kind, hit[0], signal.weight))
        if rows:
            # On equal scores the module's own name decides (a path word next to the file), then
            # the taxonomy's order.
            named = any(r.signal == "path" and r.weight == s.weight for r in rows for s in role.signals
                        if s.kind == "path")
            scored.append((sum(r.weight for r in rows), 0 if named else 1, order, role, rows))
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    if not scored:
        return ModuleRole(mf.file.path, 0, mf.module, UNASSIGNED, 0.0, mf.file.lines, "", 0.0, ())
    best_score, _named, _order, best, rows = scored[0]
    runner = scored[1] if len(scored) > 1 else None
    role = best.id if best_score >= taxonomy.threshold else UNASSIGNED
    return ModuleRole(mf.file.path, 0, mf.module, role, best_score, mf.file.lines,
                      runner[3].id if runner else "", runner[0] if runner else 0.0,
                      tuple(sorted(rows, key=lambda r: (-r.weight, r.signal, r.line, r.matched))))


# --- the step ---------------------------------------------------------------------------------------

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
    python_modules = {f.module for f in ctx.files if f.language is Language.PYTHON}
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
            sid = f"{mid}.{qualname}" if file.language is Language.PYTHON else naming.cpp_id(qualname)
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
            for module, name, line in imported_modules(file, facts):
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


def rank_symbols(nodes: Mapping[str, Node], edges: Iterable[Edge]) -> dict[str, list[KeySymbol]]:
    """Key symbols per file path, ranked by in-degree over the dependency edges.

    A method's dependents count for the class that contains it, and methods themselves are not
    candidates: a layer is described by its classes, free functions and kernels (the scheduler
    class rather than its ``Size()`` accessor), and a class used through many methods ranks by
    all of that use.
    """
    edges = list(edges)
    degree: collections.Counter[str] = collections.Counter(
        e.target for e in edges if e.kind in DEPENDENCY_EDGES and e.source != e.target)
    owner = {e.target: e.source for e in edges if e.kind is EdgeKind.CONTAINS
             and nodes.get(e.target) is not None and nodes[e.target].kind is NodeKind.METHOD
             and nodes.get(e.source) is not None and nodes[e.source].kind in (NodeKind.CLASS, NodeKind.STRUCT)}
    for method, cls in owner.items():
        degree[cls] += degree.get(method, 0)
    by_path: dict[str, list[KeySymbol]] = collections.defaultdict(list)
    for node_id, node in sorted(nodes.items()):
        if node.kind not in KEY_SYMBOL_KINDS or node.kind is NodeKind.METHOD and node_id in owner:
            continue
        if not node.path or node.name.startswith("_") or degree.get(node_id, 0) <= 0:
            continue
        by_path[node.path].append(KeySymbol(node.path, node.line, node_id, node.name, node.kind.value,
                                            degree[node_id]))
    return by_path


def build_layers(taxonomy: Taxonomy, assignments: list[ModuleRole], ranked: Mapping[str, list[KeySymbol]],
                 concepts_by_file: Mapping[str, Mapping[str, Any]]) -> list[Layer]:
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
        concept_counts = collections.Counter(c for m in modules for c in concepts_by_file.get(m.path, {}))
        concepts = tuple(sorted(concept_counts, key=lambda c: (-concept_counts[c], c)))
        lines = sum(m.lines for m in modules)
        evidence = strongest_rows(modules)
        layers.append(Layer(
            role=role.id, title=role.title, apart=role.apart, lines=lines, concepts=concepts,
            summary=summarize(role, modules, lines, symbols, concepts, evidence),
            key_symbols=tuple(symbols), modules=tuple(modules), evidence=evidence))
    return layers


def strongest_rows(modules: list[ModuleRole]) -> tuple[RoleEvidence, ...]:
    """The deciding row of each module (its heaviest), heaviest modules first, capped and sorted."""
    tops = [m.evidence[0] for m in sorted(modules, key=lambda m: (-m.score, m.path)) if m.evidence]
    return tuple(sorted(tops[:EVIDENCE_PER_LAYER]))


def summarize(role: Role, modules: list[ModuleRole], lines: int, symbols: list[KeySymbol],
              concepts: tuple[str, ...], evidence: tuple[RoleEvidence, ...]) -> str:
    """One line, built only from what was found."""
    parts = [f"{len(modules)} module{'s' if len(modules) != 1 else ''}, {lines:,} lines"]
    if symbols:
        parts.append("key symbols " + ", ".join(s.name for s in symbols[:4]))
    if concepts:
        parts.append("concepts " + ", ".join(concepts[:4]))
    if not symbols and evidence:
        signals = collections.Counter(f"{r.signal} {r.matched}" for r in evidence)
        parts.append("decided by " + ", ".join(s for s, _n in signals.most_common(3)))
    return f"{role.title}: " + "; ".join(parts) + "."


def dependency_matrix(taxonomy: Taxonomy, nodes: Mapping[str, Node], edges: Iterable[Edge],
                      role_of: Mapping[str, str]) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]]]:
    """Counts of dependency edges from each layer to each other (apart and unassigned modules left
    out), and the edges that run upward against the taxonomy's stack order."""
    apart = {r.id for r in taxonomy.roles if r.apart}
    rank = {role: i for i, level in enumerate(taxonomy.stack) for role in level}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], list[tuple[str, int]]] = collections.defaultdict(list)
    seen: set[tuple[str, str, str, int]] = set()
    for edge in edges:
        if edge.kind not in DEPENDENCY_EDGES:
            continue
        src, dst = nodes.get(edge.source), nodes.get(edge.target)
        if src is None or dst is None or not src.path or not dst.path:
            continue
        a, b = role_of.get(src.path), role_of.get(dst.path)
        if a is None or b is None or a in apart or b in apart or UNASSIGNED in (a, b):
            continue
        # One statement is one dependency: "from m import C" may be in the graph both as an edge
        # to module m and as an edge to class C.
        key = (src.path, dst.path, edge.path, edge.line)
        if edge.line and key in seen:
            continue
        seen.add(key)
        counts[(a, b)] += 1
        if a in rank and b in rank and rank[a] > rank[b]:
            examples[(a, b)].append((edge.path or src.path, edge.line))
    matrix: dict[str, dict[str, int]] = {}
    for (a, b), n in sorted(counts.items()):
        matrix.setdefault(a, {})[b] = n
    upward = [{"from": a, "to": b, "count": counts[(a, b)],
               "examples": [f"{p}:{ln}" if ln else p for p, ln in sorted(set(ex))[:UPWARD_EXAMPLES]]}
              for (a, b), ex in sorted(examples.items(), key=lambda kv: (-counts[kv[0]], kv[0]))]
    return matrix, upward


def layer_stats(taxonomy: Taxonomy, assignments: list[ModuleRole], matrix: Mapping[str, Any],
                upward: list[dict[str, Any]]) -> dict[str, Any]:
    apart = {r.id for r in taxonomy.roles if r.apart}
    counted = [a for a in assignments if a.role not in apart]
    total = sum(a.lines for a in counted)
    assigned = sum(a.lines for a in counted if a.role != UNASSIGNED)
    by_role = collections.Counter()
    for a in assignments:
        by_role[a.role] += a.lines
    return {
        "modules": len(assignments),
        "modules_apart": len(assignments) - len(counted),
        "modules_assigned": sum(1 for a in counted if a.role != UNASSIGNED),
        "lines_counted": total,
        "lines_assigned": assigned,
        "assigned_share": round(assigned / total, 4) if total else 0.0,
        "lines_by_role": dict(sorted(by_role.items())),
        "matrix": matrix,
        "upward_edges": sum(u["count"] for u in upward),
    }


STEP = Step(name="layers", extract=extract_layers, bundle_key="layers", version="1")
