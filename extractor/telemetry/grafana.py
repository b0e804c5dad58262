"""Grafana dashboards: panel queries and their thresholds (current ``fieldConfig`` steps and the
legacy graph, singlestat, gauge and alert forms), from dashboard JSON files and from dashboards
embedded as JSON strings in YAML (a ConfigMap the Grafana sidecar loads).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from extractor.model import ParsedFile

_GRAFANA_DEFAULT = [{"color": "green", "value": None}, {"color": "red", "value": 80}]


class FileProblem(msgspec.Struct, frozen=True, array_like=True):
    """Why part of an operations file (a YAML document, a dashboard) was not read."""

    line: int
    code: str  # "json-error", "yaml-error", "yaml-limit", "grafana-old-schema"
    message: str


class PanelThreshold(msgspec.Struct, frozen=True, omit_defaults=True):
    """One threshold a panel draws (or alerts on)."""

    op: str  # ">=", ">", "<", "outside", "within"
    value: float
    color: str
    default: bool  # Grafana's own default steps (green, red at 80), left as they came
    form: str  # where it was written: "fieldConfig.steps:absolute", "graph", "singlestat", "legacy-alert", ...
    for_: str = msgspec.field(default="", name="for")  # a legacy alert's pending period


class Panel(msgspec.Struct, frozen=True):
    """A dashboard panel that queries something, with its thresholds."""

    title: str
    type: str
    exprs: tuple[str, ...]  # the PromQL of its targets
    thresholds: tuple[PanelThreshold, ...]
    line: int  # of its first query in the file (0 when not found)


class DashboardFacts(msgspec.Struct, frozen=True):
    """What one Grafana dashboard (a JSON file, or JSON embedded in YAML) says."""

    panels: tuple[Panel, ...] = ()
    diagnostics: tuple[FileProblem, ...] = ()
    title: str = ""


def looks_like_dashboard(text: str) -> bool:
    """A JSON object with panels (or the pre-5.0 rows) and queries: a string worth parsing."""
    return text.lstrip().startswith("{") and ('"panels"' in text or '"rows"' in text) and \
        ('"targets"' in text or '"expr"' in text)


def scan_json_thresholds(parsed: ParsedFile) -> DashboardFacts | None:
    data = parsed.data
    if not ((b'"panels"' in data or b'"rows"' in data) and (b'"targets"' in data or b'"expr"' in data)):
        return None
    return read_dashboard(parsed.text)


def read_dashboard(text: str, line_offset: int = 0) -> DashboardFacts | None:
    """Panels of the dashboard JSON ``text``; lines shifted by ``line_offset`` (the line before
    the text starts, for a dashboard embedded in another file)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        return DashboardFacts((), (FileProblem(err.lineno + line_offset, "json-error",
                                               f"JSON does not parse: {err.msg}"),))
    dashboard = document.get("dashboard", document) if isinstance(document, dict) else None
    if not isinstance(dashboard, dict):
        return None
    problems: list[FileProblem] = []
    panels: list[Panel] = []
    cursor = [0]
    if isinstance(dashboard.get("rows"), list):
        problems.append(FileProblem(_find_line(text, '"rows"', 0) + line_offset, "grafana-old-schema",
                                    f"dashboard schemaVersion {dashboard.get('schemaVersion', '?')} uses "
                                    "top-level rows (pre-5.0 layout); panels read from the rows"))
        for row in dashboard["rows"]:
            if isinstance(row, dict):
                _collect_panels(row.get("panels"), panels, text, cursor)
    _collect_panels(dashboard.get("panels"), panels, text, cursor)
    if not panels and not problems:
        return None
    if line_offset:
        panels = [msgspec.structs.replace(p, line=p.line + line_offset) if p.line else p for p in panels]
    return DashboardFacts(tuple(panels), tuple(problems), str(dashboard.get("title", "")))


def _find_line(text: str, needle: str, start: int) -> int:
    pos = text.find(needle, start)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 0


def _collect_panels(items: Any, out: list[Panel], text: str, cursor: list[int]) -> None:
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
            out.append(Panel(str(panel.get("title", "")), str(panel.get("type", "")), tuple(exprs),
                             tuple(_panel_thresholds(panel)), line))
        _collect_panels(panel.get("panels"), out, text, cursor)


def _panel_thresholds(panel: dict[str, Any]) -> list[PanelThreshold]:
    found: list[PanelThreshold] = []

    def add(op: str, value: Any, color: str, default: bool, form: str, for_: str = "") -> None:
        try:
            number = float(value)
        except OverflowError:  # an integer of 400 digits: no threshold anyone draws
            return
        found.append(PanelThreshold(op, number, color, default, form, for_))

    defaults = (panel.get("fieldConfig") or {}).get("defaults") or {}
    thresholds = defaults.get("thresholds") if isinstance(defaults, dict) else None
    if isinstance(thresholds, dict) and isinstance(thresholds.get("steps"), list):
        steps = thresholds["steps"]
        is_default = [{"color": s.get("color"), "value": s.get("value")} for s in steps if isinstance(s, dict)] \
            == _GRAFANA_DEFAULT
        mode = str(thresholds.get("mode", "absolute"))
        for step in steps:
            if isinstance(step, dict) and isinstance(step.get("value"), (int, float)):
                add(">=", step["value"], str(step.get("color", "")), is_default, f"fieldConfig.steps:{mode}")
    # Grafana 6 gauge/bar gauge: options.fieldOptions.thresholds = [{color, value}]
    legacy_steps = ((panel.get("options") or {}).get("fieldOptions") or {}).get("thresholds")
    if isinstance(legacy_steps, list):
        for step in legacy_steps:
            if isinstance(step, dict) and isinstance(step.get("value"), (int, float)):
                add(">=", step["value"], str(step.get("color", "")), False, "options.fieldOptions")
    legacy = panel.get("thresholds")
    if isinstance(legacy, list):  # graph panel: [{value, op: gt|lt, colorMode}]
        for item in legacy:
            if isinstance(item, dict) and isinstance(item.get("value"), (int, float)):
                add("<" if item.get("op") == "lt" else ">", item["value"], str(item.get("colorMode", "")), False,
                    "graph")
    elif isinstance(legacy, str) and legacy.strip():  # singlestat: "80,90"
        for part in legacy.split(","):
            try:
                number = float(part)
            except ValueError:
                continue
            add(">=", number, "", False, "singlestat")
    alert = panel.get("alert")
    if isinstance(alert, dict):  # legacy dashboard alerting
        for condition in alert.get("conditions") or []:
            evaluator = condition.get("evaluator") if isinstance(condition, dict) else None
            if isinstance(evaluator, dict) and evaluator.get("params"):
                op = {"gt": ">", "lt": "<", "outside_range": "outside", "within_range": "within"}.get(
                    str(evaluator.get("type")), str(evaluator.get("type")))
                value = evaluator["params"][0]
                if isinstance(value, (int, float)):
                    add(op, value, "alert", False, "legacy-alert", str(alert.get("for", "")))
    return found
