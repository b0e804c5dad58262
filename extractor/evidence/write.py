"""The evidence bundle: ``evidence.json``, written deterministically and validated when read back.

The bytes are fixed by :func:`dumps_bundle`: keys sorted, the two outer levels one key per line,
list items one per line, each item compact JSON as ``json.JSONEncoder(sort_keys=True,
ensure_ascii=False, separators=(",", ":"))`` writes it. :func:`encode_bundle` writes those same
bytes straight from the records, without building the bundle as a dict first: the graph (97% of
vLLM's 50 MB: 48,000 nodes, 110,000 edges) goes through msgspec's JSON encoder item by item, the
rest (records, diagnostics, stats: a few hundred items) through ``json`` as before. The same
pass gives the bytes' zlib form for the whole-bundle memo, the graph's spans compressed where they
were encoded (extractor.support.deflate).

msgspec writes what ``json`` writes for everything a node or an edge holds: str (same escapes:
``\\"``, ``\\\\``, ``\\n``..., other control characters as ``\\u00XX``, nothing else escaped,
``\\u2028`` included), int of any size, bool, None, lists, tuples, str enums (their value) and
dataclasses (their fields, sorted like dict keys). It writes floats differently (``1e16`` where
``json`` writes ``1e+16``, ``null`` for NaN), so floats never take that path: the record types of
the graph hold none (tests/test_bundle_encoder.py checks their annotations, and compares both
encoders on adversarial values and on real evidence).
"""

from __future__ import annotations

import dataclasses
import json
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from extractor.context import Context
from extractor.graphparts import graph_parts
from extractor.evidence.schema import SCHEMA_VERSION, record_kinds
from extractor.model import Diagnostic, Edge, Node, Step, edge_json, node_fields, node_json, to_jsonable
from extractor.support.deflate import Deflated, DeflatingWriter, deflate
from extractor.support.forkmap import fork_map, spans
from extractor.support.storage import write_atomic


@dataclasses.dataclass(frozen=True, slots=True)
class EncodedBundle:
    data: bytes  # evidence.json, byte for byte
    summary: dict[str, Any]  # what a run reports without the bundle (pipeline.summarize_bundle's keys)
    compressed: bytes  # ``data`` as zlib data (``zlib.decompress`` gives it back): the memo's form


@dataclasses.dataclass(frozen=True, slots=True)
class _Parts:
    """Everything the bundle holds, sorted, the graph still as records."""

    nodes: list[Node]
    edges: list[Edge]
    head: dict[str, Any]  # every top-level key but the graph's nodes and edges, as JSON values


def _assemble(ctx: Context, steps: Sequence[Step], diagnostics: Iterable[Diagnostic]) -> _Parts:
    """Every step's contribution: one list of records per kind the steps declare (empty when the
    kind found nothing). Everything is sorted by stable keys."""
    nodes, edges = _graph(ctx, steps)
    return _Parts(nodes, edges, _head(ctx, steps, diagnostics, nodes, edges))


def _graph(ctx: Context, steps: Sequence[Step]) -> tuple[list[Node], list[Edge]]:
    graph = graph_parts(ctx, [step.name for step in steps])
    return sorted(graph.nodes.values(), key=_node_id), graph.edges


