"""The API a user calls: every change of a release's symbols, typed, and which of them break callers.

A release's rows are :func:`comparator.apidiff.find_breakages` over the two graphs, nothing more:
the rules (parameter removed, default changed, base class removed, ...) and whether a symbol is
public (its ``api`` field, recorded by the extractor) are the API diff's, not recomputed here. This
kind is the only one that decides "breaking" for symbols; the symbols kind lists drift only.

Across two systems it summarises each side's public API: public symbols by language and kind, and
how the extractor's ``api`` reasons split (``__all__``, module-level names, re-exports, ...).

A row whose symbol is a binding (a torch operator, or what a ``binds`` edge ends at: a C++
function bound with pybind11, a PyO3 or cgo target) names the public Python API that reaches it
(:mod:`comparator.impact`): in the new release, or in the old one for a binding that is gone.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Mapping

from comparator.apidiff import TITLES, Breakage, BreakageKind, find_breakages
from comparator.apidiff.surface import SKIPPED_KINDS, is_public
from comparator.impact import reaching_apis
from comparator.kind import Counts, EvidenceKind, Labels, Takeaway, plural
from comparator.kinds.api import render
from comparator.kinds.api.records import ApiChange, ApiChanges, ApiRelease, ApiSummary, RuleCount
from comparator.records import ApiReach, Sides, Where
from extractor.evidence.read import Evidence
from extractor.model import Edge, EdgeKind, Location, Node

# Reasons whose tail names a symbol or a package, grouped in the summary: (head, group).
REASON_GROUPS = (("public: re-exported as ", "public: re-exported as …"),
                 ("private: inside non-public package ", "private: inside non-public package …"),
                 ("private: underscore name", "private: underscore name"))
TOP_BROKEN = 3  # most-used broken symbols named in the takeaway
TOP_RULES = 3  # rules named in the takeaway


@dataclasses.dataclass(frozen=True, slots=True)
class ApiSide:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    summary: ApiSummary  # the side's public API in numbers (``compare``'s half)
    evidence: Evidence  # its graph: what reaches a changed binding


class ApiKind(EvidenceKind[ApiSide, Sides[ApiSummary], ApiRelease]):
    key = "api"
    title = "Public API"
    release_rank = 0  # what breaks importers leads the release section

    def summarize(self, evidence: Evidence) -> ApiSide:
        return ApiSide(evidence.graph.nodes, evidence.graph.edges, summarize_api(evidence.graph.nodes), evidence)

    def compare(self, a: ApiSide, b: ApiSide) -> Sides[ApiSummary]:
        return Sides(a.summary, b.summary)

    def diff_release(self, a: ApiSide, b: ApiSide) -> ApiRelease:
        return ApiRelease(reach_bindings(diff_api(find_breakages(a.nodes, a.edges, b.nodes, b.edges)), a, b))

    def count(self, section: Sides[ApiSummary], release: ApiRelease | None) -> Counts:
        if release is None:
            return Counts()  # two systems' APIs differ by nature: the summary is context, not a difference
        return Counts(release.api.total, release.api.breaking)

    def release_takeaways(self, section: Sides[ApiSummary], release: ApiRelease, labels: Labels) -> list[Takeaway]:
        return api_takeaways(release.api, labels)

    def takeaways(self, section: Sides[ApiSummary], release: ApiRelease | None, labels: Labels) -> list[Takeaway]:
        if release is not None:
            return []  # a release's API is told by its changes
        parts = []
        for s, label in zip(section, labels):
            if s.empty_reason:
                parts.append(f"{label} records none")
            else:
                kinds: collections.Counter[str] = collections.Counter()
                for by_kind in s.public_by_language.values():
                    kinds.update(by_kind)
                top = ", ".join(plural(n, k, k + "es" if k == "class" else None)
                                for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
                parts.append(f"{label} exposes {plural(s.public, 'public symbol')} ({top})")
        return [Takeaway("Public API: " + "; ".join(parts) + ".", "api")]

    def markdown(self, section: Sides[ApiSummary], la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: Sides[ApiSummary], la: str, lb: str) -> str:
        return render.html(section, la, lb)

    def release_markdown(self, release: ApiRelease, la: str, lb: str) -> list[str]:
        return render.release_markdown(release, la, lb)

    def release_html(self, release: ApiRelease, la: str, lb: str) -> str:
        return render.release_html(release, la, lb)


def reason_group(reason: str) -> str:
    """The kind of reason, without the symbol or package its tail names."""
    for head, group in REASON_GROUPS:
        if reason.startswith(head):
            return group
    return reason


def summarize_api(nodes: Iterable[Node]) -> ApiSummary:
    """One side's public API: public symbols by language and kind, and how the ``api`` reasons split
    (placeholders for outside names, files and namespaces are no API of their own)."""
    public: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter[str] = collections.Counter()
    symbols = with_reason = 0
    for node in nodes:
        if node.kind in SKIPPED_KINDS:
            continue
        symbols += 1
        if not node.api:
            continue
        with_reason += 1
        reasons[reason_group(node.api)] += 1
        if is_public(node):
            public[node.language][node.kind.value] += 1
    return ApiSummary(
        symbols=symbols,
        with_reason=with_reason,
        public=sum(sum(c.values()) for c in public.values()),
        public_by_language={lang: dict(sorted(c.items())) for lang, c in sorted(public.items())},
        reasons=dict(sorted(reasons.items())),
        empty_reason="" if with_reason else (
            "no symbol of this evidence says whether it is public (its `api` field): no Python, Rust or Go "
            "code, or evidence extracted before archdiff recorded the public API"),
    )


def _where(location: Location | None) -> Where | None:
    return Where(location.path, location.line) if location is not None else None


def change_row(b: Breakage) -> ApiChange:
    at = b.new_location or b.old_location
    return ApiChange(
        symbol=b.path,
        rule=b.kind,
        title=b.title,
        subject=b.subject,
        old=b.old,
        new=b.new,
        breaking=b.breaking,
        why=b.why,
        uses=b.uses,
        id=b.symbol,
        old_id=b.old_symbol,
        language=b.language,
        old_location=_where(b.old_location),
        new_location=_where(b.new_location),
        path=at.path if at else "",
        line=at.line if at else 0,
    )


def impact_order(row: ApiChange) -> tuple[bool, int, str, str, str]:
    """Breaking first, then the most used, then by symbol: what a reader must see first."""
    return (not row.breaking, -row.uses, row.symbol, row.rule.value, row.subject)


def diff_api(breakages: Iterable[Breakage]) -> ApiChanges:
    """The release's API section: every change as a row (impact first) and the counts per rule."""
    rows = tuple(sorted((change_row(b) for b in breakages), key=impact_order))
    by_rule = []
    for kind in BreakageKind:
        mine = [r for r in rows if r.rule is kind]
        if mine:
            by_rule.append(RuleCount(kind, TITLES[kind], len(mine), sum(1 for r in mine if r.breaking)))
    by_rule.sort(key=lambda r: (-r.breaking, -r.changes, r.rule.value))  # the rules that dominate first
    return ApiChanges(
        total=len(rows),
        breaking=sum(1 for r in rows if r.breaking),
        broken_symbols=len({r.symbol for r in rows if r.breaking}),
        by_rule=tuple(by_rule),
        changes=rows,
    )


