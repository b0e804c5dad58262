"""What a module looks like to the role signals: its path words, imports, names, bases and symbols."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from extractor import naming
from extractor.concepts import absolute_in, imported_modules
from extractor.concepts.facts import ConceptFacts, Seen
from extractor.concepts.records import ConceptHit
from extractor.context import SourceFile
from extractor.generated import GeneratedFile
from extractor.model import Language, Node, NodeKind


Item = tuple[Any, ...]  # (text, line), or (text, line, header path) for a companion header's include

# Kinds whose items are ordered by line first (what a module defines, in reading order); the other
# kinds by text first. A signal's row shows the first item it matches in that order.
BY_LINE = frozenset({"symbol", "method", "defines", "reexport"})


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleFacts:
    """Per signal kind, the (item, line) pairs a module offers to the role signals.

    The items are kept as found (unordered, an item may repeat): a signal reads only the few items
    it matches, and :func:`first_item` orders those; sorting every module's hundreds of names that
    no signal matches was a third of the layers step. The path's words are in path order, and the
    kinds in ``ordered`` are already in their order (first matching item first)."""

    file: SourceFile
    module: str
    items: Mapping[str, Sequence[Item]]
    # Indices into items["path"] of the segments that name the project rather than a part of it:
    # the top-level Python package ("mlserver/", "src/bentoml/"). "mlserver" says what the
    # project is, not that every module in it is a server.
    project_segments: frozenset[int] = frozenset()
    ordered: frozenset[str] = frozenset({"path"})


def first_item(mf: ModuleFacts, kind: str, positions: Sequence[int]) -> Item:
    """Of the items of ``kind`` at ``positions``, the first in the kind's order: by line for what
    the module defines, by text for the rest; for a kind in ``mf.ordered``, the first position."""
    items = mf.items[kind]
    if kind in mf.ordered:
        return items[positions[0]]
    if kind in BY_LINE:
        return min((items[i] for i in positions), key=_line_first)
    return min(items[i] for i in positions)


def _line_first(item: Item) -> tuple[Any, Any]:
    return item[1], item[0]


def module_id(file: SourceFile) -> str:
    return naming.py_id(file.module) if file.language is Language.PYTHON else naming.file_id(file.path)


def path_segments(rel: str) -> tuple[tuple[str, int], ...]:
    parts = rel.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return tuple((p.lower(), 0) for p in [*parts[:-1], stem] if p)


def top_packages(files: Iterable[SourceFile]) -> dict[str, int]:
    """For each Python file inside a package, the index of its top-level package's segment: the
    outermost directory on its path that holds an ``__init__.py`` ("src/bentoml/x.py" -> 1)."""
    files = list(files)
    packages = {(f.source, f.rel.rsplit("/", 1)[0]) for f in files
                if f.language is Language.PYTHON and f.rel.endswith("/__init__.py")}
    tops = {}
    for f in files:
        if f.language is not Language.PYTHON:
            continue
        parts = f.rel.split("/")[:-1]
        top = next((i for i in range(len(parts)) if (f.source, "/".join(parts[: i + 1])) in packages), None)
        if top is not None:
            tops[f.path] = top
    return tops


C_API_MIN_FUNCTIONS = 3  # one or two extern "C" prototypes are a callback or a hook, not an API

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh")


def companion_headers(files: Iterable[SourceFile]) -> dict[str, SourceFile]:
    """For each C/C++/CUDA source file, the header beside it with the same stem (``x.cc`` and
    ``x.h``): together they are one module, and what the header includes is the source's interface."""
    files = [f for f in files if f.language in (Language.CPP, Language.CUDA)]
    headers = {(f.source, f.rel.rsplit(".", 1)[0]): f for f in files if f.rel.endswith(HEADER_SUFFIXES)}
    return {f.path: headers[key] for f in files if not f.rel.endswith(HEADER_SUFFIXES)
            if (key := (f.source, f.rel.rsplit(".", 1)[0])) in headers}


NO_FACTS = ConceptFacts()  # a file the concepts scanner could not read


