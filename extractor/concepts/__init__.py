"""Concepts: named mechanisms (priority queues, shared memory, paged KV cache, ...) found in code.

The detectors are data (``detectors.yaml``); this module only matches them against the per-file facts
that :mod:`extractor.concepts.scan` records and against the names of the symbols the graph steps
found. Every hit keeps the file and line it came from.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from extractor import cpp, generated, go, naming, python, rust
from extractor.concepts.facts import ConceptFacts
from extractor.concepts.native_scan import scan_native
from extractor.concepts.records import CONCEPTS, Concept, ConceptEvidence, ConceptHit
from extractor.concepts.scan import scan_cpp, scan_python
from extractor.context import Context, ExtractOptions, SourceFile
from extractor.support.datafile import Regex, load_data_file, parsed_once
from extractor.support.regex_literals import Sieve
from extractor.errors import UserInputError
from extractor.model import Contribution, Language, NodeKind, Step

DETECTORS_FILE = Path(__file__).with_name("detectors.yaml")

MATCH_KINDS = ("names", "imports", "includes", "calls", "keywords", "attrs", "strings", "routes", "symbols")

DETECTORS_SCHEMA = {
    "version": int,
    "ignore_paths?": Regex,
    "evidence_per_concept?": int,
    "concepts": [{
        "id": str,
        "title": str,
        "description?": str,
        "match": {f"{kind}?": [Regex] for kind in MATCH_KINDS},
    }],
}

SYMBOL_KINDS = frozenset({NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.KERNEL,
                          NodeKind.ENUM, NodeKind.UNION})
# Not Language.PROTO: a .proto file declares an interface, it is no code of a layer, a mechanism or a
# generator's output; its definitions are graph nodes only (extractor.proto).
CODE_LANGUAGES = (Language.PYTHON, Language.CPP, Language.CUDA, Language.RUST, Language.GO)


@dataclasses.dataclass(frozen=True, slots=True)
class Detector:
    id: str
    title: str
    patterns: Mapping[str, re.Pattern[str]]  # match kind -> one alternation of that kind's patterns


@dataclasses.dataclass(frozen=True, slots=True)
class DetectorSet:
    detectors: tuple[Detector, ...]
    ignore_paths: re.Pattern[str] | None
    evidence_per_concept: int

    def ignored(self, path: str) -> bool:
        return bool(self.ignore_paths and self.ignore_paths.fullmatch(path))


def load_detectors(path: Path | str = DETECTORS_FILE) -> DetectorSet:
    """The detectors in ``path``; the same object again for the same content (parsed once per
    process, and possibly while the pool scans: :func:`detectors_of`)."""
    return _load_detectors(path)


def detectors_of(options: ExtractOptions) -> DetectorSet:
    """The run's detectors: the user's file, or archdiff's own. The step's ``prepare``: parsing
    them (20 ms on vLLM's run) needs nothing the scan finds, so the pipeline does it while the pool
    scans and the step finds them in the cache."""
    return load_detectors(options.extra.get("detectors") or DETECTORS_FILE)


def _parse_detectors(path: Path) -> DetectorSet:
    data = load_data_file(path, DETECTORS_SCHEMA)
    detectors = []
    seen: set[str] = set()
    for i, entry in enumerate(data["concepts"]):
        if entry["id"] in seen:
            raise UserInputError(f"{path}: concepts[{i}].id: duplicate concept id {entry['id']!r}")
        seen.add(entry["id"])
        patterns = {kind: re.compile("|".join(f"(?:{p})" for p in pats))
                    for kind, pats in sorted(entry["match"].items()) if pats}
        detectors.append(Detector(entry["id"], entry["title"], patterns))
    ignore = data.get("ignore_paths")
    return DetectorSet(tuple(detectors), re.compile(ignore) if ignore else None,
                       data.get("evidence_per_concept", 25))


_load_detectors = parsed_once(_parse_detectors)


def resolve_relative(name: str, file: SourceFile) -> str:
    """Make a ``.x.y`` name recorded by the scanner absolute for the module ``file`` is."""
    return absolute_in(file)(name)


def absolute_in(file: SourceFile) -> Callable[[str], str]:
    """:func:`resolve_relative` for the many names of one file: its package found once, and a
    name that is already absolute (most are) returned as it is."""
    package = naming.package_of(file.module, naming.is_package_file(file.rel))
    resolve = naming.resolve_dotted

    def absolute(name: str) -> str:
        return resolve(package, name) if name[:1] == "." else name
    return absolute


def mounted_routes(files: Iterable[tuple[SourceFile, ConceptFacts]]) -> dict[str, dict[tuple[str, int], str]]:
    """Path -> {(route, line): the route under its prefix} for the routes of a router another module
    mounts with a prefix (``app.include_router(chat.router, prefix="/v1")`` in the app's module, the
    router in ``chat``). A router mounted under two prefixes, or one that cannot be found, keeps its
    routes as its own file declares them."""
    files = list(files)
    by_module = {file.module: file.path for file, _facts in files if file.module}
    facts_of = {file.path: facts for file, facts in files}
    prefixes: dict[tuple[str, str], set[str]] = collections.defaultdict(set)  # (path, router) -> prefixes
    for file, facts in files:
        if not facts.mounts:
            continue
        absolute = absolute_in(file)
        for router, prefix, _line in facts.mounts:
            module, _, name = absolute(router).rpartition(".")
            target = by_module.get(module)
            if target is not None:
                prefixes[target, name].add(prefix)
    moved: dict[str, dict[tuple[str, int], str]] = collections.defaultdict(dict)
    for path, router in sorted(prefixes):
        under = prefixes[path, router]
        if len(under) != 1:
            continue
        prefix = next(iter(under)).rstrip("/")
        for name, route, line in facts_of[path].router_routes:
            if name == router:
                verb, _, route_path = route.partition(" ")
                moved[path][route, line] = f"{verb} {prefix}{route_path}"
    return moved


def imported_modules(file: SourceFile, facts: ConceptFacts) -> Iterator[tuple[str, str, int]]:
    """(module, imported name or "", line) with relative imports made absolute."""
    for imported in facts.imports:
        module, level = imported.module, imported.level
        absolute = resolve_relative("." * level + module, file) if level else module
        yield absolute, imported.name, imported.line


def file_facts(file: SourceFile, facts: ConceptFacts, kind: str) -> Iterable[tuple[str, int]]:
    """(fact text, line) of one match kind, with Python relative names resolved (the facts as
    they are when there is nothing to resolve: a loop over every fact of every file reads them)."""
    if kind == "imports":
        # "import a.b" is a use of module a.b; "from a import b" of a.b (b may be a module or a name)
        return [((f"{module}.{name}" if name and name != "*" else module), line)
                for module, name, line in imported_modules(file, facts)]
    if kind == "names" and file.language is Language.PYTHON:
        names = facts.names
        if not any(name[:1] == "." for name, _line in names):
            return names
        absolute = absolute_in(file)
        return [(absolute(n), line) for n, line in names]
    if kind == "symbols":
        return ()  # symbols come from the graph (or the defs fallback), see iter_symbols
    return facts.seen(kind)


def iter_symbols(ctx: Context, paths: Iterable[str]) -> Iterator[tuple[str, str, str, int]]:
    """(path, short name, qualified name, line) of every class/function the system defines in
    ``paths``.

    The graph steps' nodes are used for every file they cover; files they do not cover (a step not in
    this pipeline, a file it could not read) fall back to the defs this step's scanner recorded."""
    wanted = set(paths)
    covered: set[str] = set()
    for step in GRAPH_STEPS:
        result = ctx.result_if_run(step)
        if result is None:
            continue
        for node in result.nodes:
            if node.kind in SYMBOL_KINDS and node.path:
                covered.add(node.path)
                if node.path in wanted:
                    yield node.path, node.name, node.qualname, node.line
    for f in ctx.files:
        # only the facts of files no graph step covers are read (decoded): the others' stay as they came
        if f.path in covered or f.path not in wanted:
            continue
        facts = f.facts.get(STEP.name)
        if facts is None:
            continue
        for d in facts.defs:
            yield f.path, re.split(r"\.|::", d.qualname)[-1], d.qualname, d.line


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptsShared:
    """What the concepts step shares with later steps: per file, the first hit of each concept
    (the layers step reads them as signals)."""

    by_file: Mapping[str, Mapping[str, ConceptHit]]  # path -> concept id -> its first hit there


