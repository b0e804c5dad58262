"""Per-file scanner for the YAML operators write: Prometheus rule groups (plain files and
PrometheusRule resources), HorizontalPodAutoscaler metrics (Pods, Object, External), KEDA
ScaledObject Prometheus triggers, prometheus-adapter rules, Alertmanager inhibit rules, and
Grafana dashboards embedded as JSON strings (a ConfigMap the Grafana sidecar loads). Helm
templates are read after their ``{{ }}`` directives are neutralised, line numbers kept. A
CustomResourceDefinition document (a resource's schema) is not read.

Every document is read with the bounded reader (:mod:`extractor.support.safeyaml`): an alias bomb in a
rules file is a diagnostic, not gigabytes.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from extractor.support import safeyaml
from extractor.model import ParsedFile
from extractor.telemetry.grafana import FileProblem, Panel, looks_like_dashboard, read_dashboard

_YAML_MARKERS = (b"groups:", b"HorizontalPodAutoscaler", b"seriesQuery", b"metricsQuery",
                 b"averageValue", b"averageUtilization", b"expr:", b"ScaledObject", b"inhibit_rules",
                 b'"panels"', b"triggers:")
_HPA_SOURCES = {"Pods": "pods", "Object": "object", "External": "external", "Resource": "resource",
                "ContainerResource": "containerResource"}
_TEMPLATE = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
# A CustomResourceDefinition is the schema of a resource: its `properties` name the fields a
# threshold would have (`averageValue`, `seriesQuery`, ...) and hold none. Kubernetes operators
# ship them by the megabyte (KServe: 44 MB of its 67 MB of YAML with a marker), and composing one
# costs a second per megabyte for nothing but false adapter rules.
_CRD_KIND = re.compile(r"^kind:[ \t]*([\"']?)CustomResourceDefinition\1[ \t]*(#.*)?$", re.M)
_CRD_API = re.compile(r"^apiVersion:[ \t]*[\"']?apiextensions\.k8s\.io/", re.M)
_DOCUMENT_END = re.compile(r"^\.\.\.", re.M)


# -- facts ---------------------------------------------------------------------------------------
# Text fields hold the YAML scalar as text ("" when absent); Helm placeholders (``__tpl0__``) stay
# in the text for the extract step to resolve against the chart's values.yaml.

class RuleFact(msgspec.Struct, frozen=True):
    """A Prometheus alerting or recording rule."""

    group: str
    alert: str
    record: str
    expr: str
    for_: str = msgspec.field(name="for")
    severity: str  # the `severity` label
    line: int


class HpaFact(msgspec.Struct, frozen=True):
    """One metric of a HorizontalPodAutoscaler and its target."""

    type: str  # "Pods", "Object", "External", "Resource", "ContainerResource"
    metric: str
    target_type: str  # autoscaling/v2 target.type ("AverageValue", "Utilization", ...)
    value_key: str  # the key that held the value ("averageValue", "targetAverageValue", ...)
    value: str
    line: int


class AdapterFact(msgspec.Struct, frozen=True):
    """A prometheus-adapter rule: the series it discovers, the name it exposes, its query."""

    series_query: str
    matches: str
    as_: str = msgspec.field(name="as")
    metrics_query: str
    line: int


class KedaFact(msgspec.Struct, frozen=True):
    """A KEDA ScaledObject trigger of type prometheus."""

    name: str
    query: str
    threshold: str  # the per-replica target
    activation: str  # activationThreshold
    line: int


class InhibitFact(msgspec.Struct, frozen=True):
    """An Alertmanager inhibit rule and the alert names its matchers name (`~regex` for a regex)."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    equal: tuple[str, ...]
    line: int


class OpsFacts(msgspec.Struct, frozen=True):
    """What one operations YAML file holds that production attaches to metrics."""

    rules: tuple[RuleFact, ...] = ()
    hpa: tuple[HpaFact, ...] = ()
    adapter: tuple[AdapterFact, ...] = ()
    keda: tuple[KedaFact, ...] = ()
    inhibit: tuple[InhibitFact, ...] = ()
    panels: tuple[Panel, ...] = ()  # of dashboards embedded as JSON strings
    diagnostics: tuple[FileProblem, ...] = ()
    placeholders: dict[str, str] = {}  # the Helm directives the facts above hold, by placeholder


