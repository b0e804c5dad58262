"""What every evidence kind of the comparator implements, as the extractor's ``Step`` does for extraction.

A kind reads one part of the evidence (layers, struct layouts, telemetry, the graph, ...) and states
its three types once, as the class's parameters::

    class LayersKind(EvidenceKind[LayerSide, LayersSection, LayersRelease]):

``Summary`` is what it keeps of one side, ``Section`` its section of the findings, ``Release`` its
part of ``findings["release"]`` (a record whose fields are the keys it adds there), each a frozen
record of the kind's ``records`` module (``None`` for a part the kind does not have). The comparator
(:mod:`comparator.compare`) loops over a list of kinds (:mod:`comparator.registry`) and asks each,
in this order:

1. ``summarize`` one side (an :class:`extractor.evidence.read.Evidence`), once per side;
2. ``compare`` the two summaries: the kind's section of the findings (None: the kind has no section);
3. ``diff_release`` them when both sides are releases of one system (None: it reports no release change);
4. ``takeaways`` and ``release_takeaways``: sentences built only from those records;
5. ``count`` the differences, and how many of them break users. In a release comparison only
   what changed between the releases counts: a kind with no release part counts nothing there.

The records become the findings' JSON through :func:`comparator.codec.to_json`, every list sorted
by a stable key, so the same evidence gives byte-identical reports (schema: docs/report-schema.md).
The renderers read them back (:class:`comparator.view.KindView`, the half of this protocol they
know) and ask each kind for its ``markdown``/``html`` (and ``release_markdown``/``release_html``),
which only format: a kind's rendering lives in its own ``render`` module.
"""

from __future__ import annotations

import abc
from typing import Any, Generic, TypeVar

from comparator.records import SIDES, Counts, Labels, Located, Takeaway, Where, plural
from comparator.view import KindView, Release, Section, release_order
from extractor.evidence.read import Evidence
from extractor.layers.records import LAYERS

Summary = TypeVar("Summary")


class EvidenceKind(KindView[Section, Release], Generic[Summary, Section, Release], abc.ABC):
    """One evidence kind's comparison. Subclasses override what their evidence supports; the
    defaults contribute nothing, so a kind that only compares systems leaves the release alone."""

    @abc.abstractmethod
    def summarize(self, evidence: Evidence) -> Summary:
        """What the kind keeps of one side, computed once per side."""

    @abc.abstractmethod
    def compare(self, a: Summary, b: Summary) -> Section:
        """The kind's section of the findings (``None`` for a kind that only reports releases)."""

    def diff_release(self, a: Summary, b: Summary) -> Release | None:
        return None

    def count(self, section: Section, release: Release | None) -> Counts:
        """Differences: across systems from the section (``release`` None), in a release
        comparison from the kind's release part."""
        return Counts()

    def takeaways(self, section: Section, release: Release | None, labels: Labels) -> list[Takeaway]:
        return []

    def release_takeaways(self, section: Section, release: Release, labels: Labels) -> list[Takeaway]:
        return []


AnyKind = EvidenceKind[Any, Any, Any]


def where(record: Located) -> Where:
    """The ``path``/``line`` of a record that comes from code."""
    return Where(record.path, record.line)


def apart_paths(evidence: Evidence) -> dict[str, str]:
    """The paths of the modules the layers set apart (tests, examples & benchmarks; vendored and
    generated code), each with its layer's title; none when the evidence has no layers. What is
    defined there is not the system's own: its metrics are listed apart, its symbols and their
    uses are not counted among the system's dependencies."""
    try:
        layers = evidence.of(LAYERS)
    except KeyError:
        return {}
    return {m.path: layer.title for layer in layers if layer.apart for m in layer.modules}


__all__ = ["SIDES", "AnyKind", "Counts", "EvidenceKind", "Labels", "Takeaway", "Where", "apart_paths", "plural",
           "release_order", "where"]
