"""Concept records: a named mechanism and the places in code that show it."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from extractor.model import RecordKind


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


CONCEPTS = RecordKind("concepts", Concept)  # the bundle's "concepts" list