class _Found:
    """The facts of one file while its documents are read."""

    def __init__(self) -> None:
        self.rules: list[RuleFact] = []
        self.hpa: list[HpaFact] = []
        self.adapter: list[AdapterFact] = []
        self.keda: list[KedaFact] = []
        self.inhibit: list[InhibitFact] = []
        self.panels: list[Panel] = []


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


def read_documents(text: str) -> tuple[list[yaml.Node], list[FileProblem]]:
    """Each ``---`` document composed alone, so one malformed document leaves the others readable."""
    nodes: list[yaml.Node] = []
    problems: list[FileProblem] = []
    lines = text.split("\n")
    starts = sorted({0, *(i for i, line in enumerate(lines) if re.match(r"^---(\s|$)", line))})
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        chunk = "\n" * start + "\n".join(lines[start:end])  # leading newlines keep line numbers
        if _is_schema(chunk):
            continue
        try:
            nodes.extend(safeyaml.compose_all(chunk))
        except safeyaml.YamlLimitError as err:
            mark = err.problem_mark
            problems.append(FileProblem((mark.line + 1) if mark else start + 1, "yaml-limit",
                                        f"YAML document not read: {err.problem}"))
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            problems.append(FileProblem((mark.line + 1) if mark else start + 1, "yaml-error",
                                        f"YAML does not parse: {getattr(err, 'problem', None) or err}"))
    return nodes, problems