def _head(ctx: Context, steps: Sequence[Step], diagnostics: Iterable[Diagnostic], nodes: list[Node],
          edges: list[Edge]) -> dict[str, Any]:
    """Every top-level key of the bundle but the graph's nodes and edges, as JSON values."""
    records: dict[str, list[Any]] = {kind.key: [] for kind in record_kinds(steps)}
    all_diagnostics = set(diagnostics)
    stats: dict[str, Any] = {}
    for step in steps:
        result = ctx.results[step.name]
        if step.records is not None:
            records[step.records.key].extend(to_jsonable(r) for r in result.records)
        all_diagnostics.update(result.diagnostics)
        if result.stats:
            stats[step.name] = to_jsonable(result.stats)
    by_language = Counter(f.language.value for f in ctx.files)
    lines: Counter[str] = Counter()
    for f in ctx.files:
        lines[f.language.value] += f.lines
    stats["files"] = dict(sorted(by_language.items()))
    stats["lines"] = dict(sorted(lines.items()))
    # counted in C: an enum's .value is a Python property, its _value_ a plain attribute
    stats["nodes_by_kind"] = dict(sorted(Counter(map(_KIND_VALUE, nodes)).items()))
    stats["nodes_by_language"] = dict(sorted(Counter(map(_LANGUAGE, nodes)).items()))
    stats["edges_by_kind"] = dict(sorted(Counter(map(_KIND_VALUE, edges)).items()))
    stats["diagnostics_by_code"] = dict(sorted(Counter(d.code for d in all_diagnostics).items()))
    return {
        "schema_version": SCHEMA_VERSION,
        "system": {"name": ctx.name, "version": ctx.version},
        "sources": [s.record() for s in ctx.sources],
        "graph": {"directed": True, "multigraph": True, "graph": {}},
        **{key: sorted(value, key=_record_key) for key, value in records.items()},
        "diagnostics": [to_jsonable(d) for d in sorted(all_diagnostics)],
        "stats": stats,
    }


_node_id = operator.attrgetter("id")
_KIND_VALUE = operator.attrgetter("kind._value_")
_LANGUAGE = operator.attrgetter("language")


