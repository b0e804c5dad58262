"""The API diff's protobuf rules: fixtures/proto_release_v1 against proto_release_v2 (one change of
each kind, with the exact rows), a table of small .proto pairs for protobuf's compatibility lists,
and ``archdiff compare --fail-on breaking`` failing on a field renumbered and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from archdiff.cli import cli
from comparator.apidiff import Breakage, find_breakages
from comparator.apidiff import BreakageKind as K
from comparator.apidiff.rules import INFORMATIONAL, PROTOBUF
from extractor.model import Edge, Location, Node
from extractor.proto import build_proto_graph, read_proto
from tests.conftest import FIXTURES

V1, V2 = FIXTURES / "proto_release_v1", FIXTURES / "proto_release_v2"
FILE = "api/inference.proto"
RENUMBERED = ("int64 model_version = 2;", "int64 model_version = 12;")


def graph(files: dict[str, bytes]) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    """The proto step's graph of these files (the pipeline's, without its cache and pool)."""
    built = build_proto_graph([(path, read_proto(data)) for path, data in sorted(files.items())])
    return built.nodes, built.edges


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.proto"))}


def diff(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[Breakage, ...]:
    return find_breakages(*graph(old), *graph(new))


def at(line: int | None) -> Location | None:
    return Location(FILE, line) if line is not None else None


# (symbol path, kind, breaking, old, new, old line, new line) of every row of the fixture pair
RELEASE_ROWS = {
    ("rel.api.Admin", K.OBJECT_REMOVED, True, "interface", "", 15, None),
    ("rel.api.Inference.Unload", K.OBJECT_REMOVED, True, "method", "", 12, None),
    ("rel.api.Legacy", K.OBJECT_REMOVED, True, "struct", "", 61, None),
    ("rel.api.Inference.Load", K.RPC_REQUEST_CHANGED, True, "LoadRequest", "ModelRef", 11, 11),
    ("rel.api.Inference.Status", K.RPC_RESPONSE_CHANGED, True, "StatusResponse", "ServerStatus", 10, 10),
    ("rel.api.Inference.Stream", K.RPC_STREAMING_CHANGED, True, "stream", "unary", 9, 9),
    ("rel.api.InferRequest.model_version", K.FIELD_RENUMBERED, True, "number 2", "number 12", 21, 19),
    ("rel.api.InferRequest.id", K.FIELD_RETYPED, True, "string", "int64", 23, 21),
    # wire-compatible (protobuf): listed, not breaking
    ("rel.api.InferRequest.priority", K.FIELD_RETYPED, False, "int32", "uint64", 22, 20),
    ("rel.api.InferRequest.level", K.FIELD_RETYPED, False, "Priority", "int32", 29, 25),
    ("rel.api.InferRequest.inputs", K.FIELD_LABEL_CHANGED, True, "repeated", "singular", 24, 22),
    ("rel.api.InferRequest.tags", K.FIELD_LABEL_CHANGED, False, "repeated", "singular", 25, 23),
    # the same number under another name: a ProtoJSON/text-format change, not a wire one
    ("rel.api.InferRequest.trace_id", K.FIELD_RENAMED, False, "trace", "trace_id", 26, 24),
    # removed: breaking unless the new message reserves the number (the new location is that message)
    ("rel.api.InferRequest.raw", K.FIELD_REMOVED, False, "bytes raw = 8", "number 8 reserved", 27, 14),
    ("rel.api.InferRequest.user", K.FIELD_REMOVED, True, "string user = 9", "number 9 not reserved", 28, 14),
    ("rel.api.InferResponse.error", K.FIELD_ONEOF_CHANGED, True, "no oneof", "oneof result", 39, 34),
    ("rel.api.Priority.PRIORITY_LOW", K.ENUM_VALUE_RENUMBERED, True, "number 1", "number 3", 44, 40),
    ("rel.api.Priority.PRIORITY_HIGH", K.ENUM_VALUE_REMOVED, True, "PRIORITY_HIGH = 2", "number 2 not reserved",
     45, 38),
    ("rel.api.Priority.PRIORITY_CRITICAL", K.ENUM_VALUE_RENAMED, False, "PRIORITY_URGENT", "PRIORITY_CRITICAL", 46,
     42),
}


def test_the_release_pair_gives_one_row_per_change_and_nothing_else():
    rows = diff(tree(V1), tree(V2))
    assert {(b.path, b.kind, b.breaking, b.old, b.new, b.old_location, b.new_location) for b in rows} == \
        {(p, k, br, o, n, at(ol), at(nl)) for p, k, br, o, n, ol, nl in RELEASE_ROWS}
    # `Priority priority` respelled `.rel.api.Priority priority`, the enum value added, the messages
    # added, the service's rpc removed with it (one row, the service's): no row of their own
    assert not [b for b in rows if b.path in ("rel.api.InferResponse.priority", "rel.api.Priority.PRIORITY_MEDIUM",
                                              "rel.api.Admin.Ping", "rel.api.ServerStatus")]
    assert all(b.language == "proto" for b in rows)


def test_rows_name_the_symbols_and_say_which_case_of_the_rule_applied():
    rows = {b.path: b for b in diff(tree(V1), tree(V2))}
    renamed = rows["rel.api.InferRequest.trace_id"]
    assert (renamed.symbol, renamed.old_symbol) == ("proto:rel.api.InferRequest.trace_id",
                                                    "proto:rel.api.InferRequest.trace")
    assert "ProtoJSON" in renamed.why
    removed = rows["rel.api.InferRequest.user"]
    assert removed.symbol == removed.old_symbol == "proto:rel.api.InferRequest.user"
    assert "not reserved" in removed.why
    assert rows["rel.api.InferRequest.raw"].why == "its number is reserved in the new release: protobuf's " \
                                                   "wire-safe deletion"
    assert rows["rel.api.InferRequest.priority"].why.startswith("int32, uint32, int64, uint64 and bool are "
                                                                "wire-compatible")
    assert rows["rel.api.Inference.Unload"].why.endswith("the server answers UNIMPLEMENTED")
    assert rows["rel.api.InferRequest.model_version"].explain().startswith(
        "api/inference.proto:19: rel.api.InferRequest.model_version: field renumbered: number 2 -> number 12 "
        "[breaking: the number is the field on the wire")


def proto(body: str) -> dict[str, bytes]:
    return {"a.proto": f'syntax = "proto2";\npackage p;\n{body}\n'.encode()}


# (case, old body, new body, the rows expected as (symbol path, kind, breaking))
CASES = [
    ("int32 to bool", "message M { optional int32 f = 1; }", "message M { optional bool f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, False)}),
    ("sint32 to sint64", "message M { optional sint32 f = 1; }", "message M { optional sint64 f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, False)}),
    ("sint32 to int32 (zigzag against plain varint)", "message M { optional sint32 f = 1; }",
     "message M { optional int32 f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("fixed32 to sfixed32", "message M { optional fixed32 f = 1; }", "message M { optional sfixed32 f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, False)}),
    ("fixed64 to sfixed64", "message M { optional fixed64 f = 1; }", "message M { optional sfixed64 f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, False)}),
    ("fixed32 to fixed64 (four bytes against eight)", "message M { optional fixed32 f = 1; }",
     "message M { optional fixed64 f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("string to bytes", "message M { optional string f = 1; }", "message M { optional bytes f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, False)}),
    ("message to bytes", "message N {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage M { optional bytes f = 1; }", {("p.M.f", K.FIELD_RETYPED, False)}),
    ("message to string", "message N {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage M { optional string f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("enum to uint64", "enum E { A = 0; }\nmessage M { optional E f = 1; }",
     "enum E { A = 0; }\nmessage M { optional uint64 f = 1; }", {("p.M.f", K.FIELD_RETYPED, False)}),
    ("enum to bool (not in protobuf's list)", "enum E { A = 0; }\nmessage M { optional E f = 1; }",
     "enum E { A = 0; }\nmessage M { optional bool f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("another message of the same shape", "message N {}\nmessage O {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage O {}\nmessage M { optional O f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("the same text now naming a nested message", "message N {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage M { message N {} optional N f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("a type respelled", "message N {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage M { optional .p.N f = 1; }", set()),
    ("map value int32 to int64", "message M { map<string, int32> f = 1; }",
     "message M { map<string, int64> f = 1; }", {("p.M.f", K.FIELD_RETYPED, False)}),
    ("map key string to int32", "message M { map<string, int32> f = 1; }",
     "message M { map<int32, int32> f = 1; }", {("p.M.f", K.FIELD_RETYPED, True)}),
    ("map to its repeated entry (the entry's shape is not checked)",
     "message E { optional string key = 1; optional int32 value = 2; }\nmessage M { map<string, int32> f = 1; }",
     "message E { optional string key = 1; optional int32 value = 2; }\nmessage M { repeated E f = 1; }",
     {("p.M.f", K.FIELD_RETYPED, True)}),
    ("repeated int32 to optional (packed)", "message M { repeated int32 f = 1; }",
     "message M { optional int32 f = 1; }", {("p.M.f", K.FIELD_LABEL_CHANGED, True)}),
    ("optional message to repeated", "message N {}\nmessage M { optional N f = 1; }",
     "message N {}\nmessage M { repeated N f = 1; }", {("p.M.f", K.FIELD_LABEL_CHANGED, False)}),
    ("optional to required", "message M { optional int32 f = 1; }", "message M { required int32 f = 1; }",
     {("p.M.f", K.FIELD_LABEL_CHANGED, True)}),
    ("a lone field into a new oneof", "message M { optional int32 f = 1; }",
     "message M { oneof o { int32 f = 1; } }", {("p.M.f", K.FIELD_ONEOF_CHANGED, False)}),
    ("two fields into a new oneof", "message M { optional int32 f = 1; optional int32 g = 2; }",
     "message M { oneof o { int32 f = 1; int32 g = 2; } }",
     {("p.M.f", K.FIELD_ONEOF_CHANGED, True), ("p.M.g", K.FIELD_ONEOF_CHANGED, True)}),
    ("out of a oneof it was alone in", "message M { oneof o { int32 f = 1; } }",
     "message M { optional int32 f = 1; }", {("p.M.f", K.FIELD_ONEOF_CHANGED, False)}),
    ("removed, its number in a reserved range", "message M { optional int32 f = 11; }",
     "message M { reserved 10 to 12; }", {("p.M.f", K.FIELD_REMOVED, False)}),
    ("removed, its number reserved up to max", "message M { optional int32 f = 11; }",
     "message M { reserved 5 to max; }", {("p.M.f", K.FIELD_REMOVED, False)}),
    ("removed, its number another's now", "message M { optional int32 f = 1; optional string g = 2; }",
     "message M { optional string g = 1; }",
     {("p.M.f", K.FIELD_REMOVED, True), ("p.M.g", K.FIELD_RENUMBERED, True)}),
    ("renamed and retyped: the number reused", "message M { optional int32 f = 1; }",
     "message M { optional string g = 1; }", {("p.M.g", K.FIELD_RENAMED, False), ("p.M.g", K.FIELD_RETYPED, True)}),
    ("a field added (no row) beside one renumbered", "message M { optional int32 f = 1; }",
     "message M { optional int32 f = 2; optional int32 g = 3; }", {("p.M.f", K.FIELD_RENUMBERED, True)}),
    ("an enum value added (no row) beside one renumbered", "enum E { A = 0; B = 1; }",
     "enum E { A = 0; B = 2; C = 3; }", {("p.E.B", K.ENUM_VALUE_RENUMBERED, True)}),
    ("a message became an enum", "message M {}", "enum M { A = 0; }", {("p.M", K.OBJECT_KIND_CHANGED, True)}),
    ("client streaming added", "message N {}\nservice S { rpc R(N) returns (N); }",
     "message N {}\nservice S { rpc R(stream N) returns (N); }", {("p.S.R", K.RPC_STREAMING_CHANGED, True)}),
    ("server streaming added, the types respelled (no row)", "message N {}\nservice S { rpc R(N) returns (N); }",
     "message N {}\nservice S { rpc R(.p.N) returns (stream p.N); }", {("p.S.R", K.RPC_STREAMING_CHANGED, True)}),
    ("an rpc's response another message", "message N {}\nmessage O {}\nservice S { rpc R(N) returns (N); }",
     "message N {}\nmessage O {}\nservice S { rpc R(N) returns (O); }", {("p.S.R", K.RPC_RESPONSE_CHANGED, True)}),
]


@pytest.mark.parametrize("old, new, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(old, new, expected):
    assert {(b.path, b.kind, b.breaking) for b in diff(proto(old), proto(new))} == expected


def test_every_protobuf_kind_has_a_breaking_case():
    cases = {e[1] for c in CASES for e in c[3] if e[2]} | {r[1] for r in RELEASE_ROWS if r[2]}
    assert cases >= PROTOBUF - INFORMATIONAL
    assert PROTOBUF & INFORMATIONAL == {K.FIELD_RENAMED, K.ENUM_VALUE_RENAMED}


def compare(tmp_path: Path, new_text: str, fail_on: str = "breaking") -> tuple[int, dict, str]:
    """``archdiff compare`` of the release-1 fixture against it with ``new_text`` as its .proto."""
    old, new = tmp_path / "v1" / "rel", tmp_path / "v2" / "rel"
    shutil.copytree(V1, old)
    shutil.copytree(V1, new)
    (new / FILE).write_text(new_text)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["compare", str(old), str(new), "-o", str(out), "--format", "json,md",
                                      "--mode", "release", "--fail-on", fail_on, "-j", "1",
                                      "--cache-dir", str(tmp_path / "cache")], catch_exceptions=False)
    return result.exit_code, json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_compare_fails_on_a_field_renumbered_alone(tmp_path):
    text = (V1 / FILE).read_text()
    assert text.count(RENUMBERED[0]) == 1
    # the release against an unchanged copy of itself passes: the failure below is the renumbering's
    code, report, _markdown = compare(tmp_path / "same", text)
    assert (code, report["differences"]["breaking"], report["release"]["api"]["changes"]) == (0, 0, [])
    code, report, markdown = compare(tmp_path / "renumbered", text.replace(*RENUMBERED))
    assert code == 1
    assert report["differences"]["breaking"] == report["release"]["api"]["breaking"] == 1
    (row,) = report["release"]["api"]["changes"]
    assert (row["symbol"], row["rule"], row["breaking"], row["old"], row["new"], row["path"], row["line"]) == \
        ("rel.api.InferRequest.model_version", "field-renumbered", True, "number 2", "number 12", FILE, 21)
    assert "| rel.api.InferRequest.model\\_version | field renumbered |" in markdown

