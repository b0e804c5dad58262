"""Layer records: the role of each module, the rows that decided it, and the layers they form."""

from __future__ import annotations

import dataclasses

UNASSIGNED = "unassigned"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class RoleEvidence:
    """One signal that fired for a module: where, what matched, and what it was worth."""

    path: str
    line: int  # 0 for whole-file signals (path words, language)
    role: str
    signal: str  # one of SIGNAL_KINDS
    matched: str  # the fact that matched: "fastapi", "BlockPool", "entrypoints"
    weight: float


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class ModuleRole:
    path: str
    line: int  # always 0: a whole module
    module: str  # graph node id ("py:pkg.mod", "file:core/src/x.cc")
    role: str  # best role, or "unassigned"
    score: float
    lines: int
    runner_up: str  # the second-best role ("" if none scored), to show how close the call was
    runner_up_score: float
    evidence: tuple[RoleEvidence, ...]  # the rows behind `role` (for "unassigned": behind the best guess)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class KeySymbol:
    path: str
    line: int
    id: str
    name: str
    kind: str
    in_degree: int  # dependency edges into the symbol (for a class, into its methods too)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class LayerDependency:
    """Dependency edges from one layer into another (``role``), counted once per statement, and the
    first of them (by path, line, source) as an example a reader can open."""

    role: str
    count: int
    path: str  # where the example edge is (its source's file when the edge has no location)
    line: int
    source: str  # the example edge's source and target node ids, and its kind
    target: str
    kind: str


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Layer:
    role: str
    title: str
    summary: str
    apart: bool  # tests/examples and vendored code: reported, but not part of the architecture
    lines: int
    concepts: tuple[str, ...]
    key_symbols: tuple[KeySymbol, ...]
    modules: tuple[ModuleRole, ...]
    evidence: tuple[RoleEvidence, ...]  # the strongest rows over the layer's modules, capped
    # Layers this one depends on (apart and unassigned layers neither depend nor are depended on).
    depends_on: tuple[LayerDependency, ...] = ()


def role_by_path(layers: tuple[Layer, ...] | list[Layer]) -> dict[str, str]:
    """File path -> role, from the layers' module lists."""
    return {m.path: m.role or layer.role for layer in layers for m in layer.modules if m.path}


def apart_roles(layers: tuple[Layer, ...] | list[Layer]) -> set[str]:
    """Roles the taxonomy sets apart (tests, examples, benchmarks, build scripts)."""
    return {layer.role for layer in layers if layer.apart}
