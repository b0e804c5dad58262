"""``uses`` edges: a C/C++/CUDA function, method or kernel -> each struct, class or union of the
system that its parameter types or its return type name.

A struct layout sits at its header and nothing calls a type, so without this relation a changed
layout (`vllm::Signal` grew a member) could not be followed back to the Python API that ends in
the kernels taking it. The parameter types are already parsed (:mod:`extractor.cpp.signature`);
each qualified name in them, template arguments included (`std::vector<vllm::RankData*>` names
`vllm::RankData`), is looked up the way C++ would from the function's scope outwards. Only names
the system defines give an edge; the others (`torch::Tensor`, `std::vector`, a template
parameter `T`) are counted in ``stats["uses_external"]``, never guessed. A type used only in a
function's body (a local, a field of another struct, a cast) is not seen: the scanner records no
body types. One edge per definition or declaration that names the type, at that site's line.
"""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Iterator, Sequence

from extractor.cpp.symbols import AGGREGATES, CALLABLE, Def, SymbolTable
from extractor.model import EdgeKind

EdgeRow = tuple[str, str, str, str, int]  # an edge's source, target, kind's value, path, line

# a possibly `::`-qualified name; template arguments are matched on their own
_NAME = re.compile(r"(?:::\s*)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*")
_NOT_TYPES = frozenset({
    "const", "volatile", "unsigned", "signed", "struct", "class", "union", "enum", "typename", "template",
    "short", "long", "int", "char", "bool", "float", "double", "void", "auto", "__restrict__", "restrict",
    "constexpr", "static", "inline", "mutable", "decltype", "sizeof", "true", "false", "nullptr"})


def type_names(text: str) -> Iterator[str]:
    """Each name a type's text mentions, spaces around `::` removed, keywords left out, in order."""
    for match in _NAME.finditer(text):
        name = re.sub(r"\s+", "", match.group())
        if name.lstrip(":") not in _NOT_TYPES:
            yield name


@functools.lru_cache(maxsize=1 << 16)
def _type_names_of(text: str) -> tuple[str, ...]:
    """:func:`type_names` once per distinct text: torch's 92,000 callables write their parameter
    types in a few thousand ways (`const at::Tensor &`)."""
    return tuple(type_names(text))


def uses_rows(table: SymbolTable, defs: Sequence[Def]) -> tuple[list[EdgeRow], collections.Counter[str]]:
    """The ``uses`` edges of the callables among ``defs`` (definitions of ``table``), as rows
    ``(source, target, "uses", path, line)`` (the C/C++ graph resolves them in forked children,
    which send rows back), and how many names resolved."""
    rows: list[EdgeRow] = []
    stats: collections.Counter[str] = collections.Counter()
    for d in defs:
        if d.kind not in CALLABLE:
            continue
        for target in _used_types(table, d, stats):
            rows.append((d.id, target, EdgeKind.USES.value, d.path, d.record.line))
    return rows, stats


def _used_types(table: SymbolTable, d: Def, stats: collections.Counter[str]) -> list[str]:
    texts = [p.type for p in d.record.params]
    if d.record.returns:
        texts.append(d.record.returns)
    found: list[str] = []
    for text in texts:
        for name in _type_names_of(text):
            target = table.known_type(d.parent, name, d.path)
            if target and table.node_by_id[target].kind in AGGREGATES:
                stats["uses_resolved"] += 1
                if target not in found and target != d.id:
                    found.append(target)
            elif not target:
                stats["uses_external"] += 1
    return found
