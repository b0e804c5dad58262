"""googletest's mock macros declare the mocked methods of their class.

A system's tests mock its interfaces with gmock, which the system does not hold: `MOCK_METHOD(ReturnType,
Name, (Args...), (Specs...))`, or the older `MOCK_METHODn(Name, ReturnType(Args...))` and
`MOCK_CONST_METHODn`. Read as written, a mock class had no member but its constructor (the uses were
"class-macro" diagnostics, and the new form, with its parenthesized arguments, ERROR nodes: rtp-llm's 84
mocks), its methods overrode nothing and the calls a test makes on it bound nowhere. The fixture is
a small service with an interface and a test that mocks it in both forms."""

from __future__ import annotations

from extractor.cpp.parse import write_mock_methods
from extractor.model import EdgeKind

from tests.cpp_support import cpp_graph, edges

CLIENT = """#pragma once
#include <string>
#include <utility>

namespace kv {

class MetaClient {
public:
    virtual ~MetaClient() = default;
    virtual std::pair<int, std::string> MatchLocation(const std::string& trace_id,
                                                      int kind) = 0;
    virtual int Finish(const std::string& session) = 0;
    virtual const std::string& Config() const = 0;
    virtual bool Ready() const = 0;
};

}  // namespace kv
"""

MOCK = """#pragma once
#include <gmock/gmock.h>
#include "kv/client.h"

namespace kv {

class MockMetaClient: public MetaClient {
public:
    MOCK_METHOD((std::pair<int, std::string>),
                MatchLocation,
                (const std::string&              trace_id,
                 int                             kind),
                (override));
    MOCK_METHOD(int, Finish, (const std::string& session), (override));
    MOCK_METHOD(const std::string&, Config, (), (override, const));
    MOCK_CONST_METHOD0(Ready, bool());
    MOCK_METHOD1(Reset, void(int generation));
    MOCK_METHOD0(Next, std::pair<int, bool>());
};

}  // namespace kv
"""

TEST = """#include "kv/mock_client.h"

namespace kv {

int Probe(MockMetaClient& client) {
    client.Reset(1);
    return client.Finish("s") + client.Ready();
}

}  // namespace kv
"""

FILES = {"kv/client.h": CLIENT, "kv/mock_client.h": MOCK, "kv/probe_test.cc": TEST}
MOCKED = "cpp:kv::MockMetaClient::"


def test_a_mock_declares_its_methods_at_the_uses_lines(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    assert "kv/mock_client.h" not in {d.path for d in graph.diagnostics if d.code in ("parse-errors", "class-macro")}
    nodes = {n.id: n for n in graph.nodes if n.id.startswith(MOCKED)}
    assert {i.removeprefix(MOCKED): (n.line, "macro-expanded" in n.tags) for i, n in nodes.items()} == {
        "MatchLocation": (9, True), "Finish": (14, True), "Config": (15, True), "Ready": (16, True),
        "Reset": (17, True), "Next": (18, True)}
    assert nodes[MOCKED + "MatchLocation"].returns == "std::pair<int,std::string>"
    assert [p.annotation for p in nodes[MOCKED + "MatchLocation"].params] == ["const std::string&", "int"]
    assert nodes[MOCKED + "Reset"].returns == "void"
    # the older forms take the signature as `...` (a comma in the return type is no other argument)
    assert nodes[MOCKED + "Next"].returns == "std::pair<int,bool>"
    overrides = edges(graph, EdgeKind.IMPLEMENTS) | edges(graph, EdgeKind.INHERITS)
    assert ("cpp:kv::MockMetaClient", "cpp:kv::MetaClient") in overrides
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:kv::Probe", MOCKED + name) for name in ("Reset", "Finish", "Ready")} <= calls


def test_the_written_declaration_keeps_every_line_in_place_and_leaves_other_forms():
    written = write_mock_methods(MOCK.encode())
    assert len(written.splitlines()) == len(MOCK.splitlines())
    lines = written.decode().splitlines()
    assert lines[8].strip() == ("std::pair<int, std::string> MatchLocation(const std::string& trace_id, int kind) "
                                "override")
    assert lines[9:12] == ["", "", ""] and lines[12].strip() == ";"
    assert lines[14].strip() == "const std::string& Config() const override;"  # the qualifiers in C++'s order
    assert lines[15].strip() == "bool Ready() const;"
    # not the form: a name that is no identifier, a signature with no parameter list; in a directive
    for kept in (b"  MOCK_METHOD(int, a::b, (), ());\n", b"  MOCK_METHOD1(Reset, void);\n",
                 b"#define MOCK_ALL MOCK_METHOD(int, f, (), ())\n"):
        assert write_mock_methods(kept) == kept, kept
