"""The layers kind's records: the aligned-layer table (``findings["layers"]``) and a release's
layer drift (``findings["release"]["layer_drift"]``). Free of the extractor: the renderer reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from comparator.records import Sides, Where


@dataclasses.dataclass(frozen=True, slots=True)
class KeySymbolRow:
    name: str
    id: str
    kind: str  # the graph's node kind
    in_degree: int
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ConceptHitRow:
    """One row that found a concept in the layer's modules."""

    path: str
    line: int
    matched: str
    via: str


@dataclasses.dataclass(frozen=True, slots=True)
class LayerConceptRows:
    id: str
    modules: int  # the layer's modules in which the concept's detector fired
    rows: tuple[ConceptHitRow, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TopModule:
    module: str
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class LayerSideRow:
    """One system's layer in a row of the table."""

    summary: str
    modules: int
    lines: int
    corroborated_lines: int
    corroborated_share: float  # share of the lines whose role more than path words decided
    weak: bool  # under half: no takeaway rests on it
    concepts: tuple[str, ...]
    concept_rows: tuple[LayerConceptRows, ...]  # each concept with the modules that found it
    key_symbols: tuple[KeySymbolRow, ...]
    top_modules: tuple[TopModule, ...]
    anchor: Where  # the first place a reader can open, a symbol definition if there is one


@dataclasses.dataclass(frozen=True, slots=True)
class LayerRow:
    """One role found in either system; aligned when both have it."""

    role: str
    title: str
    apart: bool  # tests, examples, vendored code: shown, not part of the architecture
    assigned: bool  # False for the row of modules no role reached (it has no share to show)
    aligned: bool
    a: LayerSideRow | None
    b: LayerSideRow | None


@dataclasses.dataclass(frozen=True, slots=True)
class LayersSection:
    rows: tuple[LayerRow, ...]
    aligned: int
    roles: Sides[int]  # architectural layers per side
    gaps: Sides[tuple[str, ...]]  # roles the other side has and this one lacks
    empty_reason: Sides[str]  # why a side has no layers ("" when it has)


@dataclasses.dataclass(frozen=True, slots=True)
class RoleChange:
    """A module present in both releases whose role changed."""

    path: str
    line: int
    from_: str
    to: str


@dataclasses.dataclass(frozen=True, slots=True)
class LayerDrift:
    changed: tuple[RoleChange, ...]
    modules_per_role: Mapping[str, Sides[int]]  # role -> modules in each release
    added_modules: int
    removed_modules: int


@dataclasses.dataclass(frozen=True, slots=True)
class LayersRelease:
    layer_drift: LayerDrift
