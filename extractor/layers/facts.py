"""What a module looks like to the role signals: its path words, imports, names, bases and symbols."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from extractor import naming
from extractor.concepts import imported_modules, resolve_relative
from extractor.concepts.records import ConceptHit, definitions
from extractor.context import SourceFile
from extractor.model import Language, Node, NodeKind


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


def collect_module_facts(file: SourceFile, facts: Mapping[str, Any], concepts: Mapping[str, ConceptHit],
                         graph_symbols: Iterable[Node], graph_bases: Iterable[tuple[str, int]],
                         module: str) -> ModuleFacts:
    is_python = file.language is Language.PYTHON
    imports: list[tuple[str, int]] = []
    if file.language is not Language.CPP and file.language is not Language.CUDA:  # C++ has includes
        for mod, name, line in imported_modules(file, facts):
            imports.append((mod, line))
            if name and name != "*":
                imports.append((f"{mod}.{name}", line))
    names = [((resolve_relative(n, file) if is_python else n), line) for n, line in facts.get("names", ())]
    defs = tuple(definitions(facts))
    # Symbol signals look at classes and top-level functions: a method called "schedule" does not
    # make its module a scheduler.
    symbols = [(re.split(r"\.|::", d.qualname)[-1], d.line) for d in defs
               if not is_python or "." not in d.qualname or d.kind == "class"]
    symbols += [(n.name, n.line) for n in graph_symbols
                if n.kind in (NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.KERNEL)]
    bases = [((resolve_relative(b, file) if is_python else b), d.line) for d in defs for b in d.bases]
    bases += list(graph_bases)
    kinds = [(d.kind, d.line) for d in defs]
    items = {
        "path": path_segments(file.rel),
        "import": tuple(sorted(set(imports))),
        "include": tuple(sorted({(h, line) for h, line in facts.get("includes", ())})),
        "name": tuple(sorted(set(names))),
        "base": tuple(sorted(set(bases))),
        "symbol": tuple(sorted(set(symbols), key=lambda s: (s[1], s[0]))),
        "defines": tuple(sorted(set(kinds), key=lambda s: (s[1], s[0]))),
        "concept": tuple(sorted((cid, hit.line) for cid, hit in concepts.items())),
        "language": ((file.language.value, 0),),
    }
    return ModuleFacts(file, module, items)
