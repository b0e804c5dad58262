"""Concept records: a named mechanism and the places in code that show it."""

from __future__ import annotations

from extractor.model import RecordKind

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class ConceptEvidence:
    path: str
    line: int
    matched: str  # the fact as found: "heapq.heappush", "shm_open", "pin_memory=True", "BlockPool"
    via: str  # which kind of fact matched: one of MATCH_KINDS


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Concept:
    id: str
    title: str
    count: int  # all hits, before capping the evidence list
    files: int  # distinct files with a hit
    evidence: tuple[ConceptEvidence, ...]


class ConceptHit(NamedTuple):
    """The first place a concept shows in a file (what the layers step weighs as a signal)."""

    line: int
    matched: str
    via: str = ""  # which kind of fact matched: one of MATCH_KINDS


class Definition(NamedTuple):
    """A class or function as the concepts scanner records it (``defs`` in its per-file facts)."""

    qualname: str
    kind: str  # "class", "struct", "function", "kernel"
    line: int
    bases: tuple[str, ...]


def definitions(facts: Mapping[str, Any]) -> Iterator[Definition]:
    """The ``defs`` of a file's cached scanner facts (stored as JSON lists), as named tuples."""
    for qualname, kind, line, bases in facts.get("defs", ()):
        yield Definition(qualname, kind, line, tuple(bases))


CONCEPTS = RecordKind("concepts", Concept)  # the bundle's "concepts" list