Hit = tuple[str, str, int, str, str]  # (concept id, path, line, matched text, match kind)


@dataclasses.dataclass(frozen=True, slots=True)
class FileMatches:
    """What the files' own facts match (the concepts step's first part: every kind but symbols),
    over the files the detectors do not ignore, generated ones included (the concepts step drops
    those: which files a tool wrote is known only after the Python graph)."""

    paths: tuple[str, ...]  # the files looked at, in the files' order
    hits: tuple[Hit, ...]  # sorted


def match_files(ctx: Context) -> Contribution[FileMatches]:
    """The first part of the concepts step, apart so that it can run while the Python graph is
    built: the facts' matches need no graph, and are three quarters of the step (vLLM: 0.13 of
    0.17 CPU s), which would otherwise wait for the graph steps and hold up the layers."""
    return Contribution(shared=_file_matches(ctx, detectors_of(ctx.options)))


def _file_matches(ctx: Context, detectors: DetectorSet) -> FileMatches:
    files = {f.path: (f, facts) for f, facts in ctx.facts(STEP.name, *CODE_LANGUAGES) if not detectors.ignored(f.rel)}
    mounted = mounted_routes([pair for pair in files.values() if pair[0].language is Language.PYTHON])

    def texts(kind: str) -> Iterator[tuple[str, str, int, str]]:
        for path, (file, facts) in files.items():
            moved = mounted.get(path, {}) if kind == "routes" else {}
            for value, line in file_facts(file, facts, kind):
                value = moved.get((value, line), value)
                yield path, value, line, value

    kinds = [kind for kind in MATCH_KINDS if kind != "symbols"]
    hits = {(detector.id, evidence.path, evidence.line, evidence.matched, evidence.via)
            for detector, evidence in match_detectors(detectors, kinds, texts)}
    return FileMatches(tuple(files), tuple(sorted(hits)))


