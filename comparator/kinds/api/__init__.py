"""The API a user calls: every change of a release's symbols, typed, and which of them break callers.

A release's rows are :func:`comparator.apidiff.find_breakages` over the two graphs, nothing more:
the rules (parameter removed, default changed, base class removed, ...) and whether a symbol is
public (its ``api`` field, recorded by the extractor) are the API diff's, not recomputed here. This
kind is the only one that decides "breaking" for symbols; the symbols kind lists drift only.

Across two systems it summarises each side's public API: public symbols by language and kind, and
how the extractor's ``api`` reasons split (``__all__``, module-level names, re-exports, ...).
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from comparator.apidiff import TITLES, Breakage, BreakageKind, find_breakages
from comparator.apidiff.surface import SKIPPED_KINDS, is_public
from comparator.kind import SIDES, Counts, EvidenceKind, Takeaway, plural
from comparator.kinds.api import render
from extractor.evidence.read import Evidence
from extractor.model import Edge, Location, Node

# Reasons whose tail names a symbol or a package, grouped in the summary: (head, group).
REASON_GROUPS = (("public: re-exported as ", "public: re-exported as …"),
                 ("private: inside non-public package ", "private: inside non-public package …"),
                 ("private: underscore name", "private: underscore name"))
TOP_BROKEN = 3  # most-used broken symbols named in the takeaway
TOP_RULES = 3  # rules named in the takeaway


class ApiSide(NamedTuple):
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    summary: dict[str, Any]  # the side's public API in numbers (``compare``'s half)


class ApiKind(EvidenceKind):
    key = "api"
    title = "Public API"
    release_rank = 0  # what breaks importers leads the release section

    def summarize(self, evidence: Evidence) -> ApiSide:
        return ApiSide(evidence.graph.nodes, evidence.graph.edges, summarize_api(evidence.graph.nodes))

    def compare(self, a: ApiSide, b: ApiSide) -> dict[str, Any]:
        return {"a": a.summary, "b": b.summary}

    def diff_release(self, a: ApiSide, b: ApiSide) -> dict[str, Any]:
        return {"api": diff_api(find_breakages(a.nodes, a.edges, b.nodes, b.edges))}

    def count(self, section: Any, release: Mapping[str, Any] | None) -> Counts:
        if not release:
            return Counts()  # two systems' APIs differ by nature: the summary is context, not a difference
        api = release["api"]
        return Counts(api["total"], api["breaking"])

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        return api_takeaways(release["api"], labels)

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        if release:
            return []  # a release's API is told by its changes
        parts = []
        for side, label in zip(SIDES, labels):
            s = section[side]
            if s["empty_reason"]:
                parts.append(f"{label} records none")
            else:
                kinds = collections.Counter()
                for by_kind in s["public_by_language"].values():
                    kinds.update(by_kind)
                top = ", ".join(plural(n, k, k + "es" if k == "class" else None)
                                for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
                parts.append(f"{label} exposes {plural(s['public'], 'public symbol')} ({top})")
        return [Takeaway("Public API: " + "; ".join(parts) + ".", "api")]

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)
    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def reason_group(reason: str) -> str:
    """The kind of reason, without the symbol or package its tail names."""
    for head, group in REASON_GROUPS:
        if reason.startswith(head):
            return group
    return reason


def summarize_api(nodes: Iterable[Node]) -> dict[str, Any]:
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
    return {
        "symbols": symbols,
        "with_reason": with_reason,
        "public": sum(sum(c.values()) for c in public.values()),
        "public_by_language": {lang: dict(sorted(c.items())) for lang, c in sorted(public.items())},
        "reasons": dict(sorted(reasons.items())),
        "empty_reason": "" if with_reason else (
            "no symbol of this evidence says whether it is public (its `api` field): no Python, Rust or Go "
            "code, or evidence extracted before archdiff recorded the public API"),
    }


def _location(where: Location | None) -> dict[str, Any] | None:
    return {"path": where.path, "line": where.line} if where is not None else None


def change_row(b: Breakage) -> dict[str, Any]:
    where = b.new_location or b.old_location
    return {
        "symbol": b.path,
        "rule": b.kind.value,
        "title": b.title,
        "subject": b.subject,
        "old": b.old,
        "new": b.new,
        "breaking": b.breaking,
        "why": b.why,
        "uses": b.uses,
        "id": b.symbol,
        "old_id": b.old_symbol,
        "language": b.language,
        "old_location": _location(b.old_location),
        "new_location": _location(b.new_location),
        "path": where.path if where else "",
        "line": where.line if where else 0,
    }


def impact_order(row: Mapping[str, Any]) -> tuple:
    """Breaking first, then the most used, then by symbol: what a reader must see first."""
    return (not row["breaking"], -row["uses"], row["symbol"], row["rule"], row["subject"])


def diff_api(breakages: Iterable[Breakage]) -> dict[str, Any]:
    """The release's API section: every change as a row (impact first) and the counts per rule."""
    rows = sorted((change_row(b) for b in breakages), key=impact_order)
    by_rule = []
    for kind in BreakageKind:
        mine = [r for r in rows if r["rule"] == kind.value]
        if mine:
            by_rule.append({"rule": kind.value, "title": TITLES[kind], "changes": len(mine),
                            "breaking": sum(1 for r in mine if r["breaking"])})
    by_rule.sort(key=lambda r: (-r["breaking"], -r["changes"], r["rule"]))  # the rules that dominate first
    return {
        "total": len(rows),
        "breaking": sum(1 for r in rows if r["breaking"]),
        "broken_symbols": len({r["symbol"] for r in rows if r["breaking"]}),
        "by_rule": by_rule,
        "changes": rows,
    }


def most_used_broken(rows: Iterable[Mapping[str, Any]], top: int = TOP_BROKEN) -> list[tuple[str, int]]:
    """The broken symbols most used in the old release, each once, with its use count."""
    uses: dict[str, int] = {}
    for r in rows:
        if r["breaking"]:
            uses[r["symbol"]] = max(uses.get(r["symbol"], 0), r["uses"])
    return sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def api_takeaways(api: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
    la, lb = labels
    if not api["total"]:
        return [Takeaway(f"API: no symbol of {la} changed in a way a caller can notice in {lb}.", "release-api")]
    if not api["breaking"]:
        return [Takeaway(f"API: {plural(api['total'], 'change')} to symbols of {la}, none breaking for callers of "
                         f"its public API.", "release-api")]
    dominant = ", ".join(f"{r['title']} ({r['breaking']:,})" for r in api["by_rule"][:TOP_RULES] if r["breaking"])
    text = (f"API: {plural(api['breaking'], 'breaking change')} from {la} to {lb} in "
            f"{plural(api['broken_symbols'], 'public symbol')} (of {api['total']:,} changes to existing symbols); "
            f"mostly {dominant}.")
    out = [Takeaway(text, "release-api")]
    used = [(s, n) for s, n in most_used_broken(api["changes"]) if n]
    if used:
        out.append(Takeaway("Most-used broken symbols: " + ", ".join(
            f"{s} ({plural(n, 'use')} in {la})" for s, n in used) + ".", "release-api"))
    return out


KIND = ApiKind()
__all__ = ["KIND", "ApiKind", "diff_api", "summarize_api"]