def _is_schema(chunk: str) -> bool:
    """The chunk is one document, a CustomResourceDefinition (its top-level ``kind`` and
    ``apiVersion``, column 0)."""
    return bool(_CRD_KIND.search(chunk) and _CRD_API.search(chunk) and not _DOCUMENT_END.search(chunk))


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


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when the YAML holds a mapping there, else an empty one."""
    return value if isinstance(value, dict) else {}


def scalar_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def scan_yaml_thresholds(parsed: ParsedFile) -> OpsFacts | None:
    data = parsed.data
    if not any(marker in data for marker in _YAML_MARKERS):
        return None
    text, placeholders = neutralise_templates(parsed.text)
    nodes, problems = read_documents(text)
    facts = _Found()
    for node in nodes:
        try:
            doc = safeyaml.build(node, lines=True)
        except (yaml.YAMLError, ValueError) as err:
            # A scalar no safe constructor reads (``!Ref x``, ``!!type: ...``) or cannot convert
            # (an integer of 5,000 digits): that document is a diagnostic, the others are read.
            mark = getattr(err, "problem_mark", None) or node.start_mark
            problem = getattr(err, "problem", None) or str(err).split(":")[0]
            problems.append(FileProblem(mark.line + 1, "yaml-error", f"YAML value not read: {problem}"))
            continue
        for item in _walk(doc):
            if isinstance(item, dict):
                _read_mapping(item, facts)
        _embedded_dashboards(node, facts, problems)
    if not (facts.rules or facts.hpa or facts.adapter or facts.keda or facts.inhibit or facts.panels or problems):
        return None
    # the placeholders that the rules, HPA targets, adapter rules and KEDA triggers hold
    texts = [msgspec.json.encode(item) for items in (facts.rules, facts.hpa, facts.adapter, facts.keda)
             for item in items]
    used = {k: v for k, v in placeholders.items() if any(k.encode() in t for t in texts)}
    return OpsFacts(tuple(facts.rules), tuple(facts.hpa), tuple(facts.adapter), tuple(facts.keda),
                    tuple(facts.inhibit), tuple(facts.panels), tuple(problems), dict(sorted(used.items())))


def _read_mapping(node: dict[str, Any], facts: _Found) -> None:
    if isinstance(node.get("groups"), list):
        facts.rules.extend(_rule_facts(node["groups"]))
    kind = node.get("type")  # any value: a schema file's ``type:`` holds a mapping, which no dict key can be
    if isinstance(kind, str) and kind in _HPA_SOURCES and isinstance(node.get(_HPA_SOURCES[kind]), dict):
        facts.hpa.append(_hpa_fact(node))
    if "seriesQuery" in node or "metricsQuery" in node:
        facts.adapter.append(_adapter_fact(node))
    if node.get("kind") == "ScaledObject" and isinstance(node.get("spec"), dict):
        facts.keda.extend(_keda_facts(node))
    if isinstance(node.get("inhibit_rules"), list):
        facts.inhibit.extend(_inhibit_facts(node["inhibit_rules"]))


def _rule_facts(groups: list[Any]) -> list[RuleFact]:
    out = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("rules"), list):
            continue
        for rule in group["rules"]:
            if not isinstance(rule, dict) or "expr" not in rule:
                continue
            labels = _mapping(rule.get("labels"))
            out.append(RuleFact(scalar_text(group.get("name")), scalar_text(rule.get("alert")),
                                scalar_text(rule.get("record")), scalar_text(rule.get("expr")).strip(),
                                scalar_text(rule.get("for")), scalar_text(labels.get("severity")), _line(rule)))
    return out


def _hpa_fact(node: dict[str, Any]) -> HpaFact:
    kind = node["type"]
    source = node[_HPA_SOURCES[kind]]
    metric = _mapping(source.get("metric"))
    # autoscaling/v2 nests metric.name; v2beta1 used metricName beside the target; Resource uses name
    name = metric.get("name") if metric else (source.get("metricName") or source.get("name"))
    target = _mapping(source.get("target"))
    # autoscaling/v2beta1 kept the target beside the name (targetAverageValue, targetValue, ...)
    value_key, value = "", None
    for key in ("averageValue", "value", "averageUtilization", "targetAverageValue", "targetValue",
                "targetAverageUtilization"):
        holder = target if key in target else source
        if key in holder:
            value_key, value = key, holder[key]
            break
    return HpaFact(kind, scalar_text(name), scalar_text(target.get("type")), value_key, scalar_text(value),
                   _line(node))


def _adapter_fact(node: dict[str, Any]) -> AdapterFact:
    name = _mapping(node.get("name"))
    return AdapterFact(scalar_text(node.get("seriesQuery")), scalar_text(name.get("matches")),
                       scalar_text(name.get("as")), scalar_text(node.get("metricsQuery")), _line(node))


def _keda_facts(node: dict[str, Any]) -> list[KedaFact]:
    """KEDA ScaledObject triggers of type prometheus: the query, its threshold (the per-replica
    target) and activationThreshold (the value above which it scales from zero)."""
    metadata = _mapping(node.get("metadata"))
    out = []
    for index, trigger in enumerate(node["spec"].get("triggers") or []):
        if not isinstance(trigger, dict) or trigger.get("type") != "prometheus":
            continue
        meta = _mapping(trigger.get("metadata"))
        name = scalar_text(trigger.get("name") or meta.get("metricName")) or \
            f"{scalar_text(metadata.get('name'))}[{index}]"
        out.append(KedaFact(name, scalar_text(meta.get("query")).strip(), scalar_text(meta.get("threshold")),
                            scalar_text(meta.get("activationThreshold")), _line(trigger)))
    return out


def _inhibit_facts(rules: list[Any]) -> list[InhibitFact]:
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
            out.append(InhibitFact(tuple(sides["source"]), tuple(sides["target"]), tuple(equal), _line(rule)))
    return out


def _embedded_dashboards(root: yaml.Node, facts: _Found, problems: list[FileProblem]) -> None:
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
            for panel in dashboard.panels:
                if not panel.line or node.style not in ("|", ">"):
                    panel = msgspec.structs.replace(panel, line=node.start_mark.line + 1)
                facts.panels.append(panel)
            problems.extend(dashboard.diagnostics)