def extract_concepts(ctx: Context) -> Contribution[ConceptsShared]:
    detectors = detectors_of(ctx.options)
    # Generated code (protoc stubs, OpenAPI data classes) is kept apart like tests: what a tool
    # wrote is not a mechanism the system's authors chose.
    written = generated.generated_files(ctx)
    matched = ctx.result_if_run(FILES_STEP)  # None: a pipeline without it (tests' own lists of steps)
    found = matched.shared if matched is not None else None
    if found is None:
        found = _file_matches(ctx, detectors)
    paths = [path for path in found.paths if path not in written]
    hits: dict[str, set[tuple[str, int, str, str]]] = collections.defaultdict(set)
    for concept, path, line, text, via in found.hits:
        if path not in written:
            hits[concept].add((path, line, text, via))

    def symbols(_kind: str) -> Iterator[tuple[str, str, int, str]]:
        for path, short, qualname, line in iter_symbols(ctx, paths):
            yield path, short, line, qualname  # matched by its short name, kept by its qualified one

    for detector, evidence in match_detectors(detectors, ["symbols"], symbols):
        hits[detector.id].add((evidence.path, evidence.line, evidence.matched, evidence.via))
    records = []
    by_file: dict[str, dict[str, ConceptHit]] = collections.defaultdict(dict)
    for detector in detectors.detectors:
        chosen_hits = sorted(hits.get(detector.id, ()))
        if not chosen_hits:
            continue
        for path, line, text, via in chosen_hits:
            by_file[path].setdefault(detector.id, ConceptHit(line, text, via))
        chosen = cap_evidence(chosen_hits, detectors.evidence_per_concept)
        records.append(Concept(
            id=detector.id, title=detector.title, count=len(chosen_hits), files=len({h[0] for h in chosen_hits}),
            evidence=tuple(ConceptEvidence(p, ln, m, v) for p, ln, m, v in chosen)))
    records.sort()
    stats = {
        "concepts_found": len(records),
        "concepts_known": len(detectors.detectors),
        "hits": {c.id: c.count for c in records},
        "files_scanned": len(paths),
    }
    return Contribution(records=tuple(records), stats=stats,
                        shared=ConceptsShared({p: dict(sorted(v.items())) for p, v in sorted(by_file.items())}))


