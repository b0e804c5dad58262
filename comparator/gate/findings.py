"""The rows a CI gate decides on, read from a release comparison's findings (``report.json``).

Each kind reports its release changes in its own records; the gate needs one shape for all of
them: the rule that fired, the symbol it concerns (a Python path, a C++ type, a metric name), where
it is (the new location, else the old one: the place a reviewer looks), and whether the kind
judged it breaking. Only rows the kinds judge breaking become gate findings; additions are counted
apart, for the version verdict.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping
from typing import Any


class Family(str, enum.Enum):
    """Which part of a project's promise a rule guards; the policy scopes each family apart."""

    API = "api"
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


def release_findings(report: Mapping[str, Any]) -> tuple[Finding, ...]:
    """Every breaking row of a release comparison's findings, sorted by place then rule."""
    release = report.get("release")
    if release is None:
        return ()
    return tuple(sorted({*_api(release), *_structs(release), *_metrics(release), *_thresholds(release)}))


def release_additions(report: Mapping[str, Any]) -> Additions:
    release = report.get("release", {})
    symbols = release.get("symbols", {})
    added_attrs = [f"{_dotted(row['id'])}.{name}" for row in symbols.get("attributes", ()) for name in row["added"]]
    return Additions(
        tuple(sorted({*(_dotted(row["id"]) for row in symbols.get("added", ())), *added_attrs})),
        tuple(sorted(row["name"] for row in release.get("metrics", {}).get("added", ()))),
        tuple(sorted(row["qualname"] for row in release.get("structs", {}).get("added", ()))),
    )


def _dotted(node_id: str) -> str:
    """``py:pkg.mod.f`` -> ``pkg.mod.f``; ``cpp:ns::T`` -> ``ns::T``."""
    return node_id.split(":", 1)[1] if ":" in node_id.split("::", 1)[0] else node_id


def _api(release: Mapping[str, Any]) -> Iterator[Finding]:
    for row in release.get("api", {}).get("changes", ()):
        if not row["breaking"]:
            continue
        where = row.get("new_location") or row.get("old_location") or {"path": row["path"], "line": row["line"]}
        change = " -> ".join(v for v in (row["old"], row["new"]) if v)
        subject = f"({row['subject']})" if row["subject"] else ""
        yield Finding(where["path"], where["line"], row["rule"], row["symbol"], row["subject"], Family.API,
                      f"{row['symbol']}{subject}: {row['title']}" + (f": {change}" if change else "")
                      + f" ({row['why']})")


def _structs(release: Mapping[str, Any]) -> Iterator[Finding]:
    structs = release.get("structs", {})
    for row in structs.get("changed", ()):
        if row["breaking"]:
            old, new = row["old"], row["new"]
            yield Finding(row["path"], row["line"], "struct-layout-changed", row["qualname"], "", Family.STRUCTS,
                          f"{row['qualname']}: layout changed, {old['size']} -> {new['size']} bytes "
                          f"({'; '.join(row['changes'])})")
    for row in structs.get("removed", ()):
        if row["breaking"]:
            yield Finding(row["path"], row["line"], "struct-removed", row["qualname"], "", Family.STRUCTS,
                          f"{row['qualname']}: struct removed ({row['size']} bytes)")


def _metrics(release: Mapping[str, Any]) -> Iterator[Finding]:
    metrics = release.get("metrics", {})
    for row in metrics.get("removed", ()):
        if row["breaking"]:
            yield Finding(row["path"], row["line"], "metric-removed", row["name"], "", Family.METRICS,
                          f"metric {row['name']} ({row['type']}) removed: dashboards and alerts reading it go blank")
    for row in metrics.get("renamed", ()):
        if row["breaking"]:
            old, new = row["from"], row["to"]
            yield Finding(new["path"], new["line"], "metric-renamed", old["name"], new["name"], Family.METRICS,
                          f"metric {old['name']} renamed to {new['name']}: readers of the old name go blank")
    for row in metrics.get("retyped", ()):
        if row["breaking"]:
            yield Finding(row["path"], row["line"], "metric-retyped", row["name"], "", Family.METRICS,
                          f"metric {row['name']} retyped: {row['old_type']} -> {row['new_type']}")


def _thresholds(release: Mapping[str, Any]) -> Iterator[Finding]:
    for row in release.get("orphaned_thresholds", ()):
        if row["breaking"]:
            renamed = ", ".join(f"{k} -> {v}" for k, v in sorted(row["renamed_to"].items()))
            yield Finding(row["path"], row["line"], "threshold-orphaned", row["name"], ",".join(row["missing"]),
                          Family.THRESHOLDS,
                          f"threshold {row['name']} reads {', '.join(row['missing'])}, which the tree no longer "
                          "exposes" + (f" (renamed: {renamed})" if renamed else ""))
    for key, rule in (("removed", "threshold-removed"), ("changed", "threshold-changed")):
        for row in release.get("thresholds", {}).get(key, ()):
            if row["breaking"]:
                yield Finding(row["path"], row["line"], rule, row["name"], "", Family.THRESHOLDS,
                              f"threshold {row['name']}: {rule.removeprefix('threshold-')}")
