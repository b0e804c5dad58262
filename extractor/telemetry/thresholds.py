"""The ``thresholds`` evidence kind: numbers production attaches to metrics.

Sources: Prometheus alerting/recording rule files (also inside a PrometheusRule resource), Grafana
dashboards (current ``fieldConfig`` thresholds and the legacy panel forms), Kubernetes
HorizontalPodAutoscaler targets and prometheus-adapter rules, including Helm charts whose templates
hold ``{{ }}`` directives. An HPA target on an adapter-renamed metric is linked through the adapter
rule's ``metricsQuery`` to the series it reads, and every threshold to the metric definitions of
the ``metrics`` step that expose the series it reads.

Scanners see raw bytes (tree is None) and reject cheaply: vLLM alone ships ~450 JSON files, most of
them kernel tuning tables.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter as Tally
from pathlib import PurePosixPath
from typing import Any

import yaml

from extractor.support import safeyaml
from extractor.context import Context
from extractor.model import Contribution, Diagnostic, Language, Severity, Step
from extractor.telemetry.grafana import DashboardFacts, Panel, scan_json_thresholds
from extractor.telemetry.libraries import conventions
from extractor.telemetry.opsyaml import (AdapterFact, HpaFact, InhibitFact, KedaFact, OpsFacts, RuleFact,
                                         neutralise_templates, scalar_text, scan_yaml_thresholds)
from extractor.telemetry.promql import analyse
from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.records import THRESHOLDS, SourceKind, Threshold

__all__ = ["THRESHOLDS_STEP", "extract_thresholds", "neutralise_templates", "parse_quantity",
           "scan_json_thresholds", "scan_yaml_thresholds"]

# -- extract ------------------------------------------------------------------------------

_QUANTITY = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
             "Gi": 2**30, "Ti": 2**40}


def parse_quantity(text: str) -> float | None:
    """A Kubernetes quantity (``50``, ``500m``, ``1Gi``) as a number; None when not one."""
    match = re.fullmatch(r"\s*([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(m|k|M|G|T|Ki|Mi|Gi|Ti)?\s*", text)
    if not match:
        return None
    return float(match.group(1)) * _QUANTITY.get(match.group(2) or "", 1.0)


def _exposed_index(ctx: Context) -> dict[str, set[str]]:
    """Series name -> names of the metric definitions that expose it."""
    index: dict[str, set[str]] = {}
    contribution = ctx.result_if_run(METRICS_STEP)
    for record in contribution.records if contribution is not None else ():
        for exposed in record.exposed_names:
            index.setdefault(exposed, set()).add(record.name)
    return index


def _links(metrics: tuple[str, ...], index: dict[str, set[str]]) -> tuple[str, ...]:
    return tuple(sorted({name for m in metrics for name in index.get(m, ())}))


def _values_lookup(ctx: Context, path: str, expression: str) -> str | None:
    """``.Values.a.b`` from the chart's values.yaml (the directory above ``templates/``)."""
    # `.Values.x`, also piped through a formatting function that keeps the value
    match = re.fullmatch(r"\.Values\.([A-Za-z0-9_.\-]+)(?:\s*\|\s*(?:quote|squote|toString|int|int64|float64))*",
                         expression.strip())
    if not match:
        return None
    parts = PurePosixPath(path).parts
    if "templates" not in parts:
        return None
    chart_parts = parts[: len(parts) - 1 - parts[::-1].index("templates")]
    values_path = PurePosixPath(*chart_parts, "values.yaml").as_posix()
    for file in ctx.files:
        if file.path == values_path:
            try:
                values = safeyaml.safe_load(ctx.abs_path(file).read_text(encoding="utf-8", errors="replace"))
            except (OSError, yaml.YAMLError):
                return None
            for key in match.group(1).split("."):
                if not isinstance(values, dict) or key not in values:
                    return None
                values = values[key]
            return None if isinstance(values, (dict, list)) else scalar_text(values)
    return None


