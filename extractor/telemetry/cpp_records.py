"""prometheus-cpp metric definitions: builder chains read by :mod:`.cpp_scan`, and the call sites
of helper functions that wrap a chain and take the metric's name (and help, labels) as parameters.

Helpers and their call sites may be in different files: both are matched here, by the helper's
unqualified name and its number of parameters.
"""

from __future__ import annotations

import re
from collections import Counter as Tally
from typing import Any

from extractor.context import Context, SourceFile
from extractor.model import Diagnostic, Language, Severity
from extractor.telemetry.records import MetricDefinition, MetricType, expose_names, lint_name

_CONSTANT_NAME = re.compile(r"^(k[A-Z0-9]\w*|[A-Z][A-Z0-9_]+)$")


def cpp_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    files = list(ctx.facts("metrics", Language.CPP, Language.CUDA))
    # Constants from other files (a header's kMetricName) resolve a name only when they look like
    # constants and have one value system-wide: an ordinary identifier such as `name` could be
    # anything, and guessing would invent a metric.
    shared: dict[str, set[str]] = {}
    helpers: dict[tuple[str, int], list[tuple[SourceFile, dict[str, Any]]]] = {}
    for file, facts in files:
        for key, value in facts.get("constants", {}).items():
            if _CONSTANT_NAME.match(key):
                shared.setdefault(key, set()).add(value)
        for helper in facts.get("helpers", []):
            helpers.setdefault((helper["function"], helper["params"]), []).append((file, helper))
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    reached: set[tuple[str, int]] = set()
    for file, facts in files:
        for chain in facts.get("metrics", []):
            stats["cpp_chains"] += 1
            name_fact = chain.get("name") or {}
            name = _constant(name_fact, shared)
            if name is None:
                diagnostics.append(Diagnostic(
                    file.path, chain["line"], "metric-name-unresolved",
                    f"prometheus-cpp {chain['type']} name {name_fact.get('text', '(no .Name)')!r} is "
                    "not a literal or a constant of the analysed files", Severity.INFO))
                stats["cpp_unresolved"] += 1
                continue
            records.append(_record(file, chain["line"], chain, name, _constant(chain.get("help") or {}, shared),
                                   chain.get("labels", []), "builder"))
        for call in facts.get("calls", []):
            for helper_file, helper in helpers.get((call["callee"], len(call["args"])), []):
                positions = helper["positions"]
                name = call["args"][positions["name"]]
                if name is None:
                    continue
                reached.add((helper_file.path, helper["chain"]["line"]))
                chain = helper["chain"]
                help_text = call["args"][positions["help"]] if "help" in positions else \
                    _constant(chain.get("help") or {}, shared)
                labels = chain.get("labels", [])
                if "labels" in positions:
                    labels = call["labels"][positions["labels"]] or []
                records.append(_record(file, call["line"], chain, name, help_text, labels,
                                       f"helper:{helper['function']}"))
                stats["cpp_helper_calls"] += 1
    for (function, _), defined in sorted(helpers.items()):
        for helper_file, helper in defined:
            stats["cpp_chains"] += 1
            if (helper_file.path, helper["chain"]["line"]) not in reached:
                stats["cpp_unresolved"] += 1
                diagnostics.append(Diagnostic(
                    helper_file.path, helper["chain"]["line"], "metric-name-unresolved",
                    f"prometheus-cpp {helper['chain']['type']} name is parameter "
                    f"{helper['positions']['name'] + 1} of {function}(), and no call of it passes a literal",
                    Severity.INFO))
    return records, diagnostics, stats


def _constant(fact: dict[str, Any], shared: dict[str, set[str]]) -> str | None:
    value = fact.get("value")
    if value is None and fact.get("constant") and len(shared.get(fact["constant"], ())) == 1:
        value = next(iter(shared[fact["constant"]]))  # a constant from a header
    return value


def _record(file: SourceFile, line: int, chain: dict[str, Any], name: str, help_text: str | None,
            labels: list[str], via: str) -> MetricDefinition:
    kind = MetricType(chain["type"])
    numbers = chain.get("buckets")
    buckets = tuple(numbers or ()) if kind is MetricType.HISTOGRAM else ()
    quantiles = tuple(numbers or ()) if kind is MetricType.SUMMARY else ()
    return MetricDefinition(
        path=file.path, line=line, name=name, type=kind, help=help_text or "",
        labels=tuple(sorted(set(labels) | set(chain.get("add_labels", [])))),
        buckets=buckets, unit="", language=file.language.value, dynamic=False,
        exposed_names=expose_names(kind, name, "prometheus-cpp"),
        lint=lint_name(name, kind, "prometheus-cpp"),
        labels_resolved=not chain.get("labels_unresolved") or via != "builder",
        buckets_resolved=kind is not MetricType.HISTOGRAM or numbers is not None,
        library="prometheus-cpp", via=via, quantiles=quantiles,
        unresolved=f"labels: variable {chain['labels_unresolved']}" if chain.get("labels_unresolved") and via == "builder" else "",
    )
