"""The numbers of the timeline: one row per release, read from its evidence, and one per pair of
consecutive releases, read from the findings of their comparison. Computed once, when the release
or the pair is processed, and kept in the state file, so a later run draws the whole history
without opening old evidence again.

Nothing here recomputes what the extractor or the comparator states: symbols per layer are the
graph's nodes counted by the role the layers step gave their file; breaking changes are the
comparison's ``breaking`` rows, counted per part of the release section.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from extractor.evidence.read import Evidence
from extractor.layers.records import UNASSIGNED, role_by_path
from extractor.model import EdgeKind, NodeKind
from extractor.layers.records import LAYERS
from extractor.structs.records import STRUCTS
from extractor.telemetry.records import METRICS

# Nodes that are not symbols of the system: placeholders for what it calls outside itself.
_NOT_SYMBOLS = frozenset({NodeKind.EXTERNAL.value})


def release_row(evidence: Evidence) -> dict[str, Any]:
    """What the timeline shows of one release."""
    roles = role_by_path(evidence.of(LAYERS))
    titles = {layer.role: layer.title for layer in evidence.of(LAYERS)}
    apart = sorted({layer.role for layer in evidence.of(LAYERS) if layer.apart})
    per_layer: Counter[str] = Counter()
    public = with_api = 0
    for node in evidence.graph.nodes:
        if node.kind.value in _NOT_SYMBOLS or not node.path:
            continue
        per_layer[roles.get(node.path, UNASSIGNED)] += 1
        if node.api:
            with_api += 1
            public += node.api.startswith("public")
    metrics_by_type = Counter(m.type.value for m in evidence.of(METRICS))
    return {
        "files": sum(evidence.stats["files"].values()),
        "nodes": len(evidence.graph.nodes),
        "edges": len(evidence.graph.edges),
        "diagnostics": len(evidence.diagnostics),
        "layers": dict(sorted(per_layer.items())),
        "layer_titles": {role: titles.get(role, role) for role in sorted(per_layer)},
        "apart": [role for role in apart if role in per_layer],
        # ``api`` is written only for symbols whose language step decides it (Python): without any
        # such node the size of the public API is unknown, not zero.
        "api": {"public": public, "decided": with_api},
        "metrics": {"total": len(evidence.of(METRICS)), "by_type": dict(sorted(metrics_by_type.items()))},
        "structs": {"total": len(evidence.of(STRUCTS)),
                    "resolved": sum(1 for s in evidence.of(STRUCTS) if s.method.value != "unresolved")},
        "binds": sum(1 for e in evidence.graph.edges if e.kind is EdgeKind.BINDS),
        "commits": sorted({s.commit for s in evidence.sources if s.commit}),
    }


def pair_row(findings: Mapping[str, Any]) -> dict[str, Any]:
    """What the timeline shows of one comparison of consecutive releases."""
    release = findings.get("release") or {}
    full = (findings.get("capped") or {}).get("lists", {})

    def length(path: str) -> int:
        value: Any = release
        for part in path.split("."):
            value = value.get(part, []) if isinstance(value, Mapping) else []
        return full.get(f"release.{path}", len(value) if isinstance(value, list) else 0)

    breaking = {area: count for area, count in sorted(_breaking_rows(release).items()) if count}
    return {
        "differences": dict(findings["differences"]),
        "breaking": breaking,  # rows per part of the release section (lists cut at the cap count what is shown)
        "symbols": {"added": length("symbols.added"), "removed": length("symbols.removed")},
        # changes to public symbols both releases have (parameters, attributes, kinds), by the api kind
        "api": {"changes": int((release.get("api") or {}).get("total", 0)),
                "breaking": int((release.get("api") or {}).get("breaking", 0))},
        "metrics": {"added": length("metrics.added"), "removed": length("metrics.removed"),
                    "renamed": length("metrics.renamed"), "retyped": length("metrics.retyped")},
        "structs": {"changed": length("structs.changed"), "added": length("structs.added"),
                    "removed": length("structs.removed")},
        "layer_moves": length("layer_drift.changed"),
        "takeaways": [t["text"] for t in findings.get("takeaways", [])[:3]],
    }


def _breaking_rows(release: Mapping[str, Any]) -> Counter[str]:
    counts: Counter[str] = Counter()

    def walk(value: Any, area: str) -> None:
        if isinstance(value, Mapping):
            if value.get("breaking") is True:
                counts[area] += 1
            for item in value.values():
                if isinstance(item, (list, Mapping)):
                    walk(item, area)
        elif isinstance(value, list):
            for item in value:
                walk(item, area)

    for area, section in release.items():
        walk(section, area)
    return counts


def build_timeline(system: str, spec: str, releases: Sequence[Mapping[str, Any]],
                   pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The timeline's data: ``releases`` in version order (``version``, ``name``, ``evidence``,
    ``row``), ``pairs`` of consecutive releases (``old``, ``new``, ``report``, ``row``); each pair is
    shown on its newer release, where its changes happened."""
    by_new = {p["new"]: p for p in pairs}
    rows = []
    for entry in releases:
        pair = by_new.get(entry["version"])
        rows.append({"version": entry["version"], "name": entry["name"], "evidence": entry["evidence"],
                     **entry["row"], "pair": None if pair is None else {"old": pair["old"], "report": pair["report"],
                                                                      **pair["row"]}})
    roles = sorted({role for r in rows for role in r["layers"]},
                   key=lambda role: (-max(r["layers"].get(role, 0) for r in rows), role))
    metric_types = sorted({t for r in rows for t in r["metrics"]["by_type"]})
    return {"system": system, "spec": spec, "releases": rows, "roles": roles, "metric_types": metric_types,
            "api_known": any(r["api"]["decided"] for r in rows)}