def _adapter_queries(rule: AdapterFact) -> tuple[str, str]:
    """The adapter rule's exposed name and its metricsQuery with the templates filled in."""
    series = analyse(rule.series_query).metrics if rule.series_query else ()
    series_name = series[0] if len(series) == 1 else ""
    exposed = rule.as_ or rule.matches or series_name
    if rule.matches and rule.as_ and series_name:
        try:
            exposed = re.sub(rule.matches, rule.as_.replace("${", "\\g<").replace("}", ">")
                             .replace("$", "\\"), series_name)
        except re.error:
            exposed = rule.as_
    query = rule.metrics_query.replace("<<.Series>>", series_name or "__series__")
    query = re.sub(r"\{?<<\.LabelMatchers>>\}?", "", query)
    query = query.replace("<<.GroupBy>>", "pod")
    return exposed, query


class _Collector:
    """Threshold records of one system, before they are linked to metric definitions."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.records: list[Threshold] = []
        self.diagnostics: list[Diagnostic] = []
        self.stats: Tally = Tally()
        self.adapters: dict[str, tuple[tuple[str, ...], str, int]] = {}
        self.recording: set[tuple[str, int]] = set()  # (path, line) of recording rules

    def analysed(self, expr: str, path: str, line: int):
        result = analyse(expr)
        if result.error:
            self.diagnostics.append(Diagnostic(path, line, "promql-unknown",
                                               f"PromQL not fully understood ({result.error}): {expr[:120]!r}",
                                               Severity.WARNING))
            self.stats["promql_unknown"] += 1
        return result

    def resolve_templates(self, text: str, path: str, placeholders: dict[str, str], values: bool) -> str:
        for key, expression in placeholders.items():
            if key in text:
                resolved = _values_lookup(self.ctx, path, expression) if values else None
                text = text.replace(key, resolved if resolved is not None else "{{ %s }}" % expression)
        return text

    def adapter(self, path: str, rule: AdapterFact) -> None:
        exposed, query = _adapter_queries(rule)
        result = self.analysed(query, path, rule.line)
        self.adapters[exposed] = (result.metrics, path, rule.line)
        self.records.append(Threshold(path=path, line=rule.line, source_kind=SourceKind.ADAPTER, name=exposed,
                                      expr=rule.metrics_query, metrics=result.metrics, op="", value=None))

    def rule(self, path: str, rule: RuleFact, placeholders: dict[str, str]) -> None:
        expr = self.resolve_templates(rule.expr, path, placeholders, True)  # `> {{ .Values.x }}`
        result = self.analysed(expr, path, rule.line)
        if rule.record and not rule.alert:
            self.recording.add((path, rule.line))
        self.records.append(Threshold(
            path=path, line=rule.line, source_kind=SourceKind.PROMETHEUS_RULE,
            name=rule.alert or rule.record, expr=expr, metrics=result.metrics,
            op=result.op, value=result.value, for_=rule.for_, severity=rule.severity))

    def hpa(self, path: str, hpa: HpaFact, placeholders: dict[str, str]) -> None:
        value_text = self.resolve_templates(hpa.value, path, placeholders, True)
        metric = self.resolve_templates(hpa.metric, path, placeholders, False)
        via: tuple[str, ...] = ()
        # cpu/memory targets are Kubernetes resource metrics, not Prometheus series
        is_resource = hpa.type in ("Resource", "ContainerResource")
        metrics: tuple[str, ...] = (metric,) if metric and not is_resource else ()
        if metric in self.adapters:
            read, adapter_path, adapter_line = self.adapters[metric]
            via = (f"adapter:{metric}@{adapter_path}:{adapter_line}",)
            metrics = read
        value = parse_quantity(value_text)
        self.records.append(Threshold(
            path=path, line=hpa.line, source_kind=SourceKind.HPA, name=metric,
            expr=f"{hpa.type} {hpa.target_type or hpa.value_key}".strip(),
            metrics=metrics, op="target", value=value, via=via,
            unlinked="a Kubernetes resource metric, not a Prometheus series" if is_resource else ""))
        if value is None:
            self.diagnostics.append(Diagnostic(path, hpa.line, "hpa-target-unresolved",
                                               f"HPA target {hpa.value_key}={value_text!r} is not a number",
                                               Severity.INFO))

    def keda(self, path: str, trigger: KedaFact, placeholders: dict[str, str]) -> None:
        query = self.resolve_templates(trigger.query, path, placeholders, True)
        result = self.analysed(query, path, trigger.line)
        for op, key, written in (("target", "threshold", trigger.threshold),
                                 ("activation", "activation", trigger.activation)):
            text = self.resolve_templates(written, path, placeholders, True)
            if not text:
                continue
            value = parse_quantity(text)
            self.records.append(Threshold(path=path, line=trigger.line, source_kind=SourceKind.KEDA,
                                          name=trigger.name, expr=query, metrics=result.metrics, op=op,
                                          value=value))
            if value is None:
                self.diagnostics.append(Diagnostic(path, trigger.line, "keda-threshold-unresolved",
                                                   f"KEDA {key}={text!r} is not a number", Severity.INFO))

    def panels(self, path: str, panels: tuple[Panel, ...]) -> None:
        for panel in panels:
            metrics: set[str] = set()
            for expr in panel.exprs:
                metrics.update(self.analysed(expr, path, panel.line).metrics)
            common: dict[str, Any] = dict(path=path, line=panel.line, source_kind=SourceKind.GRAFANA,
                                          name=panel.title, expr="\n".join(panel.exprs),
                                          metrics=tuple(sorted(metrics)))
            if not panel.thresholds:
                self.records.append(Threshold(op="", value=None, **common))  # what the panel reads
            for step in panel.thresholds:
                self.records.append(Threshold(op=step.op, value=step.value, severity=step.color,
                                              default=step.default, for_=step.for_, **common))


def extract_thresholds(ctx: Context) -> Contribution:
    collector = _Collector(ctx)
    yaml_files: list[tuple[Any, OpsFacts]] = list(ctx.facts("thresholds", Language.YAML))
    json_files: list[tuple[Any, DashboardFacts]] = list(ctx.facts("thresholds", Language.JSON))
    for file, facts in yaml_files:  # adapters first: HPA targets anywhere may name their metrics
        for adapter in facts.adapter:
            collector.adapter(file.path, adapter)
    inhibits: list[tuple[str, InhibitFact]] = []
    for file, facts in yaml_files:
        for rule in facts.rules:
            collector.rule(file.path, rule, facts.placeholders)
        for hpa in facts.hpa:
            collector.hpa(file.path, hpa, facts.placeholders)
        for trigger in facts.keda:
            collector.keda(file.path, trigger, facts.placeholders)
        collector.panels(file.path, facts.panels)
        inhibits.extend((file.path, inhibit) for inhibit in facts.inhibit)
    for file, dashboard in json_files:
        collector.panels(file.path, dashboard.panels)
    problems = [(file, facts.diagnostics) for file, facts in yaml_files] + \
        [(file, dashboard.diagnostics) for file, dashboard in json_files]
    for file, found in problems:
        for problem in found:
            collector.diagnostics.append(Diagnostic(file.path, problem.line, problem.code, problem.message))
    index = _exposed_index(ctx)
    recorded = _recorded(collector.records, collector.recording)
    records = [_linked(r, recorded, index) for r in collector.records]
    records += _inhibit_records(inhibits, records, collector.recording)
    # An explicit key: dataclass ordering would compare a None value with a float and raise.
    records.sort(key=lambda r: (r.path, r.line, r.source_kind.value, r.name, r.op,
                                float("-inf") if r.value is None else r.value, r.severity, r.expr))
    return Contribution(records=tuple(records), diagnostics=tuple(sorted(collector.diagnostics)),
                        stats=_stats(records, collector.stats, index))


def _recorded(records: list[Threshold], recording: set[tuple[str, int]]) -> dict[str, list[Threshold]]:
    """Recording rules by the series they record (one name may be recorded by several rules)."""
    out: dict[str, list[Threshold]] = {}
    for record in records:
        if (record.path, record.line) in recording and record.name and record.name not in record.metrics:
            out.setdefault(record.name, []).append(record)
    return out


def _raw(metrics: tuple[str, ...], recorded: dict[str, list[Threshold]], seen: frozenset[str] = frozenset(),
         depth: int = 0) -> tuple[set[str], list[str]]:
    """The series behind ``metrics`` once every recorded series is replaced by what its rule reads,
    transitively (cycles and chains deeper than 16 stop), and the rules followed."""
    raw: set[str] = set()
    via: list[str] = []
    for metric in metrics:
        rules = recorded.get(metric)
        if not rules or metric in seen or depth > 16:
            raw.add(metric)
            continue
        for rule in rules:
            via.append(f"record:{metric}@{rule.path}:{rule.line}")
            inner, inner_via = _raw(rule.metrics, recorded, seen | {metric}, depth + 1)
            raw |= inner
            via.extend(inner_via)
    return raw, via


def _linked(record: Threshold, recorded: dict[str, list[Threshold]], index: dict[str, set[str]]) -> Threshold:
    raw, via = _raw(record.metrics, recorded)
    raw_metrics = tuple(sorted(raw)) if via else ()
    links = _links(tuple(sorted(raw)), index)
    reason = record.unlinked
    if not links and not reason:
        synthetic = sorted(raw & conventions().prometheus_synthetic)
        unknown = sorted(raw - conventions().prometheus_synthetic)
        if not record.metrics:
            reason = "reads no metric (no series in its expression)"
        elif not unknown:
            reason = "reads only series Prometheus writes itself: " + ", ".join(synthetic)
        else:
            reason = "reads series no metric definition of this system exposes: " + ", ".join(unknown)
    return dataclasses.replace(record, links=links, via=record.via + tuple(dict.fromkeys(via)),
                               raw_metrics=raw_metrics, unlinked="" if links else reason)


def _inhibit_records(inhibits: list[tuple[str, InhibitFact]], records: list[Threshold],
                     recording: set[tuple[str, int]]) -> list[Threshold]:
    """An inhibit rule reads what the alerts it names read."""
    alerts: dict[str, list[Threshold]] = {}
    for record in records:
        if record.source_kind is SourceKind.PROMETHEUS_RULE and (record.path, record.line) not in recording:
            alerts.setdefault(record.name, []).append(record)
    out = []
    for path, rule in inhibits:
        named = rule.source + rule.target
        found = [a for name in named for a in alerts.get(name, ())]
        missing = [n for n in named if n not in alerts]
        metrics = tuple(sorted({m for a in found for m in (a.raw_metrics or a.metrics)}))
        links = tuple(sorted({link for a in found for link in a.links}))
        reason = ""
        if not links:
            reason = ("names alerts no rule of this system defines: " + ", ".join(missing)) if missing \
                else "the alerts it names link no metric definition"
        out.append(Threshold(
            path=path, line=rule.line, source_kind=SourceKind.INHIBIT,
            name=f"{' | '.join(rule.source) or '*'} inhibits {' | '.join(rule.target) or '*'}",
            expr=f"equal: {', '.join(rule.equal)}" if rule.equal else "", metrics=metrics,
            op="inhibits", value=None, links=links,
            via=tuple(f"alert:{a.name}@{a.path}:{a.line}" for a in found), unlinked=reason))
    return out


def _stats(records: list[Threshold], counted: Tally, index: dict[str, set[str]]) -> dict[str, Any]:
    stats: dict[str, Any] = dict(counted)
    stats["thresholds"] = len(records)
    stats["by_source_kind"] = dict(sorted(Tally(r.source_kind.value for r in records).items()))
    stats["with_value"] = sum(r.value is not None for r in records)
    stats["grafana_default"] = sum(r.default for r in records)
    stats["linked"] = sum(bool(r.links) for r in records)
    stats["through_recording_rules"] = sum(any(v.startswith("record:") for v in r.via) for r in records)
    read = {m for r in records for m in (r.raw_metrics or r.metrics)}
    stats["metrics_read"] = len(read)
    stats["metrics_read_unlinked"] = sorted(m for m in read if m not in index)
    return stats


STEP = THRESHOLDS_STEP = Step(
    name="thresholds",
    extract=extract_thresholds,
    scanners={Language.YAML: scan_yaml_thresholds, Language.JSON: scan_json_thresholds},
    records=THRESHOLDS,
    version="3",  # 3: CustomResourceDefinition documents are not read
    requires=(METRICS_STEP,),  # thresholds link to the metrics they read
)
