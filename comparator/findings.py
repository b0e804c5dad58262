"""Findings: what differs between two evidence bundles, computed, never rendered.

Everything here is a pure function of the two bundles. Findings are plain dicts and lists (JSON as
they stand), every list sorted by a stable key, so the same bundles give byte-identical reports.
Records from the extractor are read defensively (``.get`` with defaults): a bundle from an older
pipeline that lacks an evidence kind yields an empty section with the reason, never a crash.

The schema of the result is documented in docs/report-schema.md; bump ``REPORT_SCHEMA`` when a key
changes meaning.
"""

from __future__ import annotations

import ast
import collections
import difflib
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import yaml

REPORT_SCHEMA = 1
SIDES = ("a", "b")

# Edges that say "depends on" (containment is structure, not dependency).
DEPENDENCY_EDGES = frozenset({"calls", "imports", "inherits", "includes", "launches", "binds"})
CENTRALITY_EDGES = frozenset({"calls", "inherits", "imports"})
UNASSIGNED = "unassigned"
TOP_CENTRAL = 10
KEY_SYMBOLS_SHOWN = 5
STRUCTS_PER_FAMILY = 40
SEGMENTS_PER_STRUCT = 160
RENAME_SIMILARITY = 0.8  # difflib ratio above which a removed+added metric pair of one type is a rename
CLASS_RENAME_OVERLAP = 0.6  # share of member names a removed and an added class must have in common
UNRESOLVED = "unresolved"


# ---------------------------------------------------------------------------------------- entry


def compare_bundles(a: Mapping[str, Any], b: Mapping[str, Any], mode: str = "auto") -> dict[str, Any]:
    """All findings for bundle ``a`` (left, older) against bundle ``b`` (right, newer).

    ``mode`` is ``systems`` (two different systems), ``release`` (two releases of one system) or
    ``auto``: ``release`` when both bundles carry the same system name.
    """
    if mode not in ("auto", "systems", "release"):
        raise ValueError(f"mode must be auto, systems or release, not {mode!r}")
    if mode == "auto":
        mode = "release" if same_system(a, b) else "systems"
    roles = {"a": role_by_path(a), "b": role_by_path(b)}
    findings: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA,
        "mode": mode,
        "systems": describe_systems(a, b),
        "layers": align_layers(a, b),
        "structs": compare_structs(a, b),
        "telemetry": compare_telemetry(a, b),
        "graph": {"a": graph_statistics(a, roles["a"]), "b": graph_statistics(b, roles["b"])},
        "concepts": compare_concepts(a, b),
    }
    if mode == "release":
        findings["release"] = diff_release(a, b)
    findings["takeaways"] = compute_takeaways(findings)
    findings["differences"] = count_differences(findings)
    return findings


_VERSION_TAIL = re.compile(r"[-_ ]v?\d+(\.\d+)*([.-]?[a-z]+\d*)?$")


