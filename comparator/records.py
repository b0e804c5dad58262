"""The records every part of the findings shares: a value per side, a place in code, the counts,
the takeaways and the head of the findings (the systems compared, and how).

Like every comparator record (each kind's ``records`` module), these are frozen, slotted
dataclasses with tuples, free of the extractor: the renderers read them, and the renderers import
nothing of the extractor. :mod:`comparator.codec` writes them as the JSON of ``report.json``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from comparator.codec import omitted_when_none

T = TypeVar("T")
SIDES = ("a", "b")  # left (older) and right (newer): the keys of every per-side value
Labels = tuple[str, str]  # the two systems' labels, as a report shows them


@dataclasses.dataclass(frozen=True, slots=True)
class Sides(Generic[T]):
    """One value per side of a comparison (``{"a": ..., "b": ...}`` in the JSON)."""

    a: T
    b: T

    def __iter__(self) -> Iterator[T]:
        yield self.a
        yield self.b

    def items(self) -> tuple[tuple[str, T], tuple[str, T]]:
        """(side, value) pairs, ``a`` first: the side names the HTML anchors and CSS classes."""
        return (("a", self.a), ("b", self.b))


@dataclasses.dataclass(frozen=True, slots=True)
class Where:
    """A place in the analysed code (``{"path", "line"}``): line 0 for a whole file."""

    path: str
    line: int


class Located(Protocol):
    """Any record that says where in the code it comes from (the extractor's records, rows of the findings)."""

    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int: ...


class Verdict(Protocol):
    """A change that says whether it breaks users (a layout change, a metric renamed, an API change)."""

    @property
    def breaking(self) -> bool: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Counts:
    """Differences a kind found, and how many of them break users (for ``--fail-on``)."""

    any: int = 0
    breaking: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.any + other.any, self.breaking + other.breaking)

    @classmethod
    def of(cls, changes: Sequence[Verdict]) -> Counts:
        """Every change a difference; the breaking ones also breaking."""
        return cls(len(changes), sum(1 for c in changes if c.breaking))


@dataclasses.dataclass(frozen=True, slots=True)
class Takeaway:
    text: str
    ref: str  # the report section (HTML anchor) whose numbers back the sentence


class Mode(str, enum.Enum):
    SYSTEMS = "systems"  # two different systems
    RELEASE = "release"  # two releases of one system


@dataclasses.dataclass(frozen=True, slots=True)
class SystemDescription:
    """One side of the comparison as the report's head shows it."""

    side: str
    name: str
    version: str
    label: str  # "name version", tagged (A)/(B) when both sides would read the same
    sources: tuple[str, ...]
    files: int
    nodes: int
    edges: int
    diagnostics: int
    # files in languages the extractor does not read, one line per language ("220 Java files not
    # read, 191 of them under frontend/"): a part of the system its evidence does not cover; the
    # key only when there are some
    not_read: tuple[str, ...] | None = omitted_when_none()


@dataclasses.dataclass(frozen=True, slots=True)
class Capped:
    """Lists the findings cut to ``limit`` rows, by path (``release.symbols.added``), with their full length."""

    limit: int
    lists: Mapping[str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Head:
    """The findings apart from the kinds' sections (which each kind reads as its own records)."""

    schema_version: int
    mode: Mode
    systems: tuple[SystemDescription, SystemDescription]
    takeaways: tuple[Takeaway, ...]
    differences: Counts
    capped: Capped | None = omitted_when_none()

    @property
    def labels(self) -> Labels:
        return (self.systems[0].label, self.systems[1].label)


@dataclasses.dataclass(frozen=True, slots=True)
class ChainLink:
    """One node of a witness chain, and the edge that led to it (``edge`` "" for the first node)."""

    node: str  # the graph node id
    qualname: str
    edge: str  # the edge kind: binds, calls, launches, uses
    path: str  # where the edge's evidence is (the node's own place for the first link)
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ReachingApi:
    """A public Python API that reaches a changed C++ entity, ``depth`` edges away."""

    id: str
    qualname: str
    depth: int
    api: str  # the extractor's reason ("public: class member", "private: underscore name")
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ApiReach:
    """The public Python API that reaches one changed struct layout or binding, through ``binds``,
    ``calls``, ``launches`` and ``uses`` edges of the release's graph: the nearest ones (by depth,
    then id, capped), how many reach it at any depth, and one witness chain from the first of
    them to the entity (or to one of its methods, or to the C++ function implementing it). When no
    public API reaches it, ``private`` names the private Python callers farthest up the chains (the
    first one's chain is the witness): the graph's chains stop there (a call through ``self`` to a
    subclass's method is not resolved, say).
    ``unresolved`` says why nothing could be followed (the graph has no node for the entity)."""

    node: str  # the entity's graph node, "" when unresolved
    apis: tuple[ReachingApi, ...]
    total: int
    witness: tuple[ChainLink, ...]
    private: tuple[ReachingApi, ...] = ()
    unresolved: str = ""


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
