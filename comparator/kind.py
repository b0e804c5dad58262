"""What every evidence kind of the comparator implements, as the extractor's ``Step`` does for extraction.

A kind reads one part of the evidence (layers, struct layouts, telemetry, the graph, ...). The
comparator (:mod:`comparator.compare`) loops over a list of kinds (:mod:`comparator.registry`) and
asks each, in this order:

1. ``summarize`` one side (an :class:`extractor.evidence.read.Evidence`), once per side;
2. ``compare`` the two summaries: the kind's section of the findings (plain JSON), or None;
3. ``diff_release`` them when both sides are releases of one system: keys of ``findings["release"]``;
4. ``takeaways`` and ``release_takeaways``: sentences built only from those sections;
5. ``count`` the differences, and how many of them break users.

and the renderers ask each for its ``markdown``/``html`` (and ``release_markdown``/``release_html``),
which only format what the kind's sections hold: a kind's rendering lives in its own ``render``
module. Findings are JSON as they stand, every list sorted by a stable key, so the same evidence
gives byte-identical reports (schema: docs/report-schema.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

SIDES = ("a", "b")


@dataclasses.dataclass(frozen=True, slots=True)
class Counts:
    """Differences a kind found, and how many of them break users (for ``--fail-on``)."""

    any: int = 0
    breaking: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.any + other.any, self.breaking + other.breaking)


@dataclasses.dataclass(frozen=True, slots=True)
class Takeaway:
    text: str
    ref: str  # the report section (HTML anchor) whose numbers back the sentence

    def json(self) -> dict[str, str]:
        return {"text": self.text, "ref": self.ref}


class EvidenceKind:
    """One evidence kind's comparison. Subclasses override what their evidence supports; the
    defaults contribute nothing, so a kind that only compares systems leaves the release alone."""

    key: str = ""  # its section of the findings, and the anchor of its part of the HTML page
    title: str = ""  # the section's name in the page's table of contents
    # Where its release changes stand in the release section and takeaways: lower comes first.
    release_rank: int = 100

    def summarize(self, evidence: Any) -> Any:
        return evidence

    def compare(self, a: Any, b: Any) -> Mapping[str, Any] | None:
        return None

    def diff_release(self, a: Any, b: Any) -> Mapping[str, Any]:
        return {}

    def count(self, section: Any, release: Mapping[str, Any] | None) -> Counts:
        return Counts()

    def takeaways(self, section: Any, release: Mapping[str, Any] | None, labels: Sequence[str]) -> list[Takeaway]:
        return []

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        return []

    # Rendering: labels arrive escaped for the format at hand.
    def markdown(self, section: Any, la: str, lb: str) -> list[str]:
        return []

    def release_markdown(self, release: Mapping[str, Any], la: str, lb: str) -> list[str]:
        return []

    def html(self, section: Any, la: str, lb: str) -> str:
        return ""

    def release_html(self, release: Mapping[str, Any], la: str, lb: str) -> str:
        return ""


def release_order(kinds: Sequence[EvidenceKind]) -> list[EvidenceKind]:
    """The kinds in release-section order: what breaks importers first, then the ABI, dashboards, drift."""
    return sorted(kinds, key=lambda k: k.release_rank)  # stable: equal ranks keep the registry's order


def loc(record: Any) -> dict[str, Any]:
    """The ``path``/``line`` pair of a record that comes from code."""
    return {"path": record.path, "line": record.line}


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
