"""The evidence bundle: ``evidence.json``, written deterministically and validated when read back."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from extractor.context import Context
from extractor.evidence.schema import SCHEMA_VERSION, record_kinds
from extractor.model import Diagnostic, Step, edge_json, edge_key, node_json, node_key, to_jsonable
from extractor.support.storage import write_atomic


def build_bundle(ctx: Context, steps: Sequence[Step], diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """Assemble the bundle from every step's contribution: one list of records per kind the steps
    declare (empty when the kind found nothing). Everything is sorted by stable keys."""
    nodes: dict[str, Any] = {}
    edges = set()
    records: dict[str, list[Any]] = {kind.key: [] for kind in record_kinds(steps)}
    all_diagnostics = set(diagnostics)
    stats: dict[str, Any] = {}
    for step in steps:
        result = ctx.results[step.name]
        for node in result.nodes:
            # The first step that names a node describes it; later ones (an external placeholder
            # for something another language defines) do not overwrite it.
            nodes.setdefault(node.id, node)
        edges.update(result.edges)
        if step.records is not None:
            records[step.records.key].extend(to_jsonable(r) for r in result.records)
        all_diagnostics.update(result.diagnostics)
        if result.stats:
            stats[step.name] = to_jsonable(result.stats)
    node_list = [node_json(n) for n in sorted(nodes.values(), key=node_key)]
    edge_list = [edge_json(e) for e in sorted(edges, key=edge_key)]
    by_language = Counter(f.language.value for f in ctx.files)
    lines = Counter()
    for f in ctx.files:
        lines[f.language.value] += f.lines
    stats["files"] = dict(sorted(by_language.items()))
    stats["lines"] = dict(sorted(lines.items()))
    stats["nodes_by_kind"] = dict(sorted(Counter(n["kind"] for n in node_list).items()))
    stats["nodes_by_language"] = dict(sorted(Counter(n["language"] for n in node_list).items()))
    stats["edges_by_kind"] = dict(sorted(Counter(e["kind"] for e in edge_list).items()))
    stats["diagnostics_by_code"] = dict(sorted(Counter(d.code for d in all_diagnostics).items()))
    return {
        "schema_version": SCHEMA_VERSION,
        "system": {"name": ctx.name, "version": ctx.version},
        "sources": [s.record() for s in ctx.sources],
        "graph": {"directed": True, "multigraph": True, "graph": {}, "nodes": node_list, "edges": edge_list},
        **{key: sorted(value, key=_record_key) for key, value in records.items()},
        "diagnostics": [to_jsonable(d) for d in sorted(all_diagnostics)],
        "stats": stats,
    }


def _record_key(record: Any) -> tuple:
    if isinstance(record, dict):
        return (str(record.get("path", "")), int(record.get("line", 0) or 0),
                json.dumps(record, sort_keys=True, default=str))
    return ("", 0, json.dumps(record, sort_keys=True, default=str))


def dumps_bundle(bundle: dict[str, Any]) -> str:
    """JSON with sorted keys, one list item per line: stable bytes, and diffs that read well."""
    return _dump(bundle, 0) + "\n"


_COMPACT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _dump(value: Any, depth: int) -> str:
    compact = _COMPACT.encode
    if isinstance(value, dict) and depth < 2:
        if not value:
            return "{}"
        inner = ",\n".join(f"{json.dumps(k)}:{_dump(value[k], depth + 1)}" for k in sorted(value))
        return "{\n" + inner + "\n}"
    if isinstance(value, list) and value and depth < 3:
        return "[\n" + ",\n".join(compact(v) for v in value) + "\n]"
    return compact(value)


def write_bundle(bundle: dict[str, Any] | None, out_dir: Path, data: bytes | str | None = None) -> Path:
    """Write ``evidence.json`` whole: ``data`` as it is when the caller has the serialised bundle (a
    warm run's, straight from the memo), else the bundle serialised."""
    if data is None:
        if bundle is None:
            raise ValueError("write_bundle needs the bundle or its serialised bytes")
        data = dumps_bundle(bundle)
    return write_atomic(out_dir / "evidence.json", data)
