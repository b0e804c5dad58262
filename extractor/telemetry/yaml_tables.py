"""Metric definitions declared in a YAML table of specifications, for code that makes its metrics
from such a table at run time (TorchServe's ``ts/configs/metrics.yaml``, which its Java frontend
reads; a Python or Go service loading a ``metrics.yaml``).

Two shapes are read, anywhere in a document:

* lists under a key that names the type: ``counter: [{name, unit, dimensions}, ...]``, also
  plural (``gauges:``) and under any grouping key (``ts_metrics: {counter: [...], gauge: [...]}``);
* lists of entries that each say their type: ``[{name: x, type: counter, labels: [...]}, ...]``.

An entry is a mapping with a string ``name`` and at least one other key a metric specification
has (unit, labels or dimensions, help or description, buckets): a list of mere names under a
``summary:`` key is not a metric table. Labels are read from ``labels``, ``dimensions``,
``labelnames`` (``label_names``) or ``tag_keys``, anchors and aliases followed.

The table names the metric, not the series: the code that reads it chooses the client library,
and so the suffixes a scrape shows (``_total``, ``_bucket``) and whether a unit or a prefix is
added. That code is often in a language archdiff does not read (TorchServe's is Java), so a
record lists the declared name alone as exposed (what a scrape's parser reports as the family
when the reader keeps the name) and says why in ``unresolved``; a histogram without ``buckets``
has the reader's default, likewise unresolved.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from extractor.context import Context
from extractor.model import Diagnostic, Language, ParsedFile, Severity
from extractor.support import safeyaml
from extractor.telemetry.grafana import FileProblem
from extractor.telemetry.opsyaml import neutralise_templates, read_documents, scalar_text
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name

# A type word as a key or as an entry's `type` value; anything else in the file is never composed.
_MARKER = re.compile(rb"(?i)counter|gauge|histogram|summar")
# A file that looks like a table (a type word as a key whose list's first entry starts with a key of a
# metric's specification, or entries that say their type and name): one that does not parse is a
# diagnostic here; other YAML that does not parse is the thresholds step's to report.
_TABLE_LOOK = re.compile(r"(?im)^[ \t]*(?:counters?|gauges?|histograms?|summary|summaries)[ \t]*:[ \t]*\n"
                         r"[ \t]*-[ \t]*(?:name|unit|labels|dimensions|labelnames|label_names|tag_keys|help|description"
                         r"|documentation|buckets)[ \t]*:")
_TYPED_LOOK = re.compile(r"(?im)^[ \t]*-?[ \t]*type[ \t]*:[ \t]*[\"']?(?:counter|gauge|histogram|summary)[\"']?[ \t]*$")
_NAMED_LOOK = re.compile(r"(?im)^[ \t]*-?[ \t]*name[ \t]*:")
_TYPE_WORDS = {"counter": MetricType.COUNTER, "counters": MetricType.COUNTER, "gauge": MetricType.GAUGE,
               "gauges": MetricType.GAUGE, "histogram": MetricType.HISTOGRAM, "histograms": MetricType.HISTOGRAM,
               "summary": MetricType.SUMMARY, "summaries": MetricType.SUMMARY}
_LABEL_KEYS = ("labels", "dimensions", "labelnames", "label_names", "tag_keys")
_HELP_KEYS = ("help", "description", "documentation")
_BUCKET_KEYS = ("buckets",)
_SPEC_KEYS = frozenset((*_LABEL_KEYS, *_HELP_KEYS, *_BUCKET_KEYS, "unit"))

LANGUAGE = "yaml"
EXPOSURE_UNKNOWN = ("declared in a metric table; the code that reads the table decides the series a scrape shows "
                    "(suffixes such as _total or _bucket, a unit or prefix added), so only the declared name is "
                    "listed as exposed")
BUCKETS_UNKNOWN = "the table gives this histogram no buckets: the reader's default applies"


class TableEntry(msgspec.Struct, frozen=True):
    """One metric a table declares."""

    table: str  # the keys that lead to the entry's list ("ts_metrics.counter"; "" at the top)
    name: str
    type: MetricType
    help: str
    labels: tuple[str, ...]
    labels_resolved: bool  # False when the labels entry is not a list (or mapping) of names
    buckets: tuple[float, ...]
    buckets_given: bool
    unit: str
    line: int


class MetricTableFacts(msgspec.Struct, frozen=True):
    entries: tuple[TableEntry, ...] = ()
    diagnostics: tuple[FileProblem, ...] = ()


def scan_yaml_metric_tables(parsed: ParsedFile) -> MetricTableFacts | None:
    if not _MARKER.search(parsed.data):
        return None
    text, _ = neutralise_templates(parsed.text)
    nodes, unread = read_documents(text)
    entries: list[TableEntry] = []
    problems = [msgspec.structs.replace(p, code="metric-table-unread", message=f"metric table not read: {p.message}")
                for p in unread] if unread and _looks_like_table(text) else []
    for node in nodes:
        try:
            doc = safeyaml.build(node, lines=True)
        except (yaml.YAMLError, ValueError) as err:
            if _looks_like_table(text):
                problems.append(FileProblem(node.start_mark.line + 1, "metric-table-unread",
                                            f"metric table not read: {getattr(err, 'problem', None) or err}"))
            continue
        _read_document(doc, entries, problems)
    if not entries and not problems:
        return None
    return MetricTableFacts(tuple(sorted(set(entries), key=lambda e: (e.line, e.table, e.name))),
                            tuple(sorted(set(problems), key=lambda p: (p.line, p.message))))


def _looks_like_table(text: str) -> bool:
    return bool(_TABLE_LOOK.search(text) or (_TYPED_LOOK.search(text) and _NAMED_LOOK.search(text)))


def _read_document(doc: Any, entries: list[TableEntry], problems: list[FileProblem]) -> None:
    """Every list of entries in ``doc``, each container visited once (an alias is a second
    reference to the same object)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(doc, ())]
    seen: set[int] = set()
    while stack:
        value, keys = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                key_text = scalar_text(key)
                by_key = _TYPE_WORDS.get(key_text.lower())
                if by_key is not None and isinstance(item, list):
                    _read_list(item, by_key, ".".join((*keys, key_text)), entries, problems)
                stack.append((item, (*keys, key_text)))
        elif isinstance(value, list):
            if _is_typed_list(value):
                _read_list(value, None, ".".join(keys), entries, problems)
            stack.extend((item, keys) for item in value)


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("name"), str) and bool(_SPEC_KEYS & item.keys())