def build_bundle(ctx: Context, steps: Sequence[Step], diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """The bundle as JSON values (what :func:`encode_bundle` writes, parsed)."""
    parts = _assemble(ctx, steps, diagnostics)
    bundle = parts.head
    bundle["graph"]["nodes"] = [node_json(n) for n in parts.nodes]
    bundle["graph"]["edges"] = [edge_json(e) for e in parts.edges]
    return bundle


def encode_bundle(ctx: Context, steps: Sequence[Step], diagnostics: Iterable[Diagnostic]) -> EncodedBundle:
    """``evidence.json``'s bytes, as ``dumps_bundle(build_bundle(...))`` writes them, and the run's
    summary, without the bundle as a dict.

    The head (records, diagnostics, stats: every key but the graph's lists) is assembled and
    written to bytes by the driver while the children encode the graph (``fork_map``'s
    ``meanwhile``): on vLLM 0.06-0.09 s of the driver's that no longer comes before and after
    their round."""
    nodes, edges = _graph(ctx, steps)
    head: dict[str, Any] = {}
    encoded: dict[str, Any] = {}

    def assemble_head() -> None:
        head.update(_head(ctx, steps, diagnostics, nodes, edges))
        for key, value in head.items():
            if key != "graph":  # no encoded graph lines in it: _write would write what _dump does
                encoded[key] = _Encoded(_dump(value, 1).encode("utf-8"))

    node_lines, edge_lines = _encode_graph(nodes, edges, ctx.options.jobs, assemble_head)
    encoded["graph"] = {**head["graph"], "nodes": node_lines, "edges": edge_lines}
    # One buffer for the whole bundle, each encoded span of the graph let go once written into it:
    # chunks joined at the end held the bundle twice (vLLM: 50 MB more at the run's peak).
    # getvalue() hands over the buffer itself, no copy, when nothing else holds a view of it.
    out = DeflatingWriter()
    _write(encoded, 0, out)
    out.write(b"\n")
    summary = {"nodes": len(nodes), "edges": len(edges), "files": sum(head["stats"]["files"].values()),
               "diagnostics": head["diagnostics"]}
    return EncodedBundle(out.buffer.getvalue(), summary, out.zlib_data())


@dataclasses.dataclass(frozen=True, slots=True)
class _Encoded:
    """A value already written by :func:`_write` at its depth, as UTF-8."""

    data: bytes


def _encode_graph(nodes: list[Node], edges: list[Edge], jobs: int, meanwhile: Callable[[], None]
                  ) -> tuple[_Lines, _Lines]:
    """The nodes' lines and the edges' lines, encoded by spans in ``jobs`` forked children
    (extractor.support.forkmap) that inherit the sorted graph, ``meanwhile`` done by the driver
    as they work: the items of a span are encoded as in one process and the spans written in
    order, joined as ``_encode_items`` joins items, so the bytes are the same for any ``jobs``.
    Only bytes come back (49 MB on vLLM: a copy, no decode), each span with its compressed form
    for the memo (8 MB more: the driver compresses only the rest)."""
    node_spans, edge_spans = spans(len(nodes), jobs), spans(len(edges), jobs)

    def encode(task: tuple[bool, range]) -> tuple[bytearray, Deflated]:
        is_node, span = task
        if is_node:
            encoded = _encode_items(map(node_fields, nodes[span.start:span.stop]))
        else:
            encoded = _encode_items(edges[span.start:span.stop])
        return encoded, deflate(encoded)

    encoded = fork_map(encode, [(True, span) for span in node_spans] + [(False, span) for span in edge_spans], jobs,
                       meanwhile)
    return _Lines(encoded[:len(node_spans)]), _Lines(encoded[len(node_spans):])


def _record_key(record: Any) -> tuple:
    if isinstance(record, dict):
        return (str(record.get("path", "")), int(record.get("line", 0) or 0),
                json.dumps(record, sort_keys=True, default=str))
    return ("", 0, json.dumps(record, sort_keys=True, default=str))


def dumps_bundle(bundle: dict[str, Any]) -> str:
    """JSON with sorted keys, one list item per line: stable bytes, and diffs that read well."""
    return _dump(bundle, 0) + "\n"


_COMPACT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
# For nodes and edges only (see the module's docstring): order="sorted" sorts dict keys and
# dataclass fields as sort_keys=True sorts keys.
_GRAPH_ENCODER = msgspec.json.Encoder(order="sorted")


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


@dataclasses.dataclass(frozen=True, slots=True)
class _Lines:
    """A list whose items are encoded already: in parts, each its items' bytes joined by
    ",\\n" (none for an empty list), with those bytes compressed."""

    parts: list[tuple[bytearray, Deflated]]


def _encode_items(items: Iterable[Any]) -> bytearray:
    out = bytearray()
    encode_into = _GRAPH_ENCODER.encode_into
    for item in items:
        encode_into(item, out, -1)
        out += b",\n"
    del out[-2:]
    return out


def _write(value: Any, depth: int, out: DeflatingWriter) -> None:
    """:func:`_dump`, into ``out`` as UTF-8, with the items of :class:`_Lines` encoded by msgspec."""
    if isinstance(value, _Encoded):
        out.write(value.data)
        return
    if isinstance(value, _Lines):
        if value.parts:  # at depth 2 a list is one item per line, an empty one "[]": as _dump writes them
            out.write(b"[\n")
            for i, (part, deflated) in enumerate(value.parts):
                value.parts[i] = (bytearray(), deflated)  # written once, then let go: the bundle is held once
                if i:
                    out.write(b",\n")
                out.write_deflated(part, deflated)
            out.write(b"\n]")
        else:
            out.write(b"[]")
        return
    if isinstance(value, dict) and depth < 2:
        if not value:
            out.write(b"{}")
            return
        out.write(b"{\n")
        for i, key in enumerate(sorted(value)):
            out.write(f"{',' + chr(10) if i else ''}{json.dumps(key)}:".encode("utf-8"))
            _write(value[key], depth + 1, out)
        out.write(b"\n}")
        return
    out.write(_dump(value, depth).encode("utf-8"))


def write_bundle(bundle: dict[str, Any] | None, out_dir: Path, data: bytes | str | None = None) -> Path:
    """Write ``evidence.json`` whole: ``data`` as it is when the caller has the serialised bundle (a
    warm run's, straight from the memo), else the bundle serialised."""
    if data is None:
        if bundle is None:
            raise ValueError("write_bundle needs the bundle or its serialised bytes")
        data = dumps_bundle(bundle)
    return write_atomic(out_dir / "evidence.json", data)
