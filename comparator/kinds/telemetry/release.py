"""A release's metric changes (what breaks dashboards and alerts), the thresholds that stop
working, and the thresholds added, removed or changed, over two telemetry summaries (:mod:`.summary`).

A change is one metric name: a metric's twins (its Ray series) go with it and are named on its
row, never counted as a second change; a twin that comes or goes while its metric stays is a
change of its own (``twins_changed``). A row says whose the metric is (``origin``: "" for the
system's own, else the library that provides the series), so a change that is only a library's
reads as such.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

RENAME_SIMILARITY = 0.8  # difflib ratio above which a removed+added metric pair of one type is a rename
# Pairs of a removed and an added metric compared for a rename. A real release changes a few dozen
# metrics; evidence with thousands on each side would cost hours of string matching, so beyond this
# renames are not looked for (and the findings say so).
RENAME_PAIRS = 250_000


def _by_name(tele: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each metric name of one side: its first definition, whose it is, and its twins' libraries.
    A name the code defines itself is its own even when a library also provides it."""
    out: dict[str, dict[str, Any]] = {}
    for row in (*tele["metrics"], *tele["library_metrics"]):
        out.setdefault(row["name"], {"row": row, "origin": row["origin"], "twins": set()})
    for twin in tele["twins"]:
        entry = out.get(twin["twin_of"]["name"])
        if entry is not None:
            entry["twins"].add(twin["library"])
    return out


def _metric_ref(entry: Mapping[str, Any]) -> dict[str, Any]:
    m = entry["row"]
    return {"name": m["name"], "type": m["type"], "origin": entry["origin"], "twins": sorted(entry["twins"]),
            "path": m["path"], "line": m["line"]}


