"""Grafana dashboards: panel queries and their thresholds (current ``fieldConfig`` steps and the
legacy graph, singlestat, gauge and alert forms), from dashboard JSON files and from dashboards
embedded as JSON strings in YAML (a ConfigMap the Grafana sidecar loads).
"""

from __future__ import annotations

import json
from typing import Any

from extractor.model import ParsedFile

_GRAFANA_DEFAULT = [{"color": "green", "value": None}, {"color": "red", "value": 80}]


def looks_like_dashboard(text: str) -> bool:
    """A JSON object with panels (or the pre-5.0 rows) and queries: a string worth parsing."""
    return text.lstrip().startswith("{") and ('"panels"' in text or '"rows"' in text) and \
        ('"targets"' in text or '"expr"' in text)


def scan_json_thresholds(parsed: ParsedFile) -> dict[str, Any] | None:
    data = parsed.data
    if not ((b'"panels"' in data or b'"rows"' in data) and (b'"targets"' in data or b'"expr"' in data)):
        return None
    return read_dashboard(parsed.text)


def read_dashboard(text: str, line_offset: int = 0) -> dict[str, Any] | None:
    """Panels of the dashboard JSON ``text``; lines shifted by ``line_offset`` (the line before
    the text starts, for a dashboard embedded in another file)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        return {"panels": [], "diagnostics": [{"line": err.lineno + line_offset, "code": "json-error",
                                               "message": f"JSON does not parse: {err.msg}"}]}
    dashboard = document.get("dashboard", document) if isinstance(document, dict) else None
    if not isinstance(dashboard, dict):
        return None
    problems: list[dict[str, Any]] = []
    panels: list[dict[str, Any]] = []
    cursor = [0]
    if isinstance(dashboard.get("rows"), list):
        problems.append({"line": _find_line(text, '"rows"', 0) + line_offset, "code": "grafana-old-schema",
                         "message": f"dashboard schemaVersion {dashboard.get('schemaVersion', '?')} uses "
                                    "top-level rows (pre-5.0 layout); panels read from the rows"})
        for row in dashboard["rows"]:
            if isinstance(row, dict):
                _collect_panels(row.get("panels"), panels, text, cursor)
    _collect_panels(dashboard.get("panels"), panels, text, cursor)
    if not panels and not problems:
        return None
    for panel in panels:
        panel["line"] += line_offset if panel["line"] else 0
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
