"""The .proto reader: what it reads, what it refuses (with line and column), and protoc's scoping of
type names across files, checked on small texts written here."""

from __future__ import annotations

import pytest

from extractor.proto import build_proto_graph, read_proto
from extractor.proto.read import MAX_NESTING


def _read(text: str):
    return read_proto(text.encode())


@pytest.mark.parametrize(("text", "line", "message"), [
    ('syntax = "proto3";\nmessage A {\n  int32 a = 1\n}\n', 4, "expected ';' after field 'a', found '}' at 4:1"),
    ('message A {\n  int32 a = 1;\n', 3, "missing '}' of message 'A' (opened at line 1), found end of file"),
    ('message A { string s = 1; }\n/* never closed\n', 2, "unterminated /* comment at 2:1"),
    ('import "a.proto;\n', 1, "unterminated string at 1:8"),
    ('message A { int32 a = 1; } $\n', 1, "unexpected character '$' at 1:28"),
    ('package a;\npackage b;\n', 2, "a second package statement (one per file), found 'package' at 2:1"),
    ('package a;\nsyntax = "proto3";\n', 2, "'syntax' must be the first statement of the file, found 'syntax'"),
    ('syntax = "proto4";\n', 1, "unknown syntax 'proto4' (proto2 or proto3)"),
    ('message A { oneof o { repeated int32 a = 1; } }\n', 1, "a field of a oneof has no label"),
    ('message A { int32 a = 1.5; }\n', 1, "expected the number of field 'a' (an integer), found '1.5'"),
    ('service S { rpc M(A) returns (B) }\n', 1, "expected ';' or '{' after rpc 'M', found '}'"),
    ('service S { message A {} }\n', 1, "expected an rpc or an option in service 'S', found 'message'"),
    ('option (x) = { a: { b: 1 }\n', 2, "the aggregate value opened at line 1 is not closed, found end of file"),
    ('int32 a = 1;\n', 1, "expected a top-level statement"),
])
def test_what_is_not_proto_syntax_is_one_error_with_its_place(text, line, message):
    facts = _read(text)
    assert facts.error is not None and facts.error[0] == line
    assert message in facts.error[1]
    assert (facts.definitions, facts.services, facts.imports) == ((), (), ())  # nothing half-read is kept


def test_nesting_deeper_than_the_limit_is_refused_not_a_recursion_error():
    deep = "message M { " * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1)
    facts = _read(deep)
    assert facts.error is not None and f"nest deeper than {MAX_NESTING} levels" in facts.error[1]
    assert _read("message M { " * MAX_NESTING + "}" * MAX_NESTING).error is None


def test_the_shapes_protoc_accepts_are_read():
    facts = _read('''edition = "2023";
package a.b;
import public "x.proto";
import weak "y.proto";
option (my.opt).sub = -inf;
option java_package = "com." "example";  // adjacent strings
message Outer {
  option deprecated = true;
  message stream {}
  reserved 2, 4 to max;
  reserved foo, bar;
  extensions 100 to 199 [declaration = { number: 100, full_name: ".a.b.ext", type: "int32" }];
  int32 a = 0x1F [json_name = "A", (c).d = { e: [1, 2] }];
  .a.b.Outer.stream s = 010;
  ;
}
service S {
  rpc Plain(stream) returns (.a.b.Outer);
  rpc Chat(stream Outer) returns (stream Outer) { option idempotency_level = NO_SIDE_EFFECTS; };
}
''')
    assert facts.error is None, facts.error
    assert (facts.syntax, facts.edition, facts.package) == ("editions", "2023", "a.b")
    assert facts.imports == (("x.proto", "public", 3), ("y.proto", "weak", 4))
    outer = facts.definitions[0]
    assert (outer.qual, outer.deprecated, [(f.name, f.number, f.type) for f in outer.fields]) == \
        ("Outer", True, [("a", 31, "int32"), ("s", 8, ".a.b.Outer.stream")])
    assert facts.definitions[1].qual == "Outer.stream"
    assert outer.reserved == ("2", "4..max", '"foo"', '"bar"')  # a removed field's number and name, kept
    plain, chat = facts.services[0].rpcs
    assert (plain.request, plain.client_streaming, plain.response) == ("stream", False, ".a.b.Outer")
    assert (chat.client_streaming, chat.server_streaming) == (True, True)


def test_the_doc_is_the_sentence_after_a_rest_directive():
    facts = _read('''//@@
//@@.. cpp:var:: message Request
//@@
//@@   The request of the rpc.
//@@   Second line.
//@@
message Request {
  /* Block comment,
     two lines. */
  string id = 1;  // trailing: not the doc of the next field
  string other = 2;

  // Detached by a blank line: not a doc.

  string third = 3;
}
''')
    request = facts.definitions[0]
    assert request.doc == "The request of the rpc."
    assert [f.doc for f in request.fields] == ["Block comment,", "", ""]


def _graph(files: dict[str, str]):
    return build_proto_graph((path, _read(text)) for path, text in files.items())


def _uses(result) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in result.edges if e.kind.value == "uses"}


def test_a_compound_name_is_decided_by_the_innermost_scope_that_has_its_first_part():
    # protoc: inside a.Outer, `Inner.X` finds a.Outer.Inner first; it has no X, so the name is
    # not defined, even though a.Inner.X exists one scope further out
    result = _graph({"s.proto": '''package a;
message Inner { message X {} }
message Outer {
  message Inner {}
  Inner.X wrong = 1;
  .a.Inner.X right = 2;
  Inner near = 3;
}
'''})
    assert _uses(result) == {("proto:a.Outer", "proto:a.Inner.X"), ("proto:a.Outer", "proto:a.Outer.Inner")}
    assert (result.stats["type_refs_resolved"], result.stats["type_refs_unresolved"]) == (2, 1)


def test_types_of_a_file_not_imported_are_not_seen_but_public_imports_pass_through():
    files = {
        "p/base.proto": "package p;\nmessage Base {}\n",
        "p/reexport.proto": 'package p;\nimport public "p/base.proto";\n',
        "p/private.proto": "package p;\nmessage Hidden {}\n",
        "q/user.proto": 'package q;\nimport "p/reexport.proto";\nmessage User { p.Base b = 1; p.Hidden h = 2; }\n',
    }
    result = _graph(files)
    assert _uses(result) == {("proto:q.User", "proto:p.Base")}
    assert result.stats["type_refs_unresolved"] == 1
    imports = {(e.source, e.target) for e in result.edges if e.kind.value == "imports"}
    assert imports == {("file:p/reexport.proto", "file:p/base.proto"), ("file:q/user.proto", "file:p/reexport.proto")}


def test_imports_resolve_by_suffix_preferring_the_importers_repository():
    files = {
        "common/protobuf/model.proto": "package m;\nmessage Model {}\n",
        "server/protobuf/model.proto": "package m;\nmessage Model {}\n",
        "server/src/api.proto": 'import "protobuf/model.proto";\nmessage Api { m.Model model = 1; }\n',
    }
    result = _graph(files)
    assert {(e.source, e.target) for e in result.edges if e.kind.value == "imports"} == \
        {("file:server/src/api.proto", "file:server/protobuf/model.proto")}
    # the same message in two repositories is one node, its other definition one of its sites
    model = next(n for n in result.nodes if n.id == "proto:m.Model")
    assert (model.path, [(s.path, s.line) for s in model.sites]) == \
        ("common/protobuf/model.proto", [("server/protobuf/model.proto", 2)])