def match_detectors(detectors: DetectorSet, kinds: Iterable[str],
                    texts: Callable[[str], Iterable[tuple[str, str, int, str]]]) -> Iterator[tuple[Detector, ConceptEvidence]]:
    """(detector, evidence) for every text of ``kinds`` that a detector's patterns match; ``texts(kind)``
    gives (path, text matched, line, text kept as the evidence)."""
    for kind in kinds:
        # A kind's patterns sieved together (most texts match nothing), and each text matched
        # once: the same texts recur in file after file ("torch.Tensor", "forward").
        patterns = [(i, d.patterns[kind]) for i, d in enumerate(detectors.detectors) if kind in d.patterns]
        if not patterns:
            continue
        sieve = Sieve.of(patterns)
        memo: dict[str, tuple[Detector, ...]] = {}
        for path, value, line, kept in texts(kind):
            found = memo.get(value)
            if found is None:
                found = memo[value] = tuple(detectors.detectors[i] for i in sieve.matching(value))
            for detector in found:
                yield detector, ConceptEvidence(path, line, kept, kind)


def cap_evidence(found: Iterable[tuple[str, int, str, str]], cap: int) -> list[tuple[str, int, str, str]]:
    """At most ``cap`` hits, spread over files (one per file first, then a second, ...) so that one
    file with fifty hits does not hide the other places the mechanism appears; sorted."""
    per_file: dict[str, list[tuple[str, int, str, str]]] = collections.defaultdict(list)
    for hit in sorted(found):
        per_file[hit[0]].append(hit)
    chosen: list[tuple[str, int, str, str]] = []
    depth = 0
    while len(chosen) < cap:
        layer = [hits[depth] for _path, hits in sorted(per_file.items()) if len(hits) > depth]
        if not layer:
            break
        chosen.extend(layer[: cap - len(chosen)])
        depth += 1
    return sorted(chosen)


# The graph steps, when they run, name the symbols; the scanner's defs cover the files they do not.
# The generated-code step says which files a tool wrote: their facts are no evidence.
GRAPH_STEPS: tuple[Step[Any], ...] = (python.STEP, cpp.STEP, rust.STEP, go.STEP)
# The facts' matches, forked as the steps begin (they require nothing), beside the Python graph.
FILES_STEP = Step(name="concept-matches", extract=match_files, version="1", forkable=True)
# version 6: C/C++ trees parsed with a directive's comments on its continued lines blanked; 7: and with a
# namespace block opened and closed in conditional groups of one condition joined; 8: and with a file's
# function-like attribute macros blanked; 9: and with declaration wrappers unwrapped; 10: HTTP routes (routes);
# 11: a C/C++ file that launches kernels read with the CUDA grammar; 12: paged-kv-cache not by any BlockManager;
# 13: Python routes under the prefix their router is made or mounted with (scan._router_prefixes; another
# module's mounts: ConceptFacts.mounts, router_routes, mounted_routes); continuous-batching from SGLang's and
# TGI's per-iteration budgets; 14 (a branch's 12 beside them): C/C++ trees parsed with a conditional group that
# continues an if-else chain joined, and with the second of two branches that open the same blocks blanked;
# 15: a router's prefix not written as a path read through a module constant, else kept in braces; 16: routes a
# decorator declares by keyword (`@webmethod(route="/x", method="GET")`, `@app.get(path="/x")`); 17: Metal files
# and headers read as C++, their qualifiers blanked (parse.blank_metal_qualifiers); 18: route objects an application
# lists (Starlette's Route/WebSocketRoute, FastAPI's APIRoute); 19 (a branch's 15-16 beside 15-18): C/C++ routes
# registered with a literal method and path (scan._cpp_route), C/C++ trees parsed with the second of two branches
# that open the same parentheses blanked too; 20 (another branch's 15-16 beside 15-19): Rust routers' routes
# (`.route("/x", get(h))`, native_scan._rust_route), C/C++ routers' `svr.Post("/x", h)` (scan._cpp_route);
# 21: tree-sitter captures in document order (native.grammar.in_document_order)
STEP = Step(name="concepts", extract=extract_concepts, records=CONCEPTS, version="21", prepare=detectors_of,
            scanners={Language.PYTHON: scan_python, Language.CPP: scan_cpp, Language.CUDA: scan_cpp,
                      Language.RUST: scan_native, Language.GO: scan_native},
            requires=(*GRAPH_STEPS, generated.STEP, FILES_STEP), forkable=True)