def binding_nodes(side: ApiSide) -> frozenset[str]:
    """The side's bindings: torch operators and whatever a ``binds`` edge ends at."""
    return frozenset({e.target for e in side.edges if e.kind is EdgeKind.BINDS}
                     | {n.id for n in side.nodes if "torch-op" in n.tags})


def reach_bindings(api: ApiChanges, a: ApiSide, b: ApiSide) -> ApiChanges:
    """``api`` with each row of a changed binding naming the public Python API that reaches it:
    over the new graph while the binding is there, over the old one for a binding removed. One
    walk per side for all rows (none when no binding changed)."""
    new_bindings, old_bindings = binding_nodes(b), binding_nodes(a)
    in_new = {r.id for r in api.changes if r.new_location is not None and r.id in new_bindings}
    in_old = {r.old_id for r in api.changes if r.new_location is None and r.old_id in old_bindings}
    if not (in_new or in_old):
        return api
    reached_new: Mapping[str, ApiReach] = reaching_apis(b.evidence, in_new)
    reached_old: Mapping[str, ApiReach] = reaching_apis(a.evidence, in_old)

    def reached(row: ApiChange) -> ApiReach | None:
        if row.new_location is not None:
            return reached_new.get(row.id)
        return reached_old.get(row.old_id)

    return dataclasses.replace(api, changes=tuple(dataclasses.replace(r, reached_by=reached(r))
                                                  for r in api.changes))


def most_used_broken(rows: Iterable[ApiChange], top: int = TOP_BROKEN) -> list[tuple[str, int]]:
    """The broken symbols most used in the old release, each once, with its use count."""
    uses: dict[str, int] = {}
    for r in rows:
        if r.breaking:
            uses[r.symbol] = max(uses.get(r.symbol, 0), r.uses)
    return sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def api_takeaways(api: ApiChanges, labels: Labels) -> list[Takeaway]:
    la, lb = labels
    if not api.total:
        return [Takeaway(f"API: no symbol of {la} changed in a way a caller can notice in {lb}.", "release-api")]
    if not api.breaking:
        return [Takeaway(f"API: {plural(api.total, 'change')} to symbols of {la}, none breaking for callers of "
                         f"its public API.", "release-api")]
    dominant = ", ".join(f"{r.title} ({r.breaking:,})" for r in api.by_rule[:TOP_RULES] if r.breaking)
    text = (f"API: {plural(api.breaking, 'breaking change')} from {la} to {lb} in "
            f"{plural(api.broken_symbols, 'public symbol')} (of {api.total:,} changes to existing symbols); "
            f"mostly {dominant}.")
    out = [Takeaway(text, "release-api")]
    used = [(s, n) for s, n in most_used_broken(api.changes) if n]
    if used:
        out.append(Takeaway("Most-used broken symbols: " + ", ".join(
            f"{s} ({plural(n, 'use')} in {la})" for s, n in used) + ".", "release-api"))
    return out


KIND = ApiKind()
__all__ = ["KIND", "ApiKind", "diff_api", "summarize_api"]
