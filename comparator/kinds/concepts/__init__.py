"""Concepts: the named mechanisms both systems show, and those only one of them does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from comparator.kind import SIDES, Counts, EvidenceKind, Takeaway, loc
from comparator.kinds.concepts import render
from extractor.concepts.records import Concept
from extractor.evidence.read import Evidence
from extractor.concepts.records import CONCEPTS

EVIDENCE_SHOWN = 3


class ConceptsKind(EvidenceKind):
    key = "concepts"
    title = "Concepts"

    def summarize(self, evidence: Evidence) -> dict[str, dict[str, Any]]:
        return {c.id: _concept_side(c) for c in evidence.of(CONCEPTS) if c.id}

    def compare(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
        return compare_concepts(a, b)

    def count(self, section: Mapping[str, Any], release: Mapping[str, Any] | None) -> Counts:
        return Counts() if release else Counts(len(section["only_a"]) + len(section["only_b"]))

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels
        c = section
        if not (c["shared"] or c["only_a"] or c["only_b"]):
            return []
        text = f"Shared core concepts: [{', '.join(r['id'] for r in c['shared'])}]."
        if c["only_a"]:
            text += f" Only in {la}: [{', '.join(r['id'] for r in c['only_a'])}]."
        if c["only_b"]:
            text += f" Only in {lb}: [{', '.join(r['id'] for r in c['only_b'])}]."
        return [Takeaway(text, "concepts")]

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)


def _concept_side(c: Concept) -> dict[str, Any]:
    return {"title": c.title or c.id, "count": c.count or len(c.evidence), "files": c.files,
            "evidence": [{"match": e.matched, **loc(e)} for e in c.evidence[:EVIDENCE_SHOWN]]}


def compare_concepts(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    by_side = {"a": a, "b": b}

    def rows(ids: Iterable[str]) -> list[dict[str, Any]]:
        return [{"id": i, "title": (a.get(i) or b[i])["title"], "a": a.get(i), "b": b.get(i)} for i in sorted(ids)]

    return {
        "shared": rows(set(a) & set(b)),
        "only_a": rows(set(a) - set(b)),
        "only_b": rows(set(b) - set(a)),
        "empty_reason": {side: "" if by_side[side] else "no concept records in this evidence" for side in SIDES},
    }


KIND = ConceptsKind()
__all__ = ["KIND", "ConceptsKind", "compare_concepts"]
