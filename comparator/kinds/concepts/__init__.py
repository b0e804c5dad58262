"""Concepts: the named mechanisms both systems show, and those only one of them does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway
from comparator.kinds.concepts import render
from comparator.kinds.concepts.records import ConceptHit, ConceptRow, ConceptSide, ConceptsSection
from comparator.records import Sides
from extractor.concepts.records import CONCEPTS, Concept
from extractor.evidence.read import Evidence

EVIDENCE_SHOWN = 3
Summary = Mapping[str, ConceptSide]  # concept id -> what one side found of it


class ConceptsKind(EvidenceKind[Summary, ConceptsSection, None]):
    key = "concepts"
    title = "Concepts"

    def summarize(self, evidence: Evidence) -> Summary:
        return {c.id: _concept_side(c) for c in evidence.of(CONCEPTS) if c.id}

    def compare(self, a: Summary, b: Summary) -> ConceptsSection:
        return compare_concepts(a, b)

    def count(self, section: ConceptsSection, release: None) -> Counts:
        return Counts(len(section.only_a) + len(section.only_b))

    def takeaways(self, section: ConceptsSection, release: None, labels: Labels) -> list[Takeaway]:
        la, lb = labels
        c = section
        if not (c.shared or c.only_a or c.only_b):
            return []
        text = f"Shared core concepts: [{', '.join(r.id for r in c.shared)}]."
        if c.only_a:
            text += f" Only in {la}: [{', '.join(r.id for r in c.only_a)}]."
        if c.only_b:
            text += f" Only in {lb}: [{', '.join(r.id for r in c.only_b)}]."
        return [Takeaway(text, "concepts")]

    def markdown(self, section: ConceptsSection, la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: ConceptsSection, la: str, lb: str) -> str:
        return render.html(section, la, lb)


def _concept_side(c: Concept) -> ConceptSide:
    return ConceptSide(c.title or c.id, c.count or len(c.evidence), c.files,
                       tuple(ConceptHit(e.matched, e.path, e.line) for e in c.evidence[:EVIDENCE_SHOWN]))


def compare_concepts(a: Summary, b: Summary) -> ConceptsSection:
    def rows(ids: Iterable[str]) -> tuple[ConceptRow, ...]:
        # a concept id one side lacks is what the section is about: that side's entry is None
        return tuple(ConceptRow(i, (a[i] if i in a else b[i]).title, a.get(i), b.get(i)) for i in sorted(ids))

    reason = "no concept records in this evidence"
    return ConceptsSection(
        shared=rows(set(a) & set(b)),
        only_a=rows(set(a) - set(b)),
        only_b=rows(set(b) - set(a)),
        empty_reason=Sides("" if a else reason, "" if b else reason),
    )


KIND = ConceptsKind()
__all__ = ["KIND", "ConceptsKind", "compare_concepts"]