def same_system(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two bundles of one system: the same name, once a version tail (``vllm-0.10.2``) is dropped."""
    def base(bundle: Mapping[str, Any]) -> str:
        name = str(_system(bundle).get("name", "") or "").strip().lower()
        return _VERSION_TAIL.sub("", name) or name
    return bool(base(a)) and base(a) == base(b)


def _system(bundle: Mapping[str, Any]) -> Mapping[str, Any]:
    system = bundle.get("system")
    return system if isinstance(system, Mapping) else {}


def _records(bundle: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = bundle.get(key)
    return [r for r in value if isinstance(r, Mapping)] if isinstance(value, list) else []


def _graph(bundle: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    graph = bundle.get("graph") if isinstance(bundle.get("graph"), Mapping) else {}
    nodes = [n for n in graph.get("nodes", ()) if isinstance(n, Mapping) and isinstance(n.get("id"), str)]
    edges = [e for e in graph.get("edges", ()) if isinstance(e, Mapping)]
    return nodes, edges


def _loc(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"path": str(record.get("path", "") or ""), "line": _int(record.get("line"))}


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


# ---------------------------------------------------------------------------------------- systems


def describe_systems(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for side, bundle in zip(SIDES, (a, b)):
        system = _system(bundle)
        name, version = str(system.get("name", "") or "?"), str(system.get("version", "") or "")
        nodes, edges = _graph(bundle)
        stats = bundle.get("stats") if isinstance(bundle.get("stats"), Mapping) else {}
        files = stats.get("files") if isinstance(stats.get("files"), Mapping) else {}
        out.append({
            "side": side,
            "name": name,
            "version": version,
            "label": f"{name} {version}".strip(),
            "sources": sorted(str(s.get("spec", "")) for s in _records(bundle, "sources")),
            "files": sum(v for v in files.values() if isinstance(v, int)),
            "nodes": len(nodes),
            "edges": len(edges),
            "diagnostics": len(_records(bundle, "diagnostics")),
        })
    if out[0]["label"] == out[1]["label"]:
        # Two bundles of the same name and version: keep the reader able to tell the columns apart.
        for entry, tag in zip(out, ("A", "B")):
            entry["label"] = f"{entry['label']} ({tag})"
    return out


# ---------------------------------------------------------------------------------------- layers


def role_by_path(bundle: Mapping[str, Any]) -> dict[str, str]:
    """File path -> role, from the layer records' module lists."""
    roles: dict[str, str] = {}
    for layer in _records(bundle, "layers"):
        role = str(layer.get("role", "") or "")
        for module in layer.get("modules", ()) or ():
            if isinstance(module, Mapping) and module.get("path"):
                roles[str(module["path"])] = str(module.get("role") or role)
    return roles


def apart_roles(bundle: Mapping[str, Any]) -> set[str]:
    return {str(l.get("role")) for l in _records(bundle, "layers") if l.get("apart")}


def align_layers(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """One row per role found in either system; a row is aligned when both systems have it."""
    by_side = {side: {str(l.get("role")): l for l in _records(bundle, "layers") if l.get("role")}
               for side, bundle in zip(SIDES, (a, b))}
    order: list[str] = []
    for side in SIDES:  # the layers step emits roles in taxonomy order: keep it
        for role in by_side[side]:
            if role not in order:
                order.append(role)
    first_seen = {role: i for i, role in enumerate(order)}
    order.sort(key=lambda r: (r == UNASSIGNED, _layer_apart(by_side, r), first_seen[r]))
    rows = []
    for role in order:
        la, lb = by_side["a"].get(role), by_side["b"].get(role)
        apart = _layer_apart(by_side, role)
        title = str((la or lb or {}).get("title", "") or role)
        rows.append({
            "role": role,
            "title": title,
            "apart": apart,
            "aligned": la is not None and lb is not None and role != UNASSIGNED and not apart,
            "a": _layer_side(la),
            "b": _layer_side(lb),
        })
    architectural = {side: [r for r in by_side[side] if r != UNASSIGNED and not by_side[side][r].get("apart")]
                     for side in SIDES}
    reasons = {side: ("" if by_side[side] else "no layer records in this evidence (the layers step did not run "
                      "or found no code modules)") for side in SIDES}
    return {
        "rows": rows,
        "aligned": sum(1 for r in rows if r["aligned"]),
        "roles": {side: len(architectural[side]) for side in SIDES},
        "gaps": {side: sorted(r["role"] for r in rows if r[side] is None and r["role"] != UNASSIGNED
                              and not r["apart"]) for side in SIDES},
        "empty_reason": reasons,
    }


def _layer_apart(by_side: Mapping[str, Mapping[str, Any]], role: str) -> bool:
    return any(bool(by_side[s][role].get("apart")) for s in SIDES if role in by_side[s])


def _layer_side(layer: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if layer is None:
        return None
    modules = [m for m in layer.get("modules", ()) or () if isinstance(m, Mapping)]
    symbols = []
    for s in layer.get("key_symbols", ()) or ():
        if isinstance(s, Mapping):
            symbols.append({"name": str(s.get("name", "")), "id": str(s.get("id", "")), "kind": str(s.get("kind", "")),
                            "in_degree": _int(s.get("in_degree")), **_loc(s)})
    evidence = [e for e in layer.get("evidence", ()) or () if isinstance(e, Mapping)]
    # The row's anchor: the first place a reader can open, preferring a symbol definition.
    anchor = next((_loc(s) for s in symbols if s["line"] > 0), None) \
        or next((_loc(e) for e in evidence if _int(e.get("line")) > 0), None) \
        or next((_loc(e) for e in evidence if e.get("path")), None) \
        or next((_loc(m) for m in modules if m.get("path")), {"path": "", "line": 0})
    top_modules = sorted(modules, key=lambda m: (-float(m.get("score", 0) or 0), str(m.get("path", ""))))
    return {
        "summary": str(layer.get("summary", "") or ""),
        "modules": len(modules),
        "lines": _int(layer.get("lines")),
        "concepts": sorted(str(c) for c in layer.get("concepts", ()) or ()),
        "key_symbols": symbols[:KEY_SYMBOLS_SHOWN],
        "top_modules": [{"module": str(m.get("module", "")), **_loc(m)} for m in top_modules[:KEY_SYMBOLS_SHOWN]],
        "anchor": anchor,
    }


# ---------------------------------------------------------------------------------------- structs


def struct_segments(struct: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Members, holes and tail padding as contiguous runs of bytes, for a byte map drawn to scale."""
    size = _int(struct.get("size"))
    if struct.get("method") == UNRESOLVED or size <= 0:
        return []
    members = [m for m in struct.get("members", ()) or () if isinstance(m, Mapping) and m.get("kind") != "virtual-base"]
    if struct.get("kind") == "union":
        segs = [{"offset": 0, "size": _int(m.get("size")), "label": str(m.get("name") or m.get("type") or ""),
                 "type": str(m.get("type", "")), "kind": "member"} for m in members]
        widest = max((s["size"] for s in segs), default=0)
        if size > widest:
            segs.append({"offset": widest, "size": size - widest, "label": "padding", "type": "", "kind": "padding"})
        return segs[:SEGMENTS_PER_STRUCT]
    segs: list[dict[str, Any]] = []
    for m in sorted(members, key=lambda m: (_int(m.get("offset")), _int(m.get("bit_offset")))):
        offset, msize = _int(m.get("offset")), _int(m.get("size"))
        label = str(m.get("name") or m.get("type") or "")
        if _int(m.get("bit_size")):
            label = f"{label}:{_int(m.get('bit_size'))}"
        kind = "base" if m.get("kind") == "base" else "member"
        if segs and offset < segs[-1]["offset"] + segs[-1]["size"]:
            last = segs[-1]  # sharing storage with the previous member (bit-fields, empty bases)
            last["size"] = max(last["size"], offset + msize - last["offset"])
            last["label"] = f"{last['label']}, {label}"
            continue
        segs.append({"offset": offset, "size": msize, "label": label, "type": str(m.get("type", "")), "kind": kind})
    filled: list[dict[str, Any]] = []
    cursor = 0
    for seg in segs:
        if seg["offset"] > cursor:
            filled.append({"offset": cursor, "size": seg["offset"] - cursor, "label": "hole", "type": "", "kind": "hole"})
        filled.append(seg)
        cursor = max(cursor, seg["offset"] + seg["size"])
    if size > cursor:
        filled.append({"offset": cursor, "size": size - cursor, "label": "padding", "type": "", "kind": "padding"})
    return filled[:SEGMENTS_PER_STRUCT]


def _struct_row(struct: Mapping[str, Any]) -> dict[str, Any]:
    holes = [h for h in struct.get("holes", ()) or () if isinstance(h, Mapping) and not h.get("bits")]
    return {
        "qualname": str(struct.get("qualname") or struct.get("name") or ""),
        "kind": str(struct.get("kind", "struct") or "struct"),
        "size": _int(struct.get("size")),
        "align": _int(struct.get("align") or struct.get("alignment")),
        "members": len([m for m in struct.get("members", ()) or () if isinstance(m, Mapping)]),
        "hole_bytes": sum(_int(h.get("size")) for h in holes),
        "padding": _int(struct.get("padding")),
        "method": str(struct.get("method", "") or ""),
        "error": str(struct.get("error", "") or ""),
        "tags": sorted(str(t) for t in struct.get("tags", ()) or ()),
        "segments": struct_segments(struct),
        **_loc(struct),
    }


def compare_structs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Struct families (by tag) side by side, with sizes, total bytes and byte maps."""
    rows = {side: sorted((_struct_row(s) for s in _records(bundle, "structs")),
                         key=lambda r: (-r["size"], r["qualname"], r["path"], r["line"]))
            for side, bundle in zip(SIDES, (a, b))}
    tags = sorted({t for side in SIDES for r in rows[side] for t in r["tags"]})
    families = []
    for tag in [*tags, ""]:
        family: dict[str, Any] = {"tag": tag or "untagged"}
        for side in SIDES:
            members = [r for r in rows[side] if (tag in r["tags"] if tag else not r["tags"])]
            resolved = [r for r in members if r["method"] != UNRESOLVED]
            family[side] = {
                "count": len(members),
                "resolved": len(resolved),
                "total_bytes": sum(r["size"] for r in resolved),
                "hole_bytes": sum(r["hole_bytes"] for r in resolved),
                "structs": members[:STRUCTS_PER_FAMILY],
                "more": max(0, len(members) - STRUCTS_PER_FAMILY),
            }
        if family["a"]["count"] or family["b"]["count"]:
            families.append(family)
    totals = {}
    for side in SIDES:
        resolved = [r for r in rows[side] if r["method"] != UNRESOLVED]
        totals[side] = {
            "count": len(rows[side]),
            "resolved": len(resolved),
            "unresolved": len(rows[side]) - len(resolved),
            "total_bytes": sum(r["size"] for r in resolved),
            "hole_bytes": sum(r["hole_bytes"] for r in resolved),
            "empty_reason": "" if rows[side] else "no struct layouts in this evidence (no ELF given, no header "
                                                   "probe compiled, or the structs step did not run)",
        }
    return {"families": families, "totals": totals}


# ---------------------------------------------------------------------------------------- telemetry


@functools.cache
def crosswalk_vocabulary() -> dict[str, Any]:
    return yaml.safe_load(Path(__file__).with_name("crosswalk.yaml").read_text(encoding="utf-8"))


def _metric_row(metric: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": str(metric.get("name", "") or ""),
        "type": str(metric.get("type", "") or "untyped"),
        "unit": str(metric.get("unit", "") or ""),
        "help": str(metric.get("help", "") or "")[:300],
        "labels": sorted(str(x) for x in metric.get("labels", ()) or ()),
        "language": str(metric.get("language", "") or ""),
        "dynamic": bool(metric.get("dynamic")),
        "exposed_names": sorted(str(x) for x in metric.get("exposed_names", ()) or ()),
        **_loc(metric),
    }


def _threshold_row(t: Mapping[str, Any]) -> dict[str, Any]:
    value = t.get("value")
    return {
        "name": str(t.get("name", "") or ""),
        "expr": str(t.get("expr", "") or "")[:400],
        "metrics": sorted(str(m) for m in t.get("metrics", ()) or ()),
        "links": sorted(str(m) for m in t.get("links", ()) or ()),
        "op": str(t.get("op", "") or ""),
        "value": value if isinstance(value, (int, float)) and math.isfinite(value) else None,
        "for": str(t.get("for_", t.get("for", "")) or ""),
        "severity": str(t.get("severity", "") or ""),
        "source_kind": str(t.get("source_kind", "") or ""),
        "default": bool(t.get("default")),
        **_loc(t),
    }


def _reads(metric: Mapping[str, Any], threshold: Mapping[str, Any]) -> bool:
    names = {metric["name"], *metric["exposed_names"]}
    return bool(names & (set(threshold["metrics"]) | set(threshold["links"])))


def summarize_telemetry(bundle: Mapping[str, Any]) -> dict[str, Any]:
    metrics = sorted((_metric_row(m) for m in _records(bundle, "metrics")),
                     key=lambda m: (m["name"], m["path"], m["line"]))
    thresholds = sorted((_threshold_row(t) for t in _records(bundle, "thresholds")),
                        key=lambda t: (t["path"], t["line"], t["name"], t["expr"], t["op"], str(t["value"])))
    for metric in metrics:
        metric["thresholds"] = [{k: t[k] for k in ("name", "op", "value", "source_kind", "severity", "default",
                                                   "path", "line")}
                                for t in thresholds if _reads(metric, t)]
    known = {n for m in metrics for n in (m["name"], *m["exposed_names"])}
    for t in thresholds:
        t["reads_defined_metric"] = bool(known & (set(t["metrics"]) | set(t["links"])))
    by_type = collections.Counter(m["type"] for m in metrics)
    return {
        "metrics": metrics,
        "thresholds": thresholds,
        "by_type": dict(sorted(by_type.items())),
        "dominant_type": min(by_type, key=lambda t: (-by_type[t], t)) if by_type else "",
        "without_threshold": [m["name"] for m in metrics if not m["thresholds"]],
        "with_threshold": sum(1 for m in metrics if m["thresholds"]),
        "unlinked_thresholds": sum(1 for t in thresholds if not t["reads_defined_metric"]),
        "empty_reason": "" if metrics else "no metric definitions in this evidence (no prometheus_client or "
                                           "prometheus-cpp definitions found, or the metrics step did not run)",
    }


def namespace_token(names: Iterable[str]) -> str:
    """The first name token shared by at least half of a system's metrics (``vllm``, ``nv``), or ''."""
    firsts = collections.Counter(_tokens(n)[0] for n in names if _tokens(n))
    total = sum(firsts.values())
    if not total:
        return ""
    token, count = min(firsts.items(), key=lambda kv: (-kv[1], kv[0]))
    return token if count * 2 >= total and total > 1 else ""


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_:.\-{}]+", name.lower()) if t]


def metric_concept(name: str, unit: str, namespace: str) -> tuple[frozenset[str], str, float]:
    """(concept tokens, unit dimension, factor to the base unit) of a metric name."""
    vocab = crosswalk_vocabulary()
    units, synonyms, stop = vocab["units"], vocab["synonyms"], set(vocab["stop"])
    tokens = _tokens(name)
    if namespace and tokens and tokens[0] == namespace:
        tokens = tokens[1:]
    dimension, factor = "", 1.0
    concept = set()
    for token in [*tokens, *_tokens(unit)]:
        if token in units:
            dimension, factor = units[token][0], float(units[token][1])
            continue
        token = synonyms.get(token, token)
        if token not in stop:
            concept.add(token)
    return frozenset(concept), dimension, factor


def crosswalk_metrics(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pairs of metrics that measure the same thing under different names or units, best first.

    Each metric joins at most one pair (greedy by score), so a row is a claim a reader can check.
    """
    vocab = crosswalk_vocabulary()
    sides = {}
    for side, tele in (("a", ta), ("b", tb)):
        metrics = [m for m in tele["metrics"] if not m["dynamic"]]
        ns = namespace_token(m["name"] for m in metrics)
        sides[side] = [(m, *metric_concept(m["name"], m["unit"], ns)) for m in metrics]
    candidates = []
    for ma, ca, da, fa in sides["a"]:
        for mb, cb, db, fb in sides["b"]:
            if not ca or not cb or (da and db and da != db):
                continue
            shared = ca & cb
            if not shared:
                continue
            if len(shared) < vocab["min_shared"] and ca != cb:
                continue  # one common word ("request") is not evidence of one measurement
            jaccard = len(shared) / len(ca | cb)
            unit_agreement = 1.0 if (da and da == db) else (0.5 if not (da or db) else 0.25)
            score = round(0.8 * jaccard + 0.2 * unit_agreement, 3)
            if score < vocab["min_score"]:
                continue
            candidates.append((score, ma, mb, shared, da or db, fa, fb, da, db))
    candidates.sort(key=lambda c: (-c[0], c[1]["name"], c[2]["name"], c[1]["path"], c[2]["path"]))
    used_a: set[str] = set()
    used_b: set[str] = set()
    rows = []
    for score, ma, mb, shared, dim, fa, fb, da, db in candidates:
        # by name: a metric defined twice (two code paths registering one family) pairs once
        ka, kb = ma["name"], mb["name"]
        if ka in used_a or kb in used_b:
            continue
        used_a.add(ka)
        used_b.add(kb)
        note = ""
        if da and db and fa != fb:
            note = f"units differ: 1 {_unit_word(ma)} = {fa / fb:g} {_unit_word(mb)}"
        rows.append({
            "score": score,
            "shared": sorted(shared),
            "dimension": dim,
            "same_name": ma["name"] == mb["name"],
            "unit_note": note,
            "a": {k: ma[k] for k in ("name", "type", "unit", "path", "line")} | {"thresholds": len(ma["thresholds"])},
            "b": {k: mb[k] for k in ("name", "type", "unit", "path", "line")} | {"thresholds": len(mb["thresholds"])},
        })
    rows.sort(key=lambda r: (-r["score"], r["a"]["name"], r["b"]["name"]))
    return rows


def _unit_word(metric: Mapping[str, Any]) -> str:
    units = crosswalk_vocabulary()["units"]
    for token in reversed(_tokens(metric["name"]) + _tokens(metric["unit"])):
        if token in units:
            return token
    return metric["unit"] or "unit"


def compare_telemetry(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    ta, tb = summarize_telemetry(a), summarize_telemetry(b)
    return {"a": ta, "b": tb, "crosswalk": crosswalk_metrics(ta, tb)}


# ---------------------------------------------------------------------------------------- graph


def graph_statistics(bundle: Mapping[str, Any], roles: Mapping[str, str]) -> dict[str, Any]:
    """Counts, density, the most depended-upon symbols, and the layer-to-layer dependency matrix."""
    nodes, edges = _graph(bundle)
    by_id = {n["id"]: n for n in nodes}
    n, e = len(nodes), len(edges)
    dependents: dict[str, set[str]] = collections.defaultdict(set)
    for edge in edges:
        if edge.get("kind") in CENTRALITY_EDGES and edge.get("source") != edge.get("target"):
            dependents[str(edge.get("target"))].add(str(edge.get("source")))
    central = sorted(((len(srcs), t) for t, srcs in dependents.items()
                      if t in by_id and by_id[t].get("kind") != "external"), key=lambda x: (-x[0], x[1]))
    matrix, examples = layer_matrix(bundle, roles)
    return {
        "nodes": n,
        "edges": e,
        "density": round(e / (n * (n - 1)), 8) if n > 1 else 0.0,
        "nodes_by_kind": dict(sorted(collections.Counter(str(x.get("kind")) for x in nodes).items())),
        "nodes_by_language": dict(sorted(collections.Counter(str(x.get("language") or "none") for x in nodes).items())),
        "edges_by_kind": dict(sorted(collections.Counter(str(x.get("kind")) for x in edges).items())),
        "binds": sum(1 for x in edges if x.get("kind") == "binds"),
        "central": [{"id": t, "name": str(by_id[t].get("name", "")), "kind": str(by_id[t].get("kind", "")),
                     "dependents": d, **_loc(by_id[t])} for d, t in central[:TOP_CENTRAL]],
        "layer_matrix": matrix,
        "layer_cycles": layer_cycles(matrix, examples),
        "empty_reason": "" if n else "no symbol graph in this evidence",
    }


def layer_matrix(bundle: Mapping[str, Any], roles: Mapping[str, str]
                 ) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], dict[str, Any]]]:
    """Dependency edges from each layer to each other, counted once per statement; and for each
    pair of layers the first edge (by path, line) as an example a reader can open."""
    nodes, edges = _graph(bundle)
    path_of = {n["id"]: str(n.get("path", "") or "") for n in nodes}
    skip = apart_roles(bundle) | {UNASSIGNED}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], dict[str, Any]] = {}
    seen: set[tuple[str, str, str, int]] = set()
    for edge in edges:
        if edge.get("kind") not in DEPENDENCY_EDGES:
            continue
        sp, tp = path_of.get(str(edge.get("source")), ""), path_of.get(str(edge.get("target")), "")
        ra, rb = roles.get(sp), roles.get(tp)
        if not ra or not rb or ra in skip or rb in skip:
            continue
        # "from m import C" may be an edge to module m and one to class C: one statement, one count
        key = (sp, tp, str(edge.get("path", "")), _int(edge.get("line")))
        if key[3] and key in seen:
            continue
        seen.add(key)
        counts[(ra, rb)] += 1
        example = {"path": str(edge.get("path") or sp), "line": _int(edge.get("line")),
                   "source": str(edge.get("source")), "target": str(edge.get("target")), "kind": str(edge.get("kind"))}
        old = examples.get((ra, rb))
        if old is None or (example["path"], example["line"], example["source"]) < (old["path"], old["line"], old["source"]):
            examples[(ra, rb)] = example
    matrix: dict[str, dict[str, int]] = {}
    for (ra, rb), count in sorted(counts.items()):
        matrix.setdefault(ra, {})[rb] = count
    return matrix, examples


def layer_cycles(matrix: Mapping[str, Mapping[str, int]], examples: Mapping[tuple[str, str], Mapping[str, Any]]
                 ) -> list[dict[str, Any]]:
    """Groups of layers that depend on each other in a cycle (strongly connected, self-loops aside)."""
    graph = nx.DiGraph()
    for ra, row in matrix.items():
        for rb, count in row.items():
            if ra != rb and count:
                graph.add_edge(ra, rb)
    cycles = []
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        members = sorted(component)
        links = [{"from": ra, "to": rb, "count": matrix[ra][rb], "example": dict(examples.get((ra, rb), {}))}
                 for ra in members for rb in members if ra != rb and matrix.get(ra, {}).get(rb)]
        # Pairs that depend on each other directly, strongest both-ways coupling first: the
        # places to look when untangling a cycle.
        mutual = [{"a": ra, "b": rb, "a_to_b": matrix[ra][rb], "b_to_a": matrix[rb][ra]}
                  for i, ra in enumerate(members) for rb in members[i + 1:]
                  if matrix.get(ra, {}).get(rb) and matrix.get(rb, {}).get(ra)]
        mutual.sort(key=lambda m: (-min(m["a_to_b"], m["b_to_a"]), m["a"], m["b"]))
        cycles.append({"layers": members, "edges": links, "mutual": mutual})
    return sorted(cycles, key=lambda c: c["layers"])


# ---------------------------------------------------------------------------------------- concepts


def compare_concepts(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    by_side = {}
    for side, bundle in zip(SIDES, (a, b)):
        by_side[side] = {}
        for c in _records(bundle, "concepts"):
            if not c.get("id"):
                continue
            evidence = [e for e in c.get("evidence", ()) or () if isinstance(e, Mapping)]
            by_side[side][str(c["id"])] = {
                "title": str(c.get("title", "") or c["id"]),
                "count": _int(c.get("count")) or len(evidence),
                "files": _int(c.get("files")),
                "evidence": [{"match": str(e.get("matched", e.get("match", "")) or ""), **_loc(e)} for e in evidence[:3]],
            }
    ids_a, ids_b = set(by_side["a"]), set(by_side["b"])

    def rows(ids: Iterable[str]) -> list[dict[str, Any]]:
        return [{"id": i, "title": (by_side["a"].get(i) or by_side["b"][i])["title"],
                 "a": by_side["a"].get(i), "b": by_side["b"].get(i)} for i in sorted(ids)]

    return {
        "shared": rows(ids_a & ids_b),
        "only_a": rows(ids_a - ids_b),
        "only_b": rows(ids_b - ids_a),
        "empty_reason": {side: "" if by_side[side] else "no concept records in this evidence" for side in SIDES},
    }


# ---------------------------------------------------------------------------------------- release


# Placeholders and containers whose coming and going says nothing an importer or linker sees.
SYMBOL_SKIP_KINDS = frozenset({"external", "namespace", "file"})


def _public(node: Mapping[str, Any]) -> bool:
    qualname = str(node.get("qualname") or node.get("id", ""))
    parts = re.split(r"\.|::", qualname)
    return not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts) \
        and "<locals>" not in qualname


def _symbol_row(node: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": node["id"], "kind": str(node.get("kind", "")), "name": str(node.get("name", "")),
            "signature": str(node.get("signature", "") or ""), "public": _public(node), **_loc(node)}


def _local_name(node: Mapping[str, Any], module_of_path: Mapping[str, str]) -> str:
    """The qualified name inside its module (``Engine.step``), or the full qualname for C++."""
    qualname = str(node.get("qualname") or "")
    module = module_of_path.get(str(node.get("path", "")), "")
    if module and qualname.startswith(module + "."):
        return qualname[len(module) + 1:]
    return qualname


def diff_symbols(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Added, removed, moved and renamed symbols, and changed Python signatures."""
    nodes = {}
    modules = {}
    for side, bundle in zip(SIDES, (a, b)):
        graph_nodes, _ = _graph(bundle)
        nodes[side] = {n["id"]: n for n in graph_nodes if n.get("kind") not in SYMBOL_SKIP_KINDS}
        modules[side] = {str(n.get("path")): str(n.get("qualname") or "") for n in graph_nodes
                         if n.get("kind") == "module" and n.get("path")}
    # Tests, examples, benchmarks and build scripts (the layers the taxonomy sets apart) are not an
    # interface anyone imports: their changes are listed, never breaking.
    apart_paths = {p for bundle in (a, b) for p, role in role_by_path(bundle).items() if role in apart_roles(bundle)}

    def api(node: Mapping[str, Any]) -> bool:
        return _public(node) and str(node.get("path", "")) not in apart_paths

    removed_ids = sorted(set(nodes["a"]) - set(nodes["b"]))
    added_ids = sorted(set(nodes["b"]) - set(nodes["a"]))
    moved, renamed = [], []
    taken_a: set[str] = set()
    taken_b: set[str] = set()

    def pair(old_id: str, new_id: str, bucket: list, how: str) -> None:
        old, new = nodes["a"][old_id], nodes["b"][new_id]
        taken_a.add(old_id)
        taken_b.add(new_id)
        bucket.append({"from": _symbol_row(old), "to": _symbol_row(new), "how": how, "breaking": api(old)})

    # 1. same qualified name, another file (a module turned into a package, a header split)
    added_by_qualname = collections.defaultdict(list)
    for i in added_ids:
        added_by_qualname[(nodes["b"][i].get("kind"), nodes["b"][i].get("qualname"))].append(i)
    for i in removed_ids:
        old = nodes["a"][i]
        hits = added_by_qualname.get((old.get("kind"), old.get("qualname")), [])
        if len(hits) == 1 and old.get("kind") != "module":
            pair(i, hits[0], moved, "same qualified name, other file")
    # 2. same local name, kind and signature in another module; unique on both sides
    def key(side: str, i: str) -> tuple:
        n = nodes[side][i]
        return (n.get("kind"), _local_name(n, modules[side]), n.get("signature", ""))
    removed_keys = collections.Counter(key("a", i) for i in removed_ids if i not in taken_a)
    added_keys = collections.defaultdict(list)
    for i in added_ids:
        if i not in taken_b:
            added_keys[key("b", i)].append(i)
    for i in removed_ids:
        if i in taken_a or nodes["a"][i].get("kind") in ("module", "method", "file", "namespace"):
            continue
        k = key("a", i)
        if removed_keys[k] == 1 and len(added_keys.get(k, [])) == 1:
            pair(i, added_keys[k][0], moved, "same name and signature, other module")
    # 3. renamed classes: same module, a large share of member names in common
    children = {side: collections.defaultdict(set) for side in SIDES}
    containers: dict[str, dict[str, str]] = {side: {} for side in SIDES}
    for side, bundle in zip(SIDES, (a, b)):
        _, graph_edges = _graph(bundle)
        for edge in graph_edges:
            if edge.get("kind") == "contains" and edge.get("target") in nodes[side]:
                children[side][str(edge.get("source"))].add(str(nodes[side][edge["target"]].get("name", "")))
                containers[side].setdefault(str(edge["target"]), str(edge.get("source")))
    for i in removed_ids:
        old = nodes["a"][i]
        if i in taken_a or old.get("kind") not in ("class", "struct"):
            continue
        mine = children["a"].get(i, set())
        best, best_overlap = None, 0.0
        for j in added_ids:
            new = nodes["b"][j]
            if j in taken_b or new.get("kind") != old.get("kind") or new.get("path") != old.get("path"):
                continue
            theirs = children["b"].get(j, set())
            if not mine or not theirs:
                continue
            overlap = len(mine & theirs) / len(mine | theirs)
            if overlap >= CLASS_RENAME_OVERLAP and overlap > best_overlap:
                best, best_overlap = j, overlap
        if best is not None:
            pair(i, best, renamed, f"same file, {best_overlap:.0%} of member names in common")
    # Members of a moved or renamed class moved with it: report the class, not each method.
    followers = [(r["from"]["id"], r["to"]["id"]) for r in moved + renamed]
    for old_parent, new_parent in followers:
        for i in removed_ids:
            if i not in taken_a and (i.startswith(old_parent + ".") or i.startswith(old_parent + "::")):
                j = new_parent + i[len(old_parent):]
                if j in nodes["b"] and j not in taken_b:
                    taken_a.add(i)
                    taken_b.add(j)
    # A symbol whose container went (or came) with it is reported through the container: the
    # methods of a removed class are one finding, not one per method.
    removed = _fold([i for i in removed_ids if i not in taken_a], containers["a"], nodes["a"], api)
    added = _fold([i for i in added_ids if i not in taken_b], containers["b"], nodes["b"], lambda _node: False)
    signatures = []
    for i in sorted(set(nodes["a"]) & set(nodes["b"])):
        old, new = nodes["a"][i], nodes["b"][i]
        so, sn = str(old.get("signature", "") or ""), str(new.get("signature", "") or "")
        if so != sn and old.get("language", "python") == "python" and (so or sn):
            reasons = signature_breaks(so, sn)
            signatures.append({"id": i, "kind": str(new.get("kind", "")), "old": so, "new": sn,
                               "breaking": bool(reasons) and api(new), "reasons": reasons,
                               "old_location": _loc(old), **_loc(new)})
    return {
        "added": added,
        "removed": removed,
        "moved": sorted(moved, key=lambda r: r["from"]["id"]),
        "renamed": sorted(renamed, key=lambda r: r["from"]["id"]),
        "signatures": signatures,
        "added_by_kind": dict(sorted(collections.Counter(r["kind"] for r in added).items())),
        "removed_by_kind": dict(sorted(collections.Counter(r["kind"] for r in removed).items())),
    }


def _fold(ids: list[str], container: Mapping[str, str], nodes: Mapping[str, Mapping[str, Any]],
          breaking: Callable[[Mapping[str, Any]], bool]) -> list[dict[str, Any]]:
    chosen = set(ids)
    members: collections.Counter[str] = collections.Counter()
    kept = []
    for i in ids:
        top, cursor, hops = None, container.get(i), 0
        while cursor is not None and hops < 64:  # hops: a malformed bundle must not loop forever
            if cursor in chosen:
                top = cursor
            cursor, hops = container.get(cursor), hops + 1
        if top is None:
            kept.append(i)
        else:
            members[top] += 1
    return [dict(_symbol_row(nodes[i]), breaking=breaking(nodes[i]), members=members.get(i, 0))
            for i in kept]


def _parameters(signature: str) -> tuple[ast.arguments | None, bool]:
    """The parameters of a signature as the graph stores it, and whether it was truncated there
    (long signatures end in an ellipsis: only the parameters before the last complete one count)."""
    text = signature.strip()
    if not text.startswith("("):
        return None, False
    truncated = text.endswith("…") or text.endswith("...")
    head = _strip_return(text)
    if truncated and head != text:
        text, truncated = head, False  # cut inside the return annotation: the parameters are whole
    if truncated:
        text = text.rstrip(".…")
        depth, cut = 0, 0
        for i, ch in enumerate(text):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 1:
                cut = i
        text = (text[:cut] if cut else "(") + ")"
    else:
        text = _strip_return(text)
    try:
        tree = ast.parse(f"def _f{text}:\n    pass\n")
    except SyntaxError:
        return None, truncated
    func = tree.body[0]
    return (func.args if isinstance(func, ast.FunctionDef) else None), truncated


def _strip_return(text: str) -> str:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[:i + 1]
    return text


def signature_breaks(old: str, new: str) -> list[str]:
    """Why a call that worked against ``old`` may fail against ``new`` (empty: compatible, as far
    as the stored signatures show)."""
    (pa, cut_a), (pb, cut_b) = _parameters(old), _parameters(new)
    if pa is None or pb is None:
        return ["signature could not be parsed; compare by hand"] if old != new else []
    reasons = []
    pos_a = [x.arg for x in (*pa.posonlyargs, *pa.args)]
    pos_b = [x.arg for x in (*pb.posonlyargs, *pb.args)]
    kw_a, kw_b = [x.arg for x in pa.kwonlyargs], [x.arg for x in pb.kwonlyargs]
    seen_a, seen_b = pos_a + kw_a, pos_b + kw_b
    names_b = set(seen_b)
    for name in seen_a:
        if cut_b and seen_a.index(name) >= len(seen_b):
            continue  # beyond what the truncated new signature shows
        if name not in names_b and pb.kwarg is None and not (name in pos_a and pb.vararg is not None):
            reasons.append(f"parameter '{name}' removed")
    common = [n for n in pos_a if n in pos_b]
    if [n for n in pos_b if n in common] != common or any(pos_a.index(n) != pos_b.index(n) for n in common):
        reasons.append("positional parameters reordered or shifted")
    defaults_b = set(pos_b[len(pos_b) - len(pb.defaults):]) if pb.defaults else set()
    defaults_b |= {x.arg for x, d in zip(pb.kwonlyargs, pb.kw_defaults) if d is not None}
    defaults_a = set(pos_a[len(pos_a) - len(pa.defaults):]) if pa.defaults else set()
    defaults_a |= {x.arg for x, d in zip(pa.kwonlyargs, pa.kw_defaults) if d is not None}
    for name in seen_b:
        if name not in seen_a and name not in defaults_b:
            if cut_a and seen_b.index(name) >= len(seen_a):
                continue  # may be one the truncated old signature hides
            reasons.append(f"required parameter '{name}' added")
        elif name in defaults_a and name not in defaults_b:
            reasons.append(f"parameter '{name}' lost its default")
    if pa.vararg is not None and pb.vararg is None and not cut_b:
        reasons.append("*args removed")
    if pa.kwarg is not None and pb.kwarg is None and not cut_b:
        reasons.append("**kwargs removed")
    return reasons


def diff_structs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Layout changes of structs present in both releases (matched by qualified name)."""
    by_side = {}
    for side, bundle in zip(SIDES, (a, b)):
        by_side[side] = {}
        for s in sorted(_records(bundle, "structs"), key=lambda s: (s.get("method") == UNRESOLVED, _loc(s)["path"])):
            by_side[side].setdefault(str(s.get("qualname") or s.get("name") or ""), s)
    changed = []
    for name in sorted(set(by_side["a"]) & set(by_side["b"])):
        old, new = by_side["a"][name], by_side["b"][name]
        if UNRESOLVED in (old.get("method"), new.get("method")):
            continue  # a layout is only known on one side (or none): nothing to compare
        members_a = {str(m.get("name")): m for m in old.get("members", ()) or () if isinstance(m, Mapping)}
        members_b = {str(m.get("name")): m for m in new.get("members", ()) or () if isinstance(m, Mapping)}
        changes, breaking = [], False
        for key in ("size", "align"):
            if _int(old.get(key)) != _int(new.get(key)):
                changes.append(f"{key} {_int(old.get(key))} -> {_int(new.get(key))}")
                breaking = True
        for m in sorted(set(members_a) - set(members_b)):
            changes.append(f"member '{m}' removed (was at offset {_int(members_a[m].get('offset'))})")
            breaking = True
        for m in sorted(set(members_b) - set(members_a)):
            changes.append(f"member '{m}' added at offset {_int(members_b[m].get('offset'))}")
        for m in sorted(set(members_a) & set(members_b)):
            ma, mb = members_a[m], members_b[m]
            for key in ("offset", "size", "bit_offset", "bit_size"):
                if _int(ma.get(key)) != _int(mb.get(key)):
                    changes.append(f"member '{m}' {key} {_int(ma.get(key))} -> {_int(mb.get(key))}")
                    breaking = True
            if str(ma.get("type", "")) != str(mb.get("type", "")):
                changes.append(f"member '{m}' type {ma.get('type', '')} -> {mb.get('type', '')}")
                breaking = True
        if changes:
            changed.append({"qualname": name, "changes": changes, "breaking": breaking,
                            "old": {"size": _int(old.get("size")), "align": _int(old.get("align")), **_loc(old)},
                            "new": {"size": _int(new.get("size")), "align": _int(new.get("align")), **_loc(new)},
                            "segments_old": struct_segments(old), "segments_new": struct_segments(new), **_loc(new)})
    removed = [{"qualname": n, "size": _int(by_side["a"][n].get("size")), "method": str(by_side["a"][n].get("method", "")),
                "breaking": True, **_loc(by_side["a"][n])} for n in sorted(set(by_side["a"]) - set(by_side["b"]))]
    added = [{"qualname": n, "size": _int(by_side["b"][n].get("size")), "method": str(by_side["b"][n].get("method", "")),
              "breaking": False, **_loc(by_side["b"][n])} for n in sorted(set(by_side["b"]) - set(by_side["a"]))]
    return {"changed": changed, "removed": removed, "added": added}


def diff_metrics(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> dict[str, Any]:
    """Metrics added, removed, renamed (same type, similar name) and retyped between releases."""
    ma = {m["name"]: m for m in ta["metrics"]}
    mb = {m["name"]: m for m in tb["metrics"]}
    removed_names = sorted(set(ma) - set(mb))
    added_names = sorted(set(mb) - set(ma))
    candidates = []
    for r in removed_names:
        for n in added_names:
            if ma[r]["type"] != mb[n]["type"]:
                continue
            ratio = difflib.SequenceMatcher(None, r, n).ratio()
            if ratio >= RENAME_SIMILARITY:
                candidates.append((-ratio, r, n))
    renamed, used_r, used_n = [], set(), set()
    for neg, r, n in sorted(candidates):
        if r in used_r or n in used_n:
            continue
        used_r.add(r)
        used_n.add(n)
        renamed.append({"from": _metric_ref(ma[r]), "to": _metric_ref(mb[n]), "similarity": round(-neg, 3),
                        "breaking": True})
    retyped = [{"name": n, "old_type": ma[n]["type"], "new_type": mb[n]["type"], "old_location": _loc(ma[n]),
                "breaking": True, **_loc(mb[n])}
               for n in sorted(set(ma) & set(mb)) if ma[n]["type"] != mb[n]["type"]]
    return {
        "added": [dict(_metric_ref(mb[n]), breaking=False) for n in added_names if n not in used_n],
        "removed": [dict(_metric_ref(ma[n]), breaking=True) for n in removed_names if n not in used_r],
        "renamed": sorted(renamed, key=lambda r: r["from"]["name"]),
        "retyped": retyped,
    }


def _metric_ref(m: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": m["name"], "type": m["type"], "path": m["path"], "line": m["line"]}


def orphaned_thresholds(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Thresholds (of either release) that read a series the old release exposed and the new does not."""
    exposed_a = {n for m in ta["metrics"] for n in (m["name"], *m["exposed_names"])}
    exposed_b = {n for m in tb["metrics"] for n in (m["name"], *m["exposed_names"])}
    gone = exposed_a - exposed_b
    rows, seen = [], set()
    for side, tele in (("b", tb), ("a", ta)):
        for t in tele["thresholds"]:
            key = (t["path"], t["line"], t["name"], t["expr"])
            missing = sorted(set(t["metrics"]) & gone)
            if missing and key not in seen:
                seen.add(key)
                rows.append({"name": t["name"], "source_kind": t["source_kind"], "missing": missing,
                             "release": side, "breaking": True, "path": t["path"], "line": t["line"]})
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["name"]))


def layer_drift(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    ra, rb = role_by_path(a), role_by_path(b)
    changed = [{"path": p, "line": 0, "from": ra[p], "to": rb[p]} for p in sorted(set(ra) & set(rb)) if ra[p] != rb[p]]
    per_role = {}
    for role in sorted(set(ra.values()) | set(rb.values())):
        per_role[role] = {"a": sum(1 for r in ra.values() if r == role), "b": sum(1 for r in rb.values() if r == role)}
    return {"changed": changed, "modules_per_role": per_role,
            "added_modules": len(set(rb) - set(ra)), "removed_modules": len(set(ra) - set(rb))}


def diff_release(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    ta, tb = summarize_telemetry(a), summarize_telemetry(b)
    return {
        "symbols": diff_symbols(a, b),
        "structs": diff_structs(a, b),
        "metrics": diff_metrics(ta, tb),
        "orphaned_thresholds": orphaned_thresholds(ta, tb),
        "layer_drift": layer_drift(a, b),
    }


def count_differences(findings: Mapping[str, Any]) -> dict[str, int]:
    """How many differences, and how many of them break users (for ``--fail-on``)."""
    release = findings.get("release")
    if release:
        rows = [*release["symbols"]["added"], *release["symbols"]["removed"], *release["symbols"]["moved"],
                *release["symbols"]["renamed"], *release["symbols"]["signatures"], *release["structs"]["changed"],
                *release["structs"]["removed"], *release["structs"]["added"], *release["metrics"]["added"],
                *release["metrics"]["removed"], *release["metrics"]["renamed"], *release["metrics"]["retyped"],
                *release["orphaned_thresholds"]]
        drift = len(release["layer_drift"]["changed"])
        return {"any": len(rows) + drift, "breaking": sum(1 for r in rows if r.get("breaking"))}
    layers = findings["layers"]
    gaps = len(layers["gaps"]["a"]) + len(layers["gaps"]["b"])
    concepts = len(findings["concepts"]["only_a"]) + len(findings["concepts"]["only_b"])
    ga, gb = findings["graph"]["a"], findings["graph"]["b"]
    graph = int(ga["nodes_by_kind"] != gb["nodes_by_kind"] or ga["edges_by_kind"] != gb["edges_by_kind"])
    ta, tb = findings["telemetry"]["a"], findings["telemetry"]["b"]
    metrics = len({m["name"] for m in ta["metrics"]} ^ {m["name"] for m in tb["metrics"]})
    sa = {(s["qualname"], s["size"]) for f in findings["structs"]["families"] for s in f["a"]["structs"]}
    sb = {(s["qualname"], s["size"]) for f in findings["structs"]["families"] for s in f["b"]["structs"]}
    return {"any": gaps + concepts + graph + metrics + len(sa ^ sb), "breaking": 0}


# ---------------------------------------------------------------------------------------- takeaways


def _family(side: Mapping[str, Any], noun: bool = True) -> str:
    """"3 structs totalling 560 bytes", saying how many have a layout when not all do."""
    count = _plural(side["count"], "struct") if noun else f"{side['count']:,}"
    if side["resolved"] == side["count"]:
        return f"{count} totalling {side['total_bytes']:,} bytes"
    if not side["resolved"]:
        return f"{count} (none with a resolved layout)"
    return f"{count} ({side['resolved']:,} with a layout, totalling {side['total_bytes']:,} bytes)"


def compute_takeaways(f: Mapping[str, Any]) -> list[dict[str, str]]:
    """Short sentences built only from the numbers above, each pointing at the section behind it."""
    la, lb = f["systems"][0]["label"], f["systems"][1]["label"]
    out: list[dict[str, str]] = []

    def say(text: str, ref: str) -> None:
        out.append({"text": text, "ref": ref})

    release = f.get("release")
    if release:
        sym = release["symbols"]
        breaking_removed = sum(1 for r in sym["removed"] if r["breaking"])
        say(f"From {la} to {lb}: {_plural(len(sym['added']), 'symbol')} added, {len(sym['removed']):,} removed "
            f"({breaking_removed:,} public), {len(sym['moved']):,} moved, {len(sym['renamed']):,} renamed.",
            "release-symbols")
        if sym["signatures"]:
            nb = sum(1 for r in sym["signatures"] if r["breaking"])
            say(f"{_plural(len(sym['signatures']), 'Python signature')} changed; {nb:,} of them can break existing "
                f"callers (a parameter removed, reordered or newly required).", "release-signatures")
        st = release["structs"]
        if st["changed"] or st["removed"] or st["added"]:
            nb = sum(1 for r in st["changed"] if r["breaking"]) + len(st["removed"])
            say(f"Structs: {_plural(len(st['changed']), 'layout')} changed, {len(st['removed']):,} removed, "
                f"{len(st['added']):,} added; {nb:,} of these break the ABI (size, alignment, member offsets or a "
                f"removed type).", "release-structs")
        me = release["metrics"]
        if any(me[k] for k in ("added", "removed", "renamed", "retyped")):
            broken = len(me["removed"]) + len(me["renamed"]) + len(me["retyped"])
            say(f"Telemetry: {_plural(len(me['added']), 'metric')} added, {len(me['removed']):,} removed, "
                f"{len(me['renamed']):,} renamed, {len(me['retyped']):,} retyped"
                + (f"; {broken:,} of these break dashboards and alerts that read them." if broken else
                   "; no existing metric changed name or type."), "release-metrics")
        else:
            say(f"Telemetry: the {_plural(len(f['telemetry']['b']['metrics']), 'metric')} keep their names and types.",
                "release-metrics")
        if release["orphaned_thresholds"]:
            say(f"{_plural(len(release['orphaned_thresholds']), 'threshold')} read a metric that {lb} no longer "
                f"defines.", "release-thresholds")
        drift = release["layer_drift"]
        if drift["changed"]:
            say(f"Layer drift: {_plural(len(drift['changed']), 'module')} changed role; "
                f"{drift['added_modules']:,} modules added, {drift['removed_modules']:,} removed.", "release-layers")
    layers = f["layers"]
    ra, rb = layers["roles"]["a"], layers["roles"]["b"]
    if ra or rb:
        aligned_roles = [r["role"] for r in layers["rows"] if r["aligned"]]
        text = (f"{la} partitions its code into {_plural(ra, 'architectural layer')} and {lb} into {rb:,}, "
                f"with {_plural(len(aligned_roles), 'directly aligned role')}")
        text += f" ({', '.join(aligned_roles)})." if aligned_roles else "."
        say(text, "layers")
        for side, label in (("a", la), ("b", lb)):
            if layers["gaps"][side]:
                say(f"{label} has no layer for: {', '.join(layers['gaps'][side])}.", "layers")
    else:
        say("Neither evidence bundle carries layer records, so no roles could be aligned.", "layers")
    if not release:
        for family in f["structs"]["families"]:
            if family["tag"] == "untagged":
                continue
            fa, fb = family["a"], family["b"]
            tag = family["tag"]
            if fa["count"] and fb["count"]:
                say(f"Struct family {tag}: {la} documents {_family(fa)}, {lb} {_family(fb, noun=False)}.",
                    f"structs-{tag}")
            else:
                have, hl, lack = (fa, la, lb) if fa["count"] else (fb, lb, la)
                say(f"Struct family {tag}: {hl} documents {_family(have)}, whereas {lack} exposes none.",
                    f"structs-{tag}")
        totals = f["structs"]["totals"]
        if not totals["a"]["count"] and not totals["b"]["count"]:
            say("No struct layouts in either evidence bundle, so no byte maps could be compared.", "structs")
    ta, tb = f["telemetry"]["a"], f["telemetry"]["b"]

    def tele(t: Mapping[str, Any]) -> str:
        dominant = f"{t['dominant_type']} dominant" if t["dominant_type"] else "none dominant"
        return (f"{_plural(len(t['metrics']), 'metric')} ({dominant}) with {_plural(len(t['thresholds']), 'threshold')},"
                f" {t['with_threshold']:,} metric(s) covered by one")

    say(f"Production telemetry: {la} specifies {tele(ta)}; {lb} specifies {tele(tb)}.", "telemetry")
    cross = [r for r in f["telemetry"]["crosswalk"] if not r["same_name"]]
    if cross:
        best = cross[0]
        note = f" ({best['unit_note']})" if best["unit_note"] else ""
        say(f"Metric crosswalk: {_plural(len(cross), 'pair')} of metrics measure the same thing under different "
            f"names; the closest is {best['a']['name']} and {best['b']['name']}{note}.", "crosswalk")
    ga, gb = f["graph"]["a"], f["graph"]["b"]

    def graph(g: Mapping[str, Any]) -> str:
        kinds = g["nodes_by_kind"]
        return (f"{g['nodes']:,} symbols ({kinds.get('class', 0):,} classes, {kinds.get('function', 0):,} functions, "
                f"{kinds.get('method', 0):,} methods) across {g['edges']:,} edges")

    say(f"Symbol graph: {la} maps {graph(ga)}, compared with {graph(gb)} in {lb}.", "graph")
    for side, label, g in (("a", la, ga), ("b", lb, gb)):
        if g["central"]:
            top = g["central"][0]
            say(f"Most depended-upon symbol in {label}: {top['name']} ({top['kind']}, "
                f"{_plural(top['dependents'], 'dependent')}).", f"graph-{side}")
        if g["layer_cycles"]:
            biggest = max(g["layer_cycles"], key=lambda c: len(c["layers"]))
            text = (f"{label} has {_plural(len(g['layer_cycles']), 'cycle')} between layers; the largest joins "
                    f"{len(biggest['layers'])} layers ({', '.join(biggest['layers'])})")
            if biggest["mutual"]:
                top = biggest["mutual"][0]
                text += (f"; {_plural(len(biggest['mutual']), 'pair')} of layers depend on each other directly, "
                         f"most of all {top['a']} and {top['b']} ({_plural(top['a_to_b'], 'edge')} one way, "
                         f"{top['b_to_a']:,} the other)")
            say(text + ".", f"graph-{side}")
        if g["binds"]:
            say(f"{label} binds Python to native code across {_plural(g['binds'], 'cross-language edge')}.",
                f"graph-{side}")
    c = f["concepts"]
    if c["shared"] or c["only_a"] or c["only_b"]:
        text = f"Shared core concepts: [{', '.join(r['id'] for r in c['shared'])}]."
        if c["only_a"]:
            text += f" Only in {la}: [{', '.join(r['id'] for r in c['only_a'])}]."
        if c["only_b"]:
            text += f" Only in {lb}: [{', '.join(r['id'] for r in c['only_b'])}]."
        say(text, "concepts")
    return out
