"""The API kind's records: each side's public API in numbers (``findings["api"]``, an
:class:`ApiSummary` per side) and a release's typed API changes (``findings["release"]["api"]``).
Free of the extractor: the renderer reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from comparator.apidiff.rules import BreakageKind
from comparator.codec import omitted_when_none
from comparator.records import ApiReach, Where


@dataclasses.dataclass(frozen=True, slots=True)
class ApiSummary:
    symbols: int  # symbols that could be API (placeholders, files and namespaces left out)
    with_reason: int  # of those, the ones whose ``api`` field says why they are public or not
    public: int
    public_by_language: Mapping[str, Mapping[str, int]]  # language -> node kind -> public symbols
    reasons: Mapping[str, int]  # reason (its symbol- or package-naming tail grouped) -> symbols
    empty_reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class ApiChange:
    """One change of a symbol the old release had (``comparator.apidiff.Breakage`` as a row)."""

    symbol: str  # as callers spell it
    rule: BreakageKind
    title: str
    subject: str  # the parameter, base or overload concerned; "" for the symbol itself
    old: str
    new: str
    breaking: bool
    why: str
    uses: int  # places in the old release that use the symbol
    id: str
    old_id: str
    language: str
    old_location: Where | None
    new_location: Where | None
    path: str  # the new location, else the old one
    line: int
    # for a changed binding (a torch operator, a binds target): the public Python API that reaches it
    reached_by: ApiReach | None = omitted_when_none()


@dataclasses.dataclass(frozen=True, slots=True)
class RuleCount:
    rule: BreakageKind
    title: str
    changes: int
    breaking: int


@dataclasses.dataclass(frozen=True, slots=True)
class ApiChanges:
    total: int
    breaking: int
    broken_symbols: int
    by_rule: tuple[RuleCount, ...]  # the rules that break most first
    changes: tuple[ApiChange, ...]  # breaking first, most used first


@dataclasses.dataclass(frozen=True, slots=True)
class ApiRelease:
    api: ApiChanges
