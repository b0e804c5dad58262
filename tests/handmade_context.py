"""Build an extraction Context by hand, standing in for the pipeline and graph steps in tests.

Parses files with the stdlib ``ast`` and ``extractor.cpp.parse``, runs the concepts and generated-code
scanners and the generated-code step, and adds module/file nodes with ``imports``/``includes`` edges
the way the graph steps name them (``py:<module>``, ``file:<path>``)."""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
from pathlib import Path

from extractor.concepts import STEP as CONCEPTS_STEP
from extractor import naming
from extractor.concepts import imported_modules
from extractor.layers.facts import NO_FACTS
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.cpp.parse import parse_source
from extractor.generated import STEP as GENERATED_STEP
from extractor.model import Contribution, Edge, EdgeKind, Language, Node, NodeKind, ParsedFile

SUFFIXES = {".py": Language.PYTHON, ".c": Language.CPP, ".cc": Language.CPP, ".cpp": Language.CPP,
            ".cxx": Language.CPP, ".h": Language.CPP, ".hh": Language.CPP, ".hpp": Language.CPP,
            ".hxx": Language.CPP, ".inl": Language.CPP, ".cu": Language.CUDA, ".cuh": Language.CUDA}


def parse(data: bytes, language: Language):
    if language is Language.PYTHON:
        try:
            return ast.parse(data)
        except (SyntaxError, ValueError):
            return None
    return parse_source(data, language)


def build_context(sources: dict[str, Path], *, subdirs: tuple[str, ...] = (), options: dict | None = None,
                  with_graph: bool = True) -> Context:
    """``sources`` maps a label ("" for a single source) to a root directory. ``subdirs`` limits the
    walk to those top-level directories of each root."""
    trees, files = [], []
    for label, root in sorted(sources.items()):
        root = Path(root)
        trees.append(SourceTree(label=label, spec=str(root), kind="dir", root=root))
        tops = [root / s for s in subdirs] if subdirs else [root]
        for top in tops:
            for path in sorted(top.rglob("*")):
                language = SUFFIXES.get(path.suffix)
                if language is None or not path.is_file():
                    continue
                data = path.read_bytes()
                rel = path.relative_to(root).as_posix()
                facts = {}
                tree = parse(data, language)
                for step in (CONCEPTS_STEP, GENERATED_STEP):
                    scanner = step.scanners.get(language)
                    value = scanner(ParsedFile(language, data, tree)) if scanner and tree is not None else None
                    if value is not None:
                        facts[step.name] = value
                files.append(SourceFile(
                    path=f"{label}/{rel}" if label else rel, rel=rel, source=label, language=language,
                    sha256=hashlib.sha256(data).hexdigest(), size=len(data), facts=facts,
                    lines=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)))
    files = sorted(naming.with_module_names(files), key=lambda f: f.path)
    ctx = Context(name="test", version="0", sources=tuple(trees), files=tuple(files),
                  options=ExtractOptions(extra=options or {}))
    ctx.results[GENERATED_STEP.name] = GENERATED_STEP.extract(ctx)
    if with_graph:
        ctx.results.update(module_graph(files))
    return ctx


def module_graph(files: list[SourceFile]) -> dict[str, Contribution]:
    """Module/file nodes and import/include edges, as the python and cpp steps will provide them."""
    py_nodes, py_edges, cpp_nodes, cpp_edges = [], [], [], []
    modules = {}
    for f in files:
        if f.language is Language.PYTHON:
            name = f.module
            modules[name] = f"py:{name}"
            py_nodes.append(Node(f"py:{name}", NodeKind.MODULE, name.rsplit(".", 1)[-1], name, "python", f.path, 0))
        else:
            cpp_nodes.append(Node(f"file:{f.path}", NodeKind.FILE, f.rel.rsplit("/", 1)[-1], f.path, "cpp", f.path, 0))
    by_suffix = {f.rel: f.path for f in files if f.language is not Language.PYTHON}
    for f in files:
        facts = f.facts.get("concepts") or NO_FACTS
        if f.language is Language.PYTHON:
            src = naming.py_id(f.module)
            for module, name, line in imported_modules(f, facts):
                for target in (f"{module}.{name}", module):
                    if target in modules and modules[target] != src:
                        py_edges.append(Edge(src, modules[target], EdgeKind.IMPORTS, f.path, line))
                        break
        else:
            for header, line in facts.includes:
                hits = [p for rel, p in by_suffix.items() if rel == header or rel.endswith("/" + header)]
                if len(hits) == 1:
                    cpp_edges.append(Edge(f"file:{f.path}", f"file:{hits[0]}", EdgeKind.INCLUDES, f.path, line))
    return {"python": Contribution(nodes=tuple(sorted(py_nodes)), edges=tuple(sorted(set(py_edges)))),
            "cpp": Contribution(nodes=tuple(sorted(cpp_nodes)), edges=tuple(sorted(set(cpp_edges))))}


@functools.cache
def build_real_context(root: str) -> Context:
    """One Context per real tree per test session, with the real Python and C++ graphs (layers take
    their key symbols from them): every file scanned by the pipeline's own scanners."""
    from extractor import cpp
    from extractor.python import graph as pysymbols
    from extractor.run.facts import FileFacts, decode_result, fact_decoders
    from extractor.run.scan import _init_worker, scan_file

    steps = (pysymbols.STEP, cpp.STEP, CONCEPTS_STEP, GENERATED_STEP)
    _init_worker(steps)
    ctx = build_context({"": Path(root)}, with_graph=False)
    files = []
    for f in ctx.files:
        data = (Path(root) / f.rel).read_bytes()
        result = decode_result(scan_file(f.language.value, data))
        facts = FileFacts(result.facts, fact_decoders(steps).get(f.language, {}))
        files.append(dataclasses.replace(f, facts=facts))
    ctx = Context(name=ctx.name, version=ctx.version, sources=ctx.sources, files=tuple(files), options=ctx.options)
    for step in (*steps[:2], GENERATED_STEP):
        ctx.results[step.name] = step.extract(ctx)
    return ctx
