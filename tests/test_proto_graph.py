"""The protobuf part of the symbol graph on fixtures/proto_mini: ids, kinds, lines, field numbers,
streaming, imports, protoc's type scoping, and a file with a syntax error beside files still read."""

from __future__ import annotations

import pytest

from tests.native_support import edges, fixture_bundle, nodes

INF = "proto:mini.inference"
COMMON = "proto:mini.common"
API = "api/inference.proto"


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("proto_mini")


def test_files_packages_messages_enums_and_services_are_nodes_at_their_lines(bundle):
    found = nodes(bundle)
    expected = {
        "file:api/inference.proto": ("file", API, 0),
        "file:common/types.proto": ("file", "common/types.proto", 0),
        "file:broken/bad.proto": ("file", "broken/bad.proto", 0),  # not read, but a file of the system
        INF: ("namespace", API, 5),
        f"{INF}.Inference": ("interface", API, 13),
        f"{INF}.InferRequest": ("struct", API, 40),
        f"{INF}.InferRequest.Tensor": ("struct", API, 42),  # nested
        f"{INF}.Tensor": ("struct", API, 36),
        f"{INF}.Parameter.Kind": ("enum", API, 72),
        f"{INF}.Parameter.Kind.KIND_SYSTEM": ("attribute", API, 75),
        COMMON: ("namespace", "common/types.proto", 4),
        f"{COMMON}.Status": ("enum", "common/types.proto", 8),
        f"{COMMON}.Shape.Layout": ("struct", "common/types.proto", 15),  # a proto2 group's message
    }
    assert {k: (found[k]["kind"], found[k]["path"], found[k]["line"]) for k in expected if k in found} == expected
    assert all(n["language"] == "proto" for n in found.values() if n["path"].endswith(".proto"))
    proto = bundle["stats"]["proto"]
    assert (proto["messages"], proto["enums"], proto["services"], proto["rpcs"], proto["fields"]) == (9, 2, 1, 4, 21)
    # and the frontends that include them
    assert bundle["stats"]["files"] == {"cpp": 1, "proto": 3, "python": 1, "rust": 1}
    assert found[f"{INF}.Inference"]["doc"] == "The inference endpoints."
    assert found[f"{INF}.InferRequest.Tensor"]["doc"] == "One input of the request."
    assert found["file:api/inference.proto"]["tags"] == ["proto3"]


def test_fields_keep_their_number_type_and_label(bundle):
    found = nodes(bundle)
    shown = {nid: (found[nid]["signature"], found[nid].get("annotation"), found[nid]["tags"], found[nid]["line"])
             for nid in found if nid.startswith(f"{INF}.InferRequest.") or nid.startswith(f"{INF}.Parameter.")
             or nid == f"{COMMON}.Shape.layout" or nid == f"{COMMON}.http"}
    assert shown == {
        f"{INF}.InferRequest.Tensor": ("message Tensor", None, [], 42),
        f"{INF}.InferRequest.Tensor.name": ("string name = 1", "string", ["field", "number:1"], 43),
        f"{INF}.InferRequest.Tensor.shape": ("repeated int64 shape = 2", "int64", ["field", "number:2", "repeated"],
                                             44),
        f"{INF}.InferRequest.Tensor.parameters": ("map<string, Parameter> parameters = 3", "map<string, Parameter>",
                                                  ["field", "map", "number:3"], 45),
        f"{INF}.InferRequest.model_name": ("string model_name = 1", "string", ["field", "number:1"], 48),
        f"{INF}.InferRequest.inputs": ("repeated Tensor inputs = 2", "Tensor", ["field", "number:2", "repeated"], 49),
        f"{INF}.InferRequest.parameters": ("map<string, Parameter> parameters = 4", "map<string, Parameter>",
                                           ["field", "map", "number:4"], 50),
        f"{INF}.InferRequest.shape": (".mini.common.Shape shape = 5", ".mini.common.Shape", ["field", "number:5"], 51),
        f"{INF}.InferRequest.extra": ("google.protobuf.Any extra = 6", "google.protobuf.Any", ["field", "number:6"],
                                      52),
        f"{INF}.InferRequest.lost": ("Missing lost = 7", "Missing", ["field", "number:7"], 53),
        f"{INF}.Parameter.bool_param": ("bool bool_param = 1", "bool", ["field", "number:1", "oneof:choice"], 66),
        f"{INF}.Parameter.int64_param": ("int64 int64_param = 2", "int64", ["field", "number:2", "oneof:choice"], 67),
        f"{INF}.Parameter.string_param": ("string string_param = 3", "string", ["field", "number:3", "oneof:choice"],
                                          68),
        f"{INF}.Parameter.kind": ("Kind kind = 4", "Kind", ["field", "number:4"], 70),
        f"{INF}.Parameter.Kind": ("enum Kind", None, [], 72),
        f"{INF}.Parameter.Kind.KIND_UNSET": ("KIND_UNSET = 0", None, ["number:0"], 73),
        f"{INF}.Parameter.Kind.KIND_USER": ("KIND_USER = 1", None, ["number:1"], 74),
        f"{INF}.Parameter.Kind.KIND_SYSTEM": ("KIND_SYSTEM = -2", None, ["number:-2"], 75),
        f"{COMMON}.Shape.layout": ("optional group Layout layout = 2", "group Layout",
                                   ["field", "group", "number:2", "optional"], 15),
        f"{COMMON}.http": ("optional string http = 50001", "string",
                           ["extends:google.protobuf.MethodOptions", "extension", "field", "number:50001", "optional"],
                           22),
    }
    assert found[f"{INF}.InferResponse.top"]["tags"] == ["deprecated", "field", "number:3"]
    # `reserved 8, 10 to 12; reserved "old_field";`: what a release diff reads for a removed field
    assert found[f"{INF}.InferRequest"]["tags"] == ['reserved:"old_field"', "reserved:10..12", "reserved:8"]
    assert found[f"{COMMON}.Status.STATUS_FAILED"]["tags"] == ["deprecated", "number:1"]
    assert found[f"{INF}.Parameter.Kind.KIND_USER"]["value_kind"] == "enum-member"