def collect_module_facts(file: SourceFile, facts: ConceptFacts | None, concepts: Mapping[str, ConceptHit],
                         graph_symbols: Iterable[Node], graph_bases: Iterable[tuple[str, int]],
                         module: str, generated: GeneratedFile | None = None,
                         project_segments: frozenset[int] = frozenset(),
                         header: SourceFile | None = None) -> ModuleFacts:
    is_python = file.language is Language.PYTHON
    facts = facts if facts is not None else NO_FACTS
    graph_symbols = tuple(graph_symbols)
    imports: list[Item] = []
    imported_names: list[Item] = []
    if file.language is not Language.CPP and file.language is not Language.CUDA:  # C++ has includes
        for mod, name, line in imported_modules(file, facts):
            imports.append((mod, line))
            if name and name != "*":
                imports.append((f"{mod}.{name}", line))
                if not name.startswith("_"):
                    imported_names.append((name, line))
    absolute = absolute_in(file)
    defs = facts.defs
    symbols: list[Item] = []
    bases: list[Item] = []
    kinds: list[Item] = []
    classes: set[str] = set()
    for d in defs:  # one pass: C++ headers define thousands
        qualname, line = d.qualname, d.line
        # Symbol signals look at classes and top-level functions: a method called "schedule" does
        # not make its module a scheduler.
        if not is_python or "." not in qualname or d.kind == "class":
            symbols.append((_short_name(qualname), line))
        if d.bases:
            bases += [((absolute(b) if is_python else b), line) for b in d.bases]
        kinds.append((d.kind, line))
        if d.kind == "class" or d.kind == "struct":
            classes.add(qualname)
    symbols += [(n.name, n.line) for n in graph_symbols if n.kind in GRAPH_SYMBOL_KINDS]
    bases += graph_bases
    # A kernel the graph step found where the scanner saw a function ("template <...> __global__"
    # in a header parsed as C++)
    kinds += [("kernel", n.line) for n in graph_symbols if n.kind is NodeKind.KERNEL]
    # A header that declares a C API (extern "C" prototypes) for other programs to link against
    c_api = facts.c_api
    if sum(n for _line, n in c_api) >= C_API_MIN_FUNCTIONS:
        kinds.append(("c-api", c_api[0][0]))
    # Methods: functions defined inside a class the module defines ("forward" of an nn.Module).
    methods = [(_short_name(d.qualname), d.line) for d in defs
               if d.kind == "function" and _owner(d.qualname) in classes] if classes else []
    items: dict[str, Sequence[Item]] = {
        "path": path_segments(file.rel),
        "import": imports,
        # (header's includes carry the header's path: an evidence row must open where it was seen)
        "include": facts.includes + tuple((h, line, header.path) for h, line in _includes(header))
        if header is not None else facts.includes,
        "name": _absolute_names(facts.names, absolute) if is_python else facts.names,
        "call": _absolute_names(facts.invokes, absolute),
        "base": bases,
        "symbol": symbols,
        "method": methods,
        "defines": kinds,
        "concept": [(cid, hit.line) for cid, hit in concepts.items()],
        "language": ((file.language.value, 0),),
        "generator": ((generated.name, generated.line),) if generated is not None else (),
        # A facade ("types/__init__.py", "io.py") defines nothing and imports public names: what it
        # re-exports is its interface. Scoring reads these only for a module no role reaches.
        "reexport": imported_names if is_python and not defs else (),
    }
    return ModuleFacts(file, module, items, project_segments)


# a tuple: an enum's hash is a Python call, a tuple's `in` asks identity first
GRAPH_SYMBOL_KINDS = (NodeKind.CLASS, NodeKind.STRUCT, NodeKind.FUNCTION, NodeKind.KERNEL)
_SEPARATOR = re.compile(r"\.|::")


def _short_name(qualname: str) -> str:
    """``A.forward`` -> ``forward``; ``ns::C::m`` -> ``m``."""
    return _SEPARATOR.split(qualname)[-1] if "." in qualname or ":" in qualname else qualname


def _absolute_names(names: tuple[Seen, ...], absolute: Callable[[str], str]) -> Sequence[Seen]:
    """Python names with the relative ones (".x.y", rare) made absolute; the facts themselves
    when there are none."""
    if not any(name[:1] == "." for name, _line in names):
        return names
    return [(absolute(name), line) for name, line in names]


def _includes(header: SourceFile | None) -> tuple[tuple[str, int], ...]:
    """The includes of a companion header, as its concepts scanner recorded them."""
    facts: ConceptFacts | None = header.facts.get("concepts") if header is not None else None
    return facts.includes if facts is not None else ()


def _owner(qualname: str) -> str:
    """``A.forward`` -> ``A``; ``ns::C::m`` -> ``ns::C``; a top-level name has no owner."""
    for separator in (".", "::"):
        if separator in qualname:
            return qualname.rsplit(separator, 1)[0]
    return ""
