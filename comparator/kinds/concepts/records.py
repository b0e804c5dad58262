"""The concepts kind's records: the mechanisms both systems show and those only one does
(``findings["concepts"]``). Free of the extractor: the renderer reads them."""

from __future__ import annotations

import dataclasses

from comparator.records import Sides


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptHit:
    match: str  # the fact as found: "heapq.heappush", "shm_open"
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptSide:
    """One system's findings of a concept (also the kind's summary of a side, by concept id)."""

    title: str
    count: int  # all hits
    files: int
    evidence: tuple[ConceptHit, ...]  # the first few


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptRow:
    id: str
    title: str
    a: ConceptSide | None
    b: ConceptSide | None


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptsSection:
    shared: tuple[ConceptRow, ...]
    only_a: tuple[ConceptRow, ...]
    only_b: tuple[ConceptRow, ...]
    empty_reason: Sides[str]
