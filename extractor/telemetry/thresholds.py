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

import json
import re
from collections import Counter as Tally
from pathlib import PurePosixPath
from typing import Any

import yaml

from extractor.context import Context
from extractor.model import Contribution, Diagnostic, Language, ParsedFile, Severity, Step
from extractor.telemetry.promql import analyse
from extractor.telemetry.records import SourceKind, Threshold

_YAML_MARKERS = (b"groups:", b"HorizontalPodAutoscaler", b"seriesQuery", b"metricsQuery",
                 b"averageValue", b"averageUtilization", b"expr:")
_HPA_SOURCES = {"Pods": "pods", "Object": "object", "External": "external", "Resource": "resource",
                "ContainerResource": "containerResource"}
_TEMPLATE = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
_GRAFANA_DEFAULT = [{"color": "green", "value": None}, {"color": "red", "value": 80}]


# -- YAML with line numbers --------------------------------------------------------------------

class _Map(dict):
    """A mapping that remembers the 1-based line it started on."""

    line = 0


class _Seq(list):
    line = 0


def _to_python(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = _Map()
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = _to_python(key_node)
            out[key if isinstance(key, (str, int, float, bool)) or key is None else str(key)] = _to_python(value_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = _Seq(_to_python(v) for v in node.value)
        seq.line = node.start_mark.line + 1
        return seq
    return _SCALARS.construct_object(node, deep=True)


_SCALARS = yaml.constructor.SafeConstructor()


def neutralise_templates(text: str) -> tuple[str, dict[str, str]]:
    """Replace Helm/Go-template directives so the rest parses as YAML, keeping every line number.

    A directive alone on its line (``{{- if ... }}``, ``{{ include ... | nindent 4 }}``) becomes a
    blank line; one inside a value becomes a placeholder token ``__tplN__`` whose text is kept, so
    ``averageValue: {{ .Values.x }}`` can still be resolved against ``values.yaml``.
    """
    placeholders: dict[str, str] = {}
    out_lines: list[str] = []
    # Multi-line directives: blank them but keep their newlines.
    text = _TEMPLATE.sub(lambda m: m.group(0) if "\n" not in m.group(0) else "\n" * m.group(0).count("\n"), text)
    for line in text.split("\n"):
        if _TEMPLATE.search(line) and not _TEMPLATE.sub("", line).strip():
            out_lines.append("")
            continue

        def replace(match: re.Match) -> str:
            key = f"__tpl{len(placeholders)}__"
            placeholders[key] = match.group(1).strip()
            return key

        out_lines.append(_TEMPLATE.sub(replace, line))
    return "\n".join(out_lines), placeholders


def _yaml_documents(text: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """Each ``---`` document parsed alone, so one malformed document leaves the others readable."""
    docs: list[Any] = []
    problems: list[dict[str, Any]] = []
    lines = text.split("\n")
    starts = [0] + [i for i, line in enumerate(lines) if re.match(r"^---(\s|$)", line)]
    starts = sorted(set(starts))
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        chunk = "\n" * start + "\n".join(lines[start:end])  # leading newlines keep line numbers
        try:
            for node in yaml.compose_all(chunk, Loader=yaml.SafeLoader):
                if node is not None:
                    docs.append(_to_python(node))
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            problems.append({"line": (mark.line + 1) if mark else start + 1, "code": "yaml-error",
                             "message": f"YAML does not parse: {getattr(err, 'problem', None) or err}"})
    return docs, problems


def _walk(value: Any):
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def _line(value: Any, fallback: int = 0) -> int:
    return getattr(value, "line", 0) or fallback


def _scalar_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def scan_yaml_thresholds(parsed: ParsedFile) -> dict[str, Any] | None:
    data = parsed.data
    if not any(marker in data for marker in _YAML_MARKERS):
        return None
    text, placeholders = neutralise_templates(parsed.text)
    docs, problems = _yaml_documents(text)
    rules: list[dict[str, Any]] = []
    hpa: list[dict[str, Any]] = []
    adapter: list[dict[str, Any]] = []
    for doc in docs:
        for node in _walk(doc):
            if not isinstance(node, dict):
                continue
            if isinstance(node.get("groups"), list):
                rules.extend(_rule_facts(node["groups"]))
            if node.get("type") in _HPA_SOURCES and isinstance(node.get(_HPA_SOURCES[node["type"]]), dict):
                hpa.append(_hpa_fact(node))
            if "seriesQuery" in node or "metricsQuery" in node:
                adapter.append(_adapter_fact(node))
    if not (rules or hpa or adapter or problems):
        return None
    used = {k: v for k, v in placeholders.items()
            if any(k in json.dumps(item) for item in rules + hpa + adapter)}
    return {"rules": rules, "hpa": hpa, "adapter": adapter, "diagnostics": problems,
            "placeholders": dict(sorted(used.items()))}


def _rule_facts(groups: list[Any]) -> list[dict[str, Any]]:
    out = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("rules"), list):
            continue
        for rule in group["rules"]:
            if not isinstance(rule, dict) or "expr" not in rule:
                continue
            labels = rule.get("labels") if isinstance(rule.get("labels"), dict) else {}
            out.append({
                "group": _scalar_text(group.get("name")),
                "alert": _scalar_text(rule.get("alert")),
                "record": _scalar_text(rule.get("record")),
                "expr": _scalar_text(rule.get("expr")).strip(),
                "for": _scalar_text(rule.get("for")),
                "severity": _scalar_text(labels.get("severity")),
                "line": _line(rule),
            })
    return out


def _hpa_fact(node: dict[str, Any]) -> dict[str, Any]:
    kind = node["type"]
    source = node[_HPA_SOURCES[kind]]
    metric = source.get("metric") if isinstance(source.get("metric"), dict) else {}
    # autoscaling/v2 nests metric.name; v2beta1 used metricName beside the target; Resource uses name
    name = metric.get("name") if metric else (source.get("metricName") or source.get("name"))
    target = source.get("target") if isinstance(source.get("target"), dict) else {}
    # autoscaling/v2beta1 kept the target beside the name (targetAverageValue, targetValue, ...)
    value_key, value = "", None
    for key in ("averageValue", "value", "averageUtilization", "targetAverageValue", "targetValue",
                "targetAverageUtilization"):
        holder = target if key in target else source
        if key in holder:
            value_key, value = key, holder[key]
            break
    return {"type": kind, "metric": _scalar_text(name), "target_type": _scalar_text(target.get("type")),
            "value_key": value_key, "value": _scalar_text(value), "line": _line(node)}


def _adapter_fact(node: dict[str, Any]) -> dict[str, Any]:
    name = node.get("name") if isinstance(node.get("name"), dict) else {}
    return {"seriesQuery": _scalar_text(node.get("seriesQuery")),
            "matches": _scalar_text(name.get("matches")), "as": _scalar_text(name.get("as")),
            "metricsQuery": _scalar_text(node.get("metricsQuery")), "line": _line(node)}


# -- Grafana dashboards -----------------------------------------------------------------------

def scan_json_thresholds(parsed: ParsedFile) -> dict[str, Any] | None:
    data = parsed.data
    if not ((b'"panels"' in data or b'"rows"' in data) and (b'"targets"' in data or b'"expr"' in data)):
        return None
    text = parsed.text
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        return {"panels": [], "diagnostics": [{"line": err.lineno, "code": "json-error",
                                               "message": f"JSON does not parse: {err.msg}"}]}
    dashboard = document.get("dashboard", document) if isinstance(document, dict) else None
    if not isinstance(dashboard, dict):
        return None
    problems: list[dict[str, Any]] = []
    panels: list[dict[str, Any]] = []
    cursor = [0]
    if isinstance(dashboard.get("rows"), list):
        problems.append({"line": _find_line(text, '"rows"', 0), "code": "grafana-old-schema",
                         "message": f"dashboard schemaVersion {dashboard.get('schemaVersion', '?')} uses "
                                    "top-level rows (pre-5.0 layout); panels read from the rows"})
        for row in dashboard["rows"]:
            if isinstance(row, dict):
                _collect_panels(row.get("panels"), panels, text, cursor)
    _collect_panels(dashboard.get("panels"), panels, text, cursor)
    if not panels and not problems:
        return None
    return {"panels": panels, "diagnostics": problems, "title": str(dashboard.get("title", "")),
            "schema": dashboard.get("schemaVersion")}


def _find_line(text: str, needle: str, start: int) -> int:
    pos = text.find(needle, start)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 0


def _collect_panels(items: Any, out: list[dict[str, Any]], text: str, cursor: list[int]) -> None:
    if not isinstance(items, list):
        return
    for panel in items:
        if not isinstance(panel, dict):
            continue
        exprs = []
        for target in panel.get("targets") or []:
            if isinstance(target, dict):
                expr = target.get("expr") or target.get("query")
                if isinstance(expr, str) and expr.strip():
                    exprs.append(expr)
        line = 0
        if exprs:
            needle = json.dumps(exprs[0])
            pos = text.find(needle, cursor[0])
            if pos < 0:
                pos = text.find(needle)
            if pos >= 0:
                line = text.count("\n", 0, pos) + 1
                cursor[0] = pos + 1
        if exprs:
            out.append({"title": str(panel.get("title", "")), "type": str(panel.get("type", "")),
                        "exprs": exprs, "thresholds": _panel_thresholds(panel), "line": line})
        _collect_panels(panel.get("panels"), out, text, cursor)


def _panel_thresholds(panel: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
    thresholds = defaults.get("thresholds") if isinstance(defaults, dict) else None
    if isinstance(thresholds, dict) and isinstance(thresholds.get("steps"), list):
        steps = thresholds["steps"]
        is_default = [{"color": s.get("color"), "value": s.get("value")} for s in steps if isinstance(s, dict)] \
            == _GRAFANA_DEFAULT
        mode = str(thresholds.get("mode", "absolute"))
        for step in steps:
            if isinstance(step, dict) and isinstance(step.get("value"), (int, float)):
                found.append({"op": ">=", "value": step["value"], "color": str(step.get("color", "")),
                              "default": is_default, "form": f"fieldConfig.steps:{mode}"})
    # Grafana 6 gauge/bar gauge: options.fieldOptions.thresholds = [{color, value}]
    legacy_steps = ((panel.get("options") or {}).get("fieldOptions") or {}).get("thresholds")
    if isinstance(legacy_steps, list):
        for step in legacy_steps:
            if isinstance(step, dict) and isinstance(step.get("value"), (int, float)):
                found.append({"op": ">=", "value": step["value"], "color": str(step.get("color", "")),
                              "default": False, "form": "options.fieldOptions"})
    legacy = panel.get("thresholds")
    if isinstance(legacy, list):  # graph panel: [{value, op: gt|lt, colorMode}]
        for item in legacy:
            if isinstance(item, dict) and isinstance(item.get("value"), (int, float)):
                found.append({"op": "<" if item.get("op") == "lt" else ">", "value": item["value"],
                              "color": str(item.get("colorMode", "")), "default": False, "form": "graph"})
    elif isinstance(legacy, str) and legacy.strip():  # singlestat: "80,90"
        for part in legacy.split(","):
            try:
                found.append({"op": ">=", "value": float(part), "color": "", "default": False,
                              "form": "singlestat"})
            except ValueError:
                continue
    alert = panel.get("alert")
    if isinstance(alert, dict):  # legacy dashboard alerting
        for condition in alert.get("conditions") or []:
            evaluator = condition.get("evaluator") if isinstance(condition, dict) else None
            if isinstance(evaluator, dict) and evaluator.get("params"):
                op = {"gt": ">", "lt": "<", "outside_range": "outside", "within_range": "within"}.get(
                    str(evaluator.get("type")), str(evaluator.get("type")))
                value = evaluator["params"][0]
                if isinstance(value, (int, float)):
                    found.append({"op": op, "value": value, "color": "alert", "default": False,
                                  "form": "legacy-alert", "for": str(alert.get("for", ""))})
    return found


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
    contribution = ctx.results.get("metrics")
    for record in contribution.records if contribution is not None else ():
        for exposed in getattr(record, "exposed_names", ()):
            index.setdefault(exposed, set()).add(record.name)
    return index


def _links(metrics: tuple[str, ...], index: dict[str, set[str]]) -> tuple[str, ...]:
    return tuple(sorted({name for m in metrics for name in index.get(m, ())}))


def _values_lookup(ctx: Context, path: str, expression: str) -> str | None:
    """``.Values.a.b`` from the chart's values.yaml (the directory above ``templates/``)."""
    match = re.fullmatch(r"\.Values\.([A-Za-z0-9_.\-]+)", expression.strip())
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
                values = yaml.safe_load(ctx.abs_path(file).read_text(encoding="utf-8", errors="replace"))
            except (OSError, yaml.YAMLError):
                return None
            for key in match.group(1).split("."):
                if not isinstance(values, dict) or key not in values:
                    return None
                values = values[key]
            return None if isinstance(values, (dict, list)) else _scalar_text(values)
    return None


def _adapter_queries(rule: dict[str, Any]) -> tuple[str, str]:
    """The adapter rule's exposed name and its metricsQuery with the templates filled in."""
    series = analyse(rule["seriesQuery"]).metrics if rule["seriesQuery"] else ()
    series_name = series[0] if len(series) == 1 else ""
    exposed = rule["as"] or rule["matches"] or series_name
    if rule["matches"] and rule["as"] and series_name:
        try:
            exposed = re.sub(rule["matches"], rule["as"].replace("${", "\\g<").replace("}", ">")
                             .replace("$", "\\"), series_name)
        except re.error:
            exposed = rule["as"]
    query = rule["metricsQuery"].replace("<<.Series>>", series_name or "__series__")
    query = re.sub(r"\{?<<\.LabelMatchers>>\}?", "", query)
    query = query.replace("<<.GroupBy>>", "pod")
    return exposed, query


def extract_thresholds(ctx: Context) -> Contribution:
    index = _exposed_index(ctx)
    records: list[Threshold] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()

    def analysed(expr: str, path: str, line: int):
        result = analyse(expr)
        if result.error:
            diagnostics.append(Diagnostic(path, line, "promql-unknown",
                                          f"PromQL not fully understood ({result.error}): {expr[:120]!r}",
                                          Severity.WARNING))
            stats["promql_unknown"] += 1
        return result

    adapters: dict[str, tuple[str, tuple[str, ...], str, int]] = {}
    yaml_files = list(ctx.facts("thresholds", Language.YAML))
    for file, facts in yaml_files:
        for rule in facts.get("adapter", []):
            exposed, query = _adapter_queries(rule)
            result = analysed(query, file.path, rule["line"])
            adapters[exposed] = (query, result.metrics, file.path, rule["line"])
            records.append(Threshold(
                path=file.path, line=rule["line"], source_kind=SourceKind.ADAPTER, name=exposed,
                expr=rule["metricsQuery"], metrics=result.metrics, op="", value=None,
                links=_links(result.metrics, index)))

    for file, facts in yaml_files:
        for problem in facts.get("diagnostics", []):
            diagnostics.append(Diagnostic(file.path, problem["line"], problem["code"], problem["message"]))
        for rule in facts.get("rules", []):
            result = analysed(rule["expr"], file.path, rule["line"])
            records.append(Threshold(
                path=file.path, line=rule["line"], source_kind=SourceKind.PROMETHEUS_RULE,
                name=rule["alert"] or rule["record"], expr=rule["expr"], metrics=result.metrics,
                op=result.op, value=result.value, for_=rule["for"], severity=rule["severity"],
                links=_links(result.metrics, index)))
        placeholders = facts.get("placeholders", {})
        for hpa in facts.get("hpa", []):
            value_text = hpa["value"]
            for key, expression in placeholders.items():
                if key in value_text:
                    resolved = _values_lookup(ctx, file.path, expression)
                    value_text = value_text.replace(key, resolved if resolved is not None else "{{ %s }}" % expression)
            metric = hpa["metric"]
            for key, expression in placeholders.items():
                metric = metric.replace(key, "{{ %s }}" % expression)
            via: tuple[str, ...] = ()
            # cpu/memory targets are Kubernetes resource metrics, not Prometheus series
            is_resource = hpa["type"] in ("Resource", "ContainerResource")
            metrics: tuple[str, ...] = (metric,) if metric and not is_resource else ()
            if metric in adapters:
                query, read, adapter_path, adapter_line = adapters[metric]
                via = (f"adapter:{metric}@{adapter_path}:{adapter_line}",)
                metrics = read
            records.append(Threshold(
                path=file.path, line=hpa["line"], source_kind=SourceKind.HPA, name=metric,
                expr=f"{hpa['type']} {hpa['target_type'] or hpa['value_key']}".strip(),
                metrics=metrics, op="target", value=parse_quantity(value_text),
                severity="", links=_links(metrics, index), via=via))
            if parse_quantity(value_text) is None:
                diagnostics.append(Diagnostic(file.path, hpa["line"], "hpa-target-unresolved",
                                              f"HPA target {hpa['value_key']}={value_text!r} is not a number",
                                              Severity.INFO))

    for file, facts in ctx.facts("thresholds", Language.JSON):
        for problem in facts.get("diagnostics", []):
            diagnostics.append(Diagnostic(file.path, problem["line"], problem["code"], problem["message"]))
        for panel in facts.get("panels", []):
            metrics: set[str] = set()
            for expr in panel["exprs"]:
                metrics.update(analysed(expr, file.path, panel["line"]).metrics)
            read = tuple(sorted(metrics))
            common = dict(path=file.path, line=panel["line"], source_kind=SourceKind.GRAFANA,
                          name=panel["title"], expr="\n".join(panel["exprs"]), metrics=read,
                          links=_links(read, index))
            if not panel["thresholds"]:
                records.append(Threshold(op="", value=None, **common))  # what the panel reads
            for step in panel["thresholds"]:
                records.append(Threshold(op=step["op"], value=float(step["value"]),
                                         severity=step["color"], default=step["default"],
                                         for_=step.get("for", ""), **common))

    # An explicit key: dataclass ordering would compare a None value with a float and raise.
    records.sort(key=lambda r: (r.path, r.line, r.source_kind.value, r.name, r.op,
                                float("-inf") if r.value is None else r.value, r.severity, r.expr))
    stats["thresholds"] = len(records)
    stats["by_source_kind"] = dict(sorted(Tally(r.source_kind.value for r in records).items()))
    stats["with_value"] = sum(r.value is not None for r in records)
    stats["grafana_default"] = sum(r.default for r in records)
    stats["linked"] = sum(bool(r.links) for r in records)
    read = {m for r in records for m in r.metrics}
    stats["metrics_read"] = len(read)
    stats["metrics_read_unlinked"] = sorted(m for m in read if m not in index)
    return Contribution(records=tuple(records), diagnostics=tuple(sorted(diagnostics)),
                        stats=dict(stats))


STEP = THRESHOLDS_STEP = Step(
    name="thresholds",
    extract=extract_thresholds,
    scanners={Language.YAML: scan_yaml_thresholds, Language.JSON: scan_json_thresholds},
    bundle_key="thresholds",
    version="1",
)