def test_rpcs_say_what_each_side_streams(bundle):
    found = nodes(bundle)
    rpcs = {nid: (n["signature"], n["tags"], n["line"], n["params"][0]["annotation"], n["returns"])
            for nid, n in found.items() if nid.startswith(f"{INF}.Inference.")}
    assert rpcs == {
        f"{INF}.Inference.Live": ("(LiveRequest) returns (LiveResponse)", [], 15, "LiveRequest", "LiveResponse"),
        f"{INF}.Inference.Infer": ("(InferRequest) returns (InferResponse)", [], 17, "InferRequest", "InferResponse"),
        f"{INF}.Inference.StreamInfer": ("(stream InferRequest) returns (stream InferResponse)",
                                         ["client-streaming", "server-streaming"], 19, "InferRequest", "InferResponse"),
        f"{INF}.Inference.Watch": ("(LiveRequest) returns (stream mini.common.Status)",
                                   ["deprecated", "server-streaming"], 25, "LiveRequest", "mini.common.Status"),
    }
    assert found[f"{INF}.Inference.Live"]["doc"] == "Is the server live."
    assert (f"{INF}.Inference", f"{INF}.Inference.StreamInfer") in edges(bundle, "contains")


def test_imports_reach_the_fixture_file_or_an_external_node(bundle):
    found = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"]
             if e["kind"] == "imports" and e["path"].endswith(".proto")}
    assert found == {
        ("file:api/inference.proto", "file:common/types.proto", 7),
        ("file:api/inference.proto", "proto:google/protobuf/any.proto", 8),
        ("file:common/types.proto", "proto:google/protobuf/descriptor.proto", 6),
    }
    assert nodes(bundle)["proto:google/protobuf/any.proto"]["kind"] == "external"