def diff_metrics(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> dict[str, Any]:
    """Metrics added, removed, renamed (same type and origin, similar name) and retyped between
    releases, and twins that came or went beside a metric that stayed."""
    ma, mb = _by_name(ta), _by_name(tb)
    removed_names = sorted(set(ma) - set(mb))
    added_names = sorted(set(mb) - set(ma))
    candidates = []
    searched = len(removed_names) * len(added_names) <= RENAME_PAIRS
    for r in removed_names if searched else ():
        for n in added_names:
            if ma[r]["row"]["type"] != mb[n]["row"]["type"] or ma[r]["origin"] != mb[n]["origin"]:
                continue
            matcher = difflib.SequenceMatcher(None, r, n)
            if matcher.real_quick_ratio() < RENAME_SIMILARITY or matcher.quick_ratio() < RENAME_SIMILARITY:
                continue  # upper bounds of the ratio: most pairs stop here
            ratio = matcher.ratio()
            if ratio >= RENAME_SIMILARITY:
                candidates.append((-ratio, r, n))
    renamed, used_r, used_n = [], set(), set()
    for neg, r, n in sorted(candidates):
        if r in used_r or n in used_n:
            continue
        used_r.add(r)
        used_n.add(n)
        renamed.append({"from": _metric_ref(ma[r]), "to": _metric_ref(mb[n]), "similarity": round(-neg, 3),
                        "origin": mb[n]["origin"], "breaking": True})
    both = sorted(set(ma) & set(mb))
    retyped = [{"name": n, "old_type": ma[n]["row"]["type"], "new_type": mb[n]["row"]["type"],
                "origin": mb[n]["origin"], "old_location": {"path": ma[n]["row"]["path"], "line": ma[n]["row"]["line"]},
                "breaking": True, "path": mb[n]["row"]["path"], "line": mb[n]["row"]["line"]}
               for n in both if ma[n]["row"]["type"] != mb[n]["row"]["type"]]
    twins_changed = [{"name": n, "added": sorted(mb[n]["twins"] - ma[n]["twins"]),
                      "removed": sorted(ma[n]["twins"] - mb[n]["twins"]),
                      "breaking": bool(ma[n]["twins"] - mb[n]["twins"]),
                      "path": mb[n]["row"]["path"], "line": mb[n]["row"]["line"]}
                     for n in both if ma[n]["twins"] != mb[n]["twins"]]
    out = {
        "added": [dict(_metric_ref(mb[n]), breaking=False) for n in added_names if n not in used_n],
        "removed": [dict(_metric_ref(ma[n]), breaking=True) for n in removed_names if n not in used_r],
        "renamed": sorted(renamed, key=lambda r: r["from"]["name"]),
        "retyped": retyped,
        "twins_changed": twins_changed,
    }
    if not searched:
        out["renames_not_searched"] = (f"{len(removed_names):,} removed x {len(added_names):,} added metrics "
                                       f"exceed {RENAME_PAIRS:,} pairs")
    return out


def _series(tele: Mapping[str, Any]) -> dict[str, str]:
    """Every series a scrape of the system shows -> whose it is ("" own, else the library; a
    twin's series are its library's)."""
    out: dict[str, str] = {}
    for row in (*tele["metrics"], *tele["twins"], *tele["library_metrics"]):
        whose = row["origin"] or (row["library"] if row["provenance"] == "twin" else "")
        for name in (row["name"], *row["exposed_names"]):
            if row["provenance"] == "twin" and name == row["name"]:
                continue  # a twin's registered name is its metric's; only its own series are its
            out[name] = "" if out.get(name) == "" else whose
    return out


def _series_renames(metrics: Mapping[str, Any], ta: Mapping[str, Any], tb: Mapping[str, Any]) -> dict[str, str]:
    """Old series name -> new series name, for each series of a renamed metric (``x_bucket`` of a
    histogram renamed ``x`` -> ``y`` is ``y_bucket``): what a threshold on the old name must read now."""
    ma, mb = _by_name(ta), _by_name(tb)
    out: dict[str, str] = {}
    for r in metrics["renamed"]:
        old, new = r["from"]["name"], r["to"]["name"]
        new_series = set(mb[new]["row"]["exposed_names"])
        for series in (old, *ma[old]["row"]["exposed_names"]):
            if series.startswith(old) and new + series[len(old):] in new_series | {new}:
                out[series] = new + series[len(old):]
    return out


def orphaned_thresholds(ta: Mapping[str, Any], tb: Mapping[str, Any],
                        metrics: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Thresholds (of either release) that read a series the old release exposed and the new does
    not: in their expression, behind the recording rules they read (``raw_metrics``), or through a
    definition the extractor linked them to (an HPA on a prometheus-adapter metric). When the
    metric was renamed, ``renamed_to`` gives the series to read instead."""
    series_a, series_b = _series(ta), _series(tb)
    gone = {name: whose for name, whose in series_a.items() if name not in series_b}
    names_b = set(_by_name(tb))
    gone_names = {name: entry["origin"] for name, entry in _by_name(ta).items() if name not in names_b}
    renames = _series_renames(metrics or diff_metrics(ta, tb), ta, tb)
    rows, seen = [], set()
    for side, tele in (("b", tb), ("a", ta)):
        for t in tele["thresholds"]:
            key = (t["path"], t["line"], t["name"], t["expr"])
            if key in seen:
                continue
            direct = sorted(set(t["metrics"]) & set(gone))
            recorded = sorted(set(t["raw_metrics"]) & set(gone))
            linked = sorted(set(t["links"]) & set(gone_names)) if not (direct or recorded) else []
            missing = sorted({*direct, *recorded, *linked})
            if not missing:
                continue
            seen.add(key)
            whose = {gone.get(m, gone_names.get(m, "")) for m in missing}
            rows.append({"name": t["name"], "source_kind": t["source_kind"], "op": t["op"], "value": t["value"],
                         "missing": missing,
                         "renamed_to": {m: renames[m] for m in missing if m in renames},
                         "reads": "direct" if direct else ("recorded" if recorded else "link"),
                         "through": [v for v in t["via"] if v.startswith(("record:", "adapter:", "alert:"))],
                         "origin": "" if "" in whose else ", ".join(sorted(whose)),
                         "release": side, "breaking": True, "path": t["path"], "line": t["line"]})
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["name"]))


_COMPARED = ("expr", "value", "for", "severity", "metrics", "raw_metrics", "path")


def _threshold_ref(t: Mapping[str, Any]) -> dict[str, Any]:
    return {k: t[k] for k in ("name", "source_kind", "op", "value", "expr", "path", "line")}


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What changed in one threshold, in words an operator reads."""
    out = []
    if old["value"] != new["value"]:
        out.append(f"value {_num(old['value'])} → {_num(new['value'])}")
    for key in ("for", "severity"):
        if old[key] != new[key]:
            out.append(f"{key} {old[key] or '(none)'} → {new[key] or '(none)'}")
    for key, word in (("metrics", "reads"), ("raw_metrics", "reads behind recording rules")):
        gained, lost = sorted(set(new[key]) - set(old[key])), sorted(set(old[key]) - set(new[key]))
        if gained or lost:
            out.append(f"{word}: " + ", ".join([*(f"+{m}" for m in gained), *(f"-{m}" for m in lost)]))
    if _shape(old["expr"]) != _shape(new["expr"]) and not any(c.startswith("reads") for c in out):
        out.append("expression rewritten")
    if old["path"] != new["path"]:
        out.append(f"moved from {old['path']}:{old['line']}")
    return out


_TRAILING_BOUND = re.compile(r"\s*(?:[<>]=?|[=!]=)\s*[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?\s*$")


def _shape(expr: str) -> str:
    """An expression without its trailing bound: a new value alone is no rewrite."""
    return _TRAILING_BOUND.sub("", " ".join(expr.split()))


def _num(value: Any) -> str:
    return "(none)" if value is None else f"{value:g}"


def diff_thresholds(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Thresholds added, removed and changed between releases. A threshold is known by its source
    kind, name and comparison (an alert ``X >``, a dashboard panel's step ``>=``); of several with
    one key (a panel's two steps), those equal on both sides pair first, the rest in file order."""
    groups: dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]] = {}
    for side, tele in (("a", ta), ("b", tb)):
        for t in tele["thresholds"]:
            groups.setdefault((t["source_kind"], t["name"], t["op"]), {"a": [], "b": []})[side].append(t)
    added: list[Mapping[str, Any]] = []
    removed: list[Mapping[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for key in sorted(groups):
        olds, news = list(groups[key]["a"]), list(groups[key]["b"])
        for old in list(olds):
            twin = next((n for n in news if all(old[k] == n[k] for k in _COMPARED)), None)
            if twin is not None:  # unchanged (a line that moved within its file is no change)
                olds.remove(old)
                news.remove(twin)
        for old, new in zip(olds, news):
            changed.append({**_threshold_ref(new), "changes": _changes(old, new), "old_value": old["value"],
                            "old_location": {"path": old["path"], "line": old["line"]}, "breaking": False})
        removed += olds[len(news):]
        added += news[len(olds):]
    # A dashboard panel or an alert renamed in place (same file, line, kind and comparison) is a
    # change of that threshold, not one removed and another added.
    for old in list(removed):
        new = next((n for n in added if (n["source_kind"], n["path"], n["line"], n["op"]) ==
                    (old["source_kind"], old["path"], old["line"], old["op"])), None)
        if new is not None:
            removed.remove(old)
            added.remove(new)
            changed.append({**_threshold_ref(new), "changes": [f"renamed from {old['name']}", *_changes(old, new)],
                            "old_value": old["value"], "old_location": {"path": old["path"], "line": old["line"]},
                            "breaking": False})
    added = [dict(_threshold_ref(n), breaking=False) for n in added]
    removed = [dict(_threshold_ref(o), breaking=False) for o in removed]

    def order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda r: (r["path"], r["line"], r["name"], r["op"], _num(r["value"])))
    return {"added": order(added), "removed": order(removed), "changed": order(changed)}
