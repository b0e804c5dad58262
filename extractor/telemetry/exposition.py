"""Prometheus text a program writes by hand, without a client library: its ``# TYPE name type``
lines, one family each (library ``text-exposition``). C/C++ string literals are read by
:mod:`.cpp_scan`, Python's by :mod:`.python_exposition`; both give :class:`ExpositionLine` facts and
become records here, exposed under the name as written (no library adds a suffix).
"""

from __future__ import annotations

import msgspec

from extractor.telemetry.native_metrics import exposed
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name

TEXT_LIBRARY = "text-exposition"  # no client library: the text is written by the code itself


class ExpositionLine(msgspec.Struct, frozen=True, omit_defaults=True):
    """A ``# TYPE`` line of Prometheus text the file writes in a string literal."""

    line: int
    name: str = ""  # "" when the literal does not hold the whole name and type (they are computed)
    type: str = ""
    written: str = ""  # what the literal says after `# TYPE `, when it is computed
    help: str | None = None
    labels: tuple[str, ...] | None = None  # keys of a sample written as a literal; None when none is


def exposition_record(path: str, language: str, text: ExpositionLine) -> MetricDefinition:
    """A family of hand-written Prometheus text: exposed under the name as written (no client
    library adds a suffix), a histogram's or summary's series beside it."""
    kind = MetricType(text.type)
    return MetricDefinition(
        path=path, line=text.line, name=text.name, type=kind, help=text.help or "",
        labels=text.labels or (), buckets=(), unit="", language=language, dynamic=False,
        exposed_names=exposed(kind, text.name), lint=lint_name(text.name, kind, TEXT_LIBRARY),
        labels_resolved=text.labels is not None,
        buckets_resolved=kind is not MetricType.HISTOGRAM, library=TEXT_LIBRARY, via="exposition-text",
        unresolved="" if text.labels is not None else "labels: no sample of it is written as a literal")