def _is_typed_list(items: list[Any]) -> bool:
    """Entries that each say their type (``type: counter``)."""
    return any(_is_entry(item) and isinstance(item.get("type"), str) and item["type"].lower() in _TYPE_WORDS
               for item in items)


def _read_list(items: list[Any], by_key: MetricType | None, table: str, entries: list[TableEntry],
               problems: list[FileProblem]) -> None:
    # Under a type word, an entry that has lost its name still makes the list a table (and is reported).
    if not any(_is_entry(item) or (by_key is not None and isinstance(item, dict) and _SPEC_KEYS & item.keys())
               for item in items):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        line = getattr(item, "line", 0)
        if not isinstance(item.get("name"), str) or not item["name"]:
            problems.append(FileProblem(line, "metric-table-entry",
                                        f"an entry of the metric table {table or '(top level)'} has no name: "
                                        "not read as a metric"))
            continue
        metric_type = by_key
        if metric_type is None:
            metric_type = _TYPE_WORDS.get(scalar_text(item.get("type")).lower())
        if metric_type is None:
            problems.append(FileProblem(line, "metric-table-entry",
                                        f"the metric table entry {item['name']!r} has a type archdiff does not "
                                        f"know ({scalar_text(item.get('type'))!r}): not read as a metric"))
            continue
        labels, labels_resolved = _labels(item)
        buckets_value = next((item[k] for k in _BUCKET_KEYS if k in item), None)
        buckets = _buckets(buckets_value)
        entries.append(TableEntry(
            table, item["name"], metric_type, next((scalar_text(item[k]) for k in _HELP_KEYS if k in item), ""),
            labels, labels_resolved, buckets or (), buckets is not None, scalar_text(item.get("unit")), line))


def _labels(item: dict[str, Any]) -> tuple[tuple[str, ...], bool]:
    key = next((k for k in _LABEL_KEYS if k in item), None)
    if key is None or item[key] is None:
        return (), True
    value = item[key]
    if isinstance(value, dict):  # constant labels given with their values: the keys are the names
        value = list(value)
    if isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        return tuple(str(v) for v in value), True
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else (), False


def _buckets(value: Any) -> tuple[float, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in value):
        return None
    return tuple(float(v) for v in value)


# -- extract ---------------------------------------------------------------------------------------

def table_records(ctx: Context, step: str) -> tuple[list[MetricDefinition], list[Diagnostic]]:
    """The metric definitions of every table ``step``'s scanner read, and the entries it could not."""
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    for file, facts in ctx.facts(step, Language.YAML):
        for entry in facts.entries:
            reasons = [EXPOSURE_UNKNOWN]
            if not entry.labels_resolved:
                reasons.append("labels not read: the entry's labels are not a list of names")
            if entry.type is MetricType.HISTOGRAM and not entry.buckets_given:
                reasons.append(BUCKETS_UNKNOWN)
            records.append(MetricDefinition(
                path=file.path, line=entry.line, name=entry.name, type=entry.type, help=entry.help,
                labels=entry.labels, buckets=entry.buckets, unit=entry.unit, language=LANGUAGE, dynamic=False,
                exposed_names=(entry.name,), lint=lint_name(entry.name, entry.type, "", entry.unit),
                labels_resolved=entry.labels_resolved,
                buckets_resolved=entry.type is not MetricType.HISTOGRAM or entry.buckets_given,
                via=f"table:{entry.table}" if entry.table else "table", unresolved="; ".join(reasons)))
        diagnostics.extend(Diagnostic(file.path, p.line, p.code, p.message, Severity.WARNING)
                           for p in facts.diagnostics)
    return records, diagnostics
