"""Layer records: the role of each module, the rows that decided it, and the layers they form."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterable

from extractor.concepts.records import ConceptEvidence
from extractor.model import RecordKind

UNASSIGNED = "unassigned"


class Confidence(str, enum.Enum):
    """How strongly a module holds its role."""

    CORROBORATED = "corroborated"  # a signal of a kind the role counts as agreement fired beside any path word
    PATH_ONLY = "path-only"  # path words alone: the role allows it, a reader should not lean on it
    PACKAGE = "package"  # nothing of its own beyond path words: the role its package's corroborated modules hold
    NONE = "none"  # unassigned


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
    confidence: Confidence = Confidence.NONE
    # Why the heaviest role was not taken, when it was not: it rested on path words alone where the
    # role needs more, or evidence ruled it out ("" when the heaviest role was taken).
    why: str = ""
    ruled_out: tuple[RoleEvidence, ...] = ()  # rows (weight 0) that took a role out of the running


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
class LayerConcept:
    """A concept as one layer carries it: found in these of its modules, at these places."""

    id: str
    modules: int  # the layer's modules in which a detector fired
    evidence: tuple[ConceptEvidence, ...]  # the first hit in each such module, capped


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
    # How strongly the layer's modules hold it: lines of modules whose role is corroborated by more
    # than path words, their share of the layer's lines, and whether that share is too small for a
    # reader (or a takeaway) to lean on the row.
    corroborated_lines: int = 0
    corroborated_share: float = 0.0
    weak: bool = False
    concept_evidence: tuple[LayerConcept, ...] = ()  # `concepts`, each with the rows that found it


ONE_WORD_SIGNALS = ("path", "symbol")


def one_word(rows: Iterable[RoleEvidence]) -> tuple[RoleEvidence, ...]:
    """The rows a role rests on when they say one word: one path word, one symbol, or a symbol that
    repeats the file's name (stats.h defining ``Stats``, scheduler_sm70.cuh ``SchedulerSm70``);
    () when the role rests on more. Such a role is weak: one word names many things."""
    weighing = tuple(r for r in rows if r.weight > 0)
    if not weighing or any(r.signal not in ONE_WORD_SIGNALS for r in weighing):
        return ()
    return weighing if len({_word(r.matched) for r in weighing}) == 1 else ()


def describe_one_word(rows: tuple[RoleEvidence, ...]) -> str:
    """``one path word (stats)``, ``one symbol (ScheduleMetrics, line 698)``, ``one word (path stats,
    symbol Stats)``."""
    if len(rows) == 1:
        row = rows[0]
        kind = "path word" if row.signal == "path" else "symbol"
        return f"one {kind} ({row.matched}" + (f", line {row.line})" if row.line else ")")
    return "one word (" + ", ".join(f"{r.signal} {r.matched}" for r in rows) + ")"


def _word(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def role_by_path(layers: tuple[Layer, ...] | list[Layer]) -> dict[str, str]:
    """File path -> role, from the layers' module lists."""
    return {m.path: m.role or layer.role for layer in layers for m in layer.modules if m.path}


def apart_roles(layers: tuple[Layer, ...] | list[Layer]) -> set[str]:
    """Roles the taxonomy sets apart (tests, examples, benchmarks, build scripts)."""
    return {layer.role for layer in layers if layer.apart}


LAYERS = RecordKind("layers", Layer)  # the bundle's "layers" list
