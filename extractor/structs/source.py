"""Which aggregates a header defines: from the C/C++ graph's own definition records.

The struct step lays out exactly what the symbol graph has: the same per-file scan
(extractor.cpp.scan, ERROR-region rescans included), the same second pass for macros defined in
includes, the same names (an anonymous namespace is ``(anonymous namespace)``, as DWARF says).
Class templates, their members and specialisations have no layout until instantiated; aggregates
defined inside a function body are laid out only where that function is compiled.
"""

from __future__ import annotations

import dataclasses

from extractor.cpp.scan import scan_source
from extractor.model import Language

_AGGREGATE_KINDS = ("struct", "class", "union")


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class StructDefinition:
    line: int
    qualname: str
    kind: str


def find_struct_definitions(data: bytes, language: Language) -> tuple[StructDefinition, ...]:
    """Aggregate definitions (not templates, not local to a function) of one file, for callers
    that have no graph at hand (a single header)."""
    facts = scan_source(data, language)
    found = set()
    for d in facts.defs:
        tags = d.tags
        if d.kind in _AGGREGATE_KINDS and "template" not in tags and "specialization" not in tags \
                and not any(k == "function" for _, k in d.scope):
            found.add(StructDefinition(d.line, d.qual, d.kind))
    return tuple(sorted(found))
