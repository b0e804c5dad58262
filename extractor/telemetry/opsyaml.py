"""Per-file scanner for the YAML operators write: Prometheus rule groups (plain files and
PrometheusRule resources), HorizontalPodAutoscaler metrics (Pods, Object, External), KEDA
ScaledObject Prometheus triggers, prometheus-adapter rules, Alertmanager inhibit rules, and
Grafana dashboards embedded as JSON strings (a ConfigMap the Grafana sidecar loads). Helm
templates are read after their ``{{ }}`` directives are neutralised, line numbers kept.

Every document is read with the bounded reader (:mod:`extractor.support.safeyaml`): an alias bomb in a
rules file is a diagnostic, not gigabytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from extractor.support import safeyaml
from extractor.model import ParsedFile
from extractor.telemetry.grafana import looks_like_dashboard, read_dashboard

_YAML_MARKERS = (b"groups:", b"HorizontalPodAutoscaler", b"seriesQuery", b"metricsQuery",
                 b"averageValue", b"averageUtilization", b"expr:", b"ScaledObject", b"inhibit_rules",
                 b'"panels"', b"triggers:")
_HPA_SOURCES = {"Pods": "pods", "Object": "object", "External": "external", "Resource": "resource",
                "ContainerResource": "containerResource"}
_TEMPLATE = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)


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


def _documents(text: str) -> tuple[list[yaml.Node], list[dict[str, Any]]]:
    """Each ``---`` document composed alone, so one malformed document leaves the others readable."""
    nodes: list[yaml.Node] = []
    problems: list[dict[str, Any]] = []
    lines = text.split("\n")
    starts = sorted({0, *(i for i, line in enumerate(lines) if re.match(r"^---(\s|$)", line))})
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        chunk = "\n" * start + "\n".join(lines[start:end])  # leading newlines keep line numbers
        try:
            nodes.extend(safeyaml.compose_all(chunk))
        except safeyaml.YamlLimitError as err:
            mark = err.problem_mark
            problems.append({"line": (mark.line + 1) if mark else start + 1, "code": "yaml-limit",
                             "message": f"YAML document not read: {err.problem}"})
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            problems.append({"line": (mark.line + 1) if mark else start + 1, "code": "yaml-error",
                             "message": f"YAML does not parse: {getattr(err, 'problem', None) or err}"})
    return nodes, problems


def _walk(value: Any):
    stack = [value]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, dict):
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            stack.extend(reversed(current))


def _line(value: Any, fallback: int = 0) -> int:
    return getattr(value, "line", 0) or fallback


def scalar_text(value: Any) -> str:
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
    nodes, problems = _documents(text)
    facts: dict[str, list[dict[str, Any]]] = {"rules": [], "hpa": [], "adapter": [], "keda": [], "inhibit": [],
                                              "panels": []}
    for node in nodes:
        try:
            doc = safeyaml.build(node, lines=True)
        except (yaml.YAMLError, ValueError) as err:
            # A scalar no safe constructor reads (``!Ref x``, ``!!type: ...``) or cannot convert
            # (an integer of 5,000 digits): that document is a diagnostic, the others are read.
            mark = getattr(err, "problem_mark", None) or node.start_mark
            problem = getattr(err, "problem", None) or str(err).split(":")[0]
            problems.append({"line": mark.line + 1, "code": "yaml-error", "message": f"YAML value not read: {problem}"})
            continue
        for item in _walk(doc):
            if isinstance(item, dict):
                _read_mapping(item, facts)
        _embedded_dashboards(node, facts, problems)
    if not any(facts.values()) and not problems:
        return None
    found = [item for key in ("rules", "hpa", "adapter", "keda") for item in facts[key]]
    used = {k: v for k, v in placeholders.items() if any(k in json.dumps(item) for item in found)}
    return {**facts, "diagnostics": problems, "placeholders": dict(sorted(used.items()))}


def _read_mapping(node: dict[str, Any], facts: dict[str, list[dict[str, Any]]]) -> None:
    if isinstance(node.get("groups"), list):
        facts["rules"].extend(_rule_facts(node["groups"]))
    if node.get("type") in _HPA_SOURCES and isinstance(node.get(_HPA_SOURCES[node["type"]]), dict):
        facts["hpa"].append(_hpa_fact(node))
    if "seriesQuery" in node or "metricsQuery" in node:
        facts["adapter"].append(_adapter_fact(node))
    if node.get("kind") == "ScaledObject" and isinstance(node.get("spec"), dict):
        facts["keda"].extend(_keda_facts(node))
    if isinstance(node.get("inhibit_rules"), list):
        facts["inhibit"].extend(_inhibit_facts(node["inhibit_rules"]))


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
                "group": scalar_text(group.get("name")),
                "alert": scalar_text(rule.get("alert")),
                "record": scalar_text(rule.get("record")),
                "expr": scalar_text(rule.get("expr")).strip(),
                "for": scalar_text(rule.get("for")),
                "severity": scalar_text(labels.get("severity")),
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
    return {"type": kind, "metric": scalar_text(name), "target_type": scalar_text(target.get("type")),
            "value_key": value_key, "value": scalar_text(value), "line": _line(node)}


def _adapter_fact(node: dict[str, Any]) -> dict[str, Any]:
    name = node.get("name") if isinstance(node.get("name"), dict) else {}
    return {"seriesQuery": scalar_text(node.get("seriesQuery")),
            "matches": scalar_text(name.get("matches")), "as": scalar_text(name.get("as")),
            "metricsQuery": scalar_text(node.get("metricsQuery")), "line": _line(node)}


def _keda_facts(node: dict[str, Any]) -> list[dict[str, Any]]:
    """KEDA ScaledObject triggers of type prometheus: the query, its threshold (the per-replica
    target) and activationThreshold (the value above which it scales from zero)."""
    metadata = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
    out = []
    for index, trigger in enumerate(node["spec"].get("triggers") or []):
        if not isinstance(trigger, dict) or trigger.get("type") != "prometheus":
            continue
        meta = trigger.get("metadata") if isinstance(trigger.get("metadata"), dict) else {}
        name = scalar_text(trigger.get("name") or meta.get("metricName")) or \
            f"{scalar_text(metadata.get('name'))}[{index}]"
        out.append({"name": name, "query": scalar_text(meta.get("query")).strip(),
                    "threshold": scalar_text(meta.get("threshold")),
                    "activation": scalar_text(meta.get("activationThreshold")),
                    "line": _line(trigger)})
    return out


def _inhibit_facts(rules: list[Any]) -> list[dict[str, Any]]:
    """Alertmanager inhibit rules, with the alert names their matchers name."""
    out = []
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        sides = {}
        for side in ("source", "target"):
            names = []
            match = rule.get(f"{side}_match")
            if isinstance(match, dict) and match.get("alertname"):
                names.append(scalar_text(match["alertname"]))
            for matcher in rule.get(f"{side}_matchers") or []:
                found = re.match(r'\s*alertname\s*=\s*"?([^"]+?)"?\s*$', scalar_text(matcher))
                if found:
                    names.append(found.group(1))
            regex = rule.get(f"{side}_match_re")
            if isinstance(regex, dict) and regex.get("alertname"):
                names.append("~" + scalar_text(regex["alertname"]))
            sides[side] = names
        equal = [scalar_text(e) for e in rule.get("equal") or []]
        if sides["source"] or sides["target"]:
            out.append({"source": sides["source"], "target": sides["target"], "equal": equal,
                        "line": _line(rule)})
    return out


def _embedded_dashboards(root: yaml.Node, facts: dict[str, list[dict[str, Any]]],
                         problems: list[dict[str, Any]]) -> None:
    """Dashboards held as JSON strings in YAML (ConfigMap ``data``, Helm values)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) and looks_like_dashboard(node.value):
            # A block scalar's text starts on the line after its indicator; a quoted string is one line.
            offset = node.start_mark.line + 1 if node.style in ("|", ">") else node.start_mark.line
            dashboard = read_dashboard(node.value, offset)
            if dashboard is None:
                continue
            for panel in dashboard["panels"]:
                if not panel["line"] or node.style not in ("|", ">"):
                    panel["line"] = node.start_mark.line + 1
                facts["panels"].append(panel)
            problems.extend(dashboard["diagnostics"])
