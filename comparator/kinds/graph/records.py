"""The graph kind's records: each side's graph statistics (``findings["graph"]``, a
:class:`GraphStats` per side). Free of the extractor: the renderer reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True, slots=True)
class CentralSymbol:
    id: str
    name: str
    kind: str  # the graph's node kind
    dependents: int  # distinct symbols that call, import or inherit it
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class DependencyExample:
    """The edge the layers step gives as an example of one layer depending on another."""

    path: str
    line: int
    source: str
    target: str
    kind: str


@dataclasses.dataclass(frozen=True, slots=True)
class LayerLink:
    from_: str
    to: str
    count: int
    example: DependencyExample


@dataclasses.dataclass(frozen=True, slots=True)
class MutualPair:
    """Two layers of a cycle that depend on each other directly."""

    a: str
    b: str
    a_to_b: int
    b_to_a: int


@dataclasses.dataclass(frozen=True, slots=True)
class LayerCycle:
    layers: tuple[str, ...]
    edges: tuple[LayerLink, ...]
    mutual: tuple[MutualPair, ...]  # strongest both-ways coupling first


@dataclasses.dataclass(frozen=True, slots=True)
class GraphStats:
    nodes: int
    edges: int
    density: float
    nodes_by_kind: Mapping[str, int]
    nodes_by_language: Mapping[str, int]
    edges_by_kind: Mapping[str, int]
    binds: int  # cross-language edges
    central: tuple[CentralSymbol, ...]
    layer_matrix: Mapping[str, Mapping[str, int]]  # role -> role it depends on -> edges
    layer_cycles: tuple[LayerCycle, ...]
    empty_reason: str