def test_uses_edges_follow_protoc_scoping_and_unresolved_types_are_counted(bundle):
    uses = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "uses"}
    assert {
        (f"{INF}.Inference.Live", f"{INF}.LiveRequest", 15),
        (f"{INF}.Inference.Live", f"{INF}.LiveResponse", 15),
        (f"{INF}.Inference.Watch", f"{COMMON}.Status", 25),  # a partly qualified name, from the imported file
        # the nested Tensor shadows the top-level one inside InferRequest ...
        (f"{INF}.InferRequest", f"{INF}.InferRequest.Tensor", 49),
        # ... and not in InferResponse, which names the nested one as InferRequest.Tensor
        (f"{INF}.InferResponse", f"{INF}.InferRequest.Tensor", 59),
        (f"{INF}.InferResponse", f"{INF}.Tensor", 61),
        (f"{INF}.InferRequest", f"{COMMON}.Shape", 51),  # fully qualified: .mini.common.Shape
        (f"{INF}.InferRequest", f"{INF}.Parameter", 50),  # a map's value type
        (f"{INF}.InferRequest.Tensor", f"{INF}.Parameter", 45),  # from the nested message itself
        (f"{INF}.Parameter", f"{INF}.Parameter.Kind", 70),  # an enum declared after its use
        (f"{COMMON}.Shape", f"{COMMON}.Shape.Layout", 15),
        (f"{INF}.InferRequest", "proto:google.protobuf.Any", 52),  # a well-known type of an imported file
    } <= uses
    assert not any(target.endswith("Missing") for _s, target, _l in uses)
    assert len(uses) == 18
    proto = bundle["stats"]["proto"]
    assert (proto["type_refs_resolved"], proto["type_refs_external"], proto["type_refs_unresolved"]) == (17, 1, 1)
    assert (proto["imports_resolved"], proto["imports_external"]) == (1, 2)


def test_a_file_with_a_syntax_error_is_a_diagnostic_with_its_line_and_the_others_are_read(bundle):
    problems = [d for d in bundle["diagnostics"] if d["path"].endswith(".proto")]
    assert problems == [{"path": "broken/bad.proto", "line": 7, "code": "syntax-error", "severity": "error",
                         "message": "not read: expected ';' after field 'name', found 'int32' at 7:3 | int32 id = 2;"}]
    assert not any(n["path"] == "broken/bad.proto" and n["kind"] != "file" for n in bundle["graph"]["nodes"])
    assert bundle["stats"]["proto"]["files_with_syntax_errors"] == 1


def test_every_node_has_a_path_and_every_definition_a_line(bundle):
    for n in bundle["graph"]["nodes"]:
        if n["kind"] == "external":
            continue
        assert n["path"], n["id"]
        assert n["line"] > 0 or n["kind"] == "file", n["id"]


def test_an_include_of_a_protoc_generated_header_reaches_its_proto(bundle):
    # `x.pb.h` and `x.grpc.pb.h` are generated, never in the tree: the edge goes to `x.proto`
    frontend = "file:server/grpc_frontend.cc"
    included = {(e["target"], e["line"]) for e in bundle["graph"]["edges"]
                if e["kind"] == "includes" and e["source"] == frontend}
    assert included == {("file:api/inference.proto", 3), ("file:api/inference.proto", 4),
                        ("file:common/types.proto", 5)}
    cpp = bundle["stats"]["cpp"]
    assert cpp["includes_protoc_generated"] == 3
    assert cpp["includes_unresolved_quoted"] == 1  # vendor/metrics.proto is no file of the tree


def test_a_rust_include_of_generated_code_reaches_the_protos_of_its_package(bundle):
    # tonic::include_proto!("pkg") and prost's include!(concat!(env!("OUT_DIR"), "/pkg.rs"))
    included = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"]
                if e["kind"] == "includes" and e["path"] == "rustsvc/src/lib.rs"}
    assert included == {("rs:mini_grpc::inference", "file:api/inference.proto", 5),
                        ("rs:mini_grpc::common", "file:common/types.proto", 9)}
    rust = bundle["stats"]["rust"]
    assert (rust["proto_includes"], rust["proto_includes_outside"]) == (2, 1)  # grpc.health.v1: no .proto here


def test_a_python_import_of_a_protoc_generated_module_reaches_its_proto(bundle):
    # `x_pb2` / `x_pb2_grpc` are generated at build time: the import goes to the x.proto whose path
    # ends in the longest part of the module's (`api/inference.proto` for `mini_api.inference_pb2_grpc`
    # by its name alone); google.protobuf's empty.proto is no file of the system
    imported = {(e["target"], e["line"]) for e in bundle["graph"]["edges"]
                if e["kind"] == "imports" and e["source"] == "py:client"}
    assert imported == {("file:common/types.proto", 4), ("file:api/inference.proto", 5),
                        ("file:api/inference.proto", 6), ("py:google.protobuf", 7)}
    assert bundle["stats"]["python"]["imports_protoc_generated"] == 3
