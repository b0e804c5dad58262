"""yalantinglibs' metrics (``ylt/metric``) as the series their ``serialize`` writes.

A ylt metric is an object made with its name and help (ylt include/ylt/metric/counter.hpp,
gauge.hpp, histogram.hpp, summary.hpp, read at 393e27e8):

- ``counter_t``/``gauge_t`` (``basic_static_counter``/``_gauge``): ``(name, help[, static labels map])``;
- ``histogram_t``: ``(name, help, bucket bounds[, static labels map])``; ``summary_t``: ``(name, help,
  quantiles, ...)``;
- the dynamic kinds (``basic_dynamic_counter<T, N>``, ``dynamic_gauge_1t``, ``basic_dynamic_histogram``,
  ...) take the names of their N labels as a ``std::array`` after those, and a map of static labels
  before it in the "hybrid" form; a system may add its own kinds in ``ylt::metric`` in the same
  shapes (Mooncake's ``hybrid_counter_1t``), and the kind is read from the type's name.

Every one is written under its name as given: a counter gets no ``_total``, a histogram
``_bucket``/``_sum``/``_count``, a summary its quantiles, ``_sum`` and ``_count``. A metric is
often a class member whose constructor's initializer list names it (``counter_("name", "help")``),
in another file than the member's declaration: the two are joined here by class and member name.
A member declared with a ylt type that no initializer names, and a name that is no literal or
constant, are said, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from extractor.context import SourceFile
from extractor.model import Diagnostic, Severity
from extractor.telemetry.cpp_scan import ArgumentValue, YltArgument, YltMetric
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name

LIBRARY = "yalantinglibs"
_KINDS = (("histogram", MetricType.HISTOGRAM), ("summary", MetricType.SUMMARY), ("gauge", MetricType.GAUGE),
          ("counter", MetricType.COUNTER))
_LABELLED = re.compile(r"dynamic|hybrid|_\d+[td]$")  # kinds that take their label names as an array
_SERIES = {MetricType.HISTOGRAM: ("_bucket", "_sum", "_count"), MetricType.SUMMARY: ("", "_sum", "_count")}


def metric_type(kind: str) -> MetricType:
    return next(t for word, t in _KINDS if word in kind)


def joined(items: Iterable[tuple[SourceFile, YltMetric]]) -> tuple[list[tuple[SourceFile, YltMetric]],
                                                                     list[Diagnostic]]:
    """The metrics: those made with their arguments, and each member declared with a ylt type
    joined with the initializers that name it (their file and line, the member's kind); a member
    no initializer names, or whose classes' declarations disagree on its kind, is said."""
    declared: dict[str, set[str]] = {}
    where: dict[str, tuple[SourceFile, YltMetric]] = {}
    initializers: list[tuple[SourceFile, YltMetric]] = []
    out: list[tuple[SourceFile, YltMetric]] = []
    named: set[str] = set()
    for file, metric in items:
        if metric.name is None:
            declared.setdefault(metric.member, set()).add(metric.kind)
            where.setdefault(metric.member, (file, metric))
        elif not metric.kind:
            initializers.append((file, metric))
        else:  # made with its arguments, or named by an initializer beside the member's declaration
            out.append((file, metric))
            named.add(metric.member)
    for file, metric in initializers:
        kinds = declared.get(metric.member)
        if kinds is not None and len(kinds) == 1:
            out.append((file, YltMetric(next(iter(kinds)), metric.line, metric.member, metric.name, metric.help,
                                        metric.rest)))
            named.add(metric.member)
    problems = [Diagnostic(file.path, metric.line, "metric-name-unresolved",
                           f"ylt::metric::{metric.kind} member {metric.member}: "
                           + ("its classes declare it with different types" if len(declared[member]) > 1 else
                              "no constructor's initializer list of the analysed files names it"), Severity.INFO)
                for member, (file, metric) in sorted(where.items()) if member not in named]
    return out, problems


def ylt_record(file: SourceFile, metric: YltMetric,
               value: Callable[[ArgumentValue | None], str | None]) -> tuple[MetricDefinition | None,
                                                                             Diagnostic | None]:
    """The metric a ylt object is, or why its name is not known (``value``: an argument's value,
    constants of other files resolved)."""
    name = value(metric.name)
    if name is None:
        written = metric.name.text if metric.name is not None else "(none)"
        return None, Diagnostic(file.path, metric.line, "metric-name-unresolved",
                                f"ylt::metric::{metric.kind} name {written!r} is not a literal or a constant of "
                                "the analysed files", Severity.INFO)
    if not name:  # `gauge_t("", "")`: ylt's own unnamed parts of another metric, never written alone
        return None, None
    kind = metric_type(metric.kind)
    rest = list(metric.rest)
    bounds: YltArgument | None = None
    if kind in (MetricType.HISTOGRAM, MetricType.SUMMARY) and rest:
        bounds = rest.pop(0)
    labels, unresolved = _labels(metric.kind, rest)
    buckets = bounds.numbers if bounds is not None and bounds.numbers is not None else ()
    buckets_known = kind is not MetricType.HISTOGRAM or (bounds is not None and bounds.numbers is not None)
    if not buckets_known:
        written = bounds.text if bounds is not None else "(none)"
        unresolved = "; ".join(filter(None, (unresolved, f"buckets: {written} is not a literal list of the file")))
    return MetricDefinition(
        path=file.path, line=metric.line, name=name, type=kind, help=value(metric.help) or "",
        labels=tuple(sorted(set(labels))), buckets=buckets if kind is MetricType.HISTOGRAM else (), unit="",
        language=file.language.value, dynamic=False,
        exposed_names=tuple(name + suffix for suffix in _SERIES.get(kind, ("",))),
        lint=lint_name(name, kind, LIBRARY), labels_resolved=not unresolved.startswith("labels"),
        buckets_resolved=buckets_known, library=LIBRARY, via=f"ylt::metric::{metric.kind}",
        quantiles=buckets if kind is MetricType.SUMMARY else (), unresolved=unresolved), None


def _labels(kind: str, rest: list[YltArgument]) -> tuple[list[str], str]:
    """The label names the arguments after the name, help (and bounds) give, and why not all are
    known ("" when they are): a static kind's optional map of static labels; a labelled kind's
    array of names, after a map of static labels in the hybrid form."""
    labelled = _LABELLED.search(kind) is not None
    names: list[str] = []
    for argument in rest:
        if argument.keys is not None:
            names.extend(argument.keys)
        elif labelled and argument.strings is not None:
            names.extend(argument.strings)
        elif argument.numbers is None:  # a map or an array the file does not spell: names not known
            return names, f"labels: {argument.text} is not a literal of the file"
    return names, ""
