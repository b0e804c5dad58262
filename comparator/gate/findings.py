"""The rows a CI gate decides on, read from a release comparison's findings (``report.json``).

Each kind reports its release changes in its own records; the gate needs one shape for all of
them: the rule that fired, the symbol it concerns (a Python path, a C++ type, a metric name), where
it is (the new location, else the old one: the place a reviewer looks), and whether the kind
judged it breaking. The rows are read back as the kinds' own records (:func:`comparator.codec.from_json`).
Only rows the kinds judge breaking become gate findings; additions are counted
apart, for the version verdict.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from comparator.apidiff.proto import LANGUAGE as PROTO_LANGUAGE
from comparator.codec import from_json
from comparator.kinds.api.records import ApiRelease
from comparator.kinds.structs.records import StructsRelease
from comparator.kinds.symbols.records import SymbolsRelease
from comparator.kinds.telemetry.records import TelemetryRelease


class Family(str, enum.Enum):
    """Which part of a project's promise a rule guards; the policy scopes each family apart."""

    API = "api"
    PROTO = "proto"  # a .proto's wire format: a promise to every client, whatever Python packages the project names
    STRUCTS = "structs"
    METRICS = "metrics"
    THRESHOLDS = "thresholds"


class Status(str, enum.Enum):
    FAILING = "failing"
    WARNING = "warning"  # the policy lists the rule under ``warn``
    ACCEPTED = "accepted"  # an entry of the accepted-changes file matches it
    IGNORED = "ignored"  # outside the public API the policy declares, or a rule it ignores


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Finding:
    """One breaking change between the release and the tree, as the gate reports it."""

    path: str  # file relative to the repository root ("" when the evidence has no place)
    line: int
    rule: str  # "parameter-removed", "struct-layout-changed", "metric-renamed", "threshold-orphaned", ...
    symbol: str  # "servekit.core.build", "KVHeader", "servekit_requests_total"
    subject: str  # the parameter, member or series concerned; "" for the symbol itself
    family: Family
    message: str
    status: Status = Status.FAILING
    reason: str = ""  # why it is accepted, warned or ignored

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the change across runs (no line: an edit above it must not make it new)."""
        return (self.rule, self.symbol, self.subject)


@dataclasses.dataclass(frozen=True, slots=True)
class Additions:
    """What the tree adds (no break): symbols by their dotted path, metrics and struct types by name."""

    symbols: tuple[str, ...]
    metrics: tuple[str, ...]
    structs: tuple[str, ...]


R = TypeVar("R")


def _part(report: Mapping[str, Any], record: type[R]) -> R | None:
    """A kind's part of ``findings["release"]`` as its record; None when the comparison is not a
    release comparison or the kind reported no release part."""
    if "release" not in report:
        return None
    keys = [f.name.removesuffix("_") for f in dataclasses.fields(record)]  # type: ignore[arg-type]
    release = report["release"]
    if not all(k in release for k in keys):
        return None
    return from_json(record, {k: release[k] for k in keys}, "release")


def release_findings(report: Mapping[str, Any]) -> tuple[Finding, ...]:
    """Every breaking row of a release comparison's findings (``report.json``), sorted by place then rule."""
    rows: set[Finding] = set()
    if (api := _part(report, ApiRelease)) is not None:
        rows.update(_api(api))
    if (structs := _part(report, StructsRelease)) is not None:
        rows.update(_structs(structs))
    if (telemetry := _part(report, TelemetryRelease)) is not None:
        rows.update(_metrics(telemetry))
        rows.update(_thresholds(telemetry))
    return tuple(sorted(rows))


def release_additions(report: Mapping[str, Any]) -> Additions:
    symbols, structs, telemetry = (_part(report, SymbolsRelease), _part(report, StructsRelease),
                                   _part(report, TelemetryRelease))
    added: set[str] = set()
    if symbols is not None:
        added.update(_dotted(row.id) for row in symbols.symbols.added)
        added.update(f"{_dotted(row.id)}.{name}" for row in symbols.symbols.attributes for name in row.added)
    return Additions(
        tuple(sorted(added)),
        tuple(sorted(m.name for m in telemetry.metrics.added)) if telemetry is not None else (),
        tuple(sorted(s.qualname for s in structs.structs.added)) if structs is not None else (),
    )


def _dotted(node_id: str) -> str:
    """``py:pkg.mod.f`` -> ``pkg.mod.f``; ``cpp:ns::T`` -> ``ns::T``."""
    return node_id.partition(":")[2] if ":" in node_id.split("::", 1)[0] else node_id


def _api(release: ApiRelease) -> Iterator[Finding]:
    for row in release.api.changes:
        if not row.breaking:
            continue
        change = " -> ".join(v for v in (row.old, row.new) if v)
        subject = f"({row.subject})" if row.subject else ""
        yield Finding(row.path, row.line, row.rule.value, row.symbol, row.subject,
                      Family.PROTO if row.language == PROTO_LANGUAGE else Family.API,
                      f"{row.symbol}{subject}: {row.title}" + (f": {change}" if change else "") + f" ({row.why})")


def _structs(release: StructsRelease) -> Iterator[Finding]:
    for change in release.structs.changed:
        if change.breaking:
            yield Finding(change.path, change.line, "struct-layout-changed", change.qualname, "", Family.STRUCTS,
                          f"{change.qualname}: layout changed, {change.old.size} -> {change.new.size} bytes "
                          f"({'; '.join(change.changes)})")
    for gone in release.structs.removed:
        if gone.breaking:
            yield Finding(gone.path, gone.line, "struct-removed", gone.qualname, "", Family.STRUCTS,
                          f"{gone.qualname}: struct removed ({gone.size} bytes)")


def _metrics(release: TelemetryRelease) -> Iterator[Finding]:
    metrics = release.metrics
    for gone in metrics.removed:
        if gone.breaking:
            yield Finding(gone.path, gone.line, "metric-removed", gone.name, "", Family.METRICS,
                          f"metric {gone.name} ({gone.type}) removed: dashboards and alerts reading it go blank")
    for renamed in metrics.renamed:
        if renamed.breaking:
            old, new = renamed.from_, renamed.to
            yield Finding(new.path, new.line, "metric-renamed", old.name, new.name, Family.METRICS,
                          f"metric {old.name} renamed to {new.name}: readers of the old name go blank")
    for retyped in metrics.retyped:
        if retyped.breaking:
            yield Finding(retyped.path, retyped.line, "metric-retyped", retyped.name, "", Family.METRICS,
                          f"metric {retyped.name} retyped: {retyped.old_type} -> {retyped.new_type}")


def _thresholds(release: TelemetryRelease) -> Iterator[Finding]:
    for orphan in release.orphaned_thresholds:
        if orphan.breaking:
            renamed = ", ".join(f"{k} -> {v}" for k, v in sorted(orphan.renamed_to.items()))
            yield Finding(orphan.path, orphan.line, "threshold-orphaned", orphan.name, ",".join(orphan.missing),
                          Family.THRESHOLDS,
                          f"threshold {orphan.name} reads {', '.join(orphan.missing)}, which the tree no longer "
                          "exposes" + (f" (renamed: {renamed})" if renamed else ""))
    for rule, rows in (("threshold-removed", release.thresholds.removed),
                       ("threshold-changed", release.thresholds.changed)):
        for row in rows:
            if row.breaking:
                yield Finding(row.path, row.line, rule, row.name, "", Family.THRESHOLDS,
                              f"threshold {row.name}: {rule.removeprefix('threshold-')}")
