"""The Go symbol graph of the cgo fixture: import-path ids from go.mod, interface checks, calls."""

from __future__ import annotations

import pytest

from extractor.go import import_path
from extractor.native.manifests import GoModule, Manifests

from tests.native_support import edges, fixture_bundle, nodes

MOD = "go:example.com/cgomini"


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("cgo_mini")


@pytest.mark.parametrize(("path", "package", "expected"), [
    ("repo/server/server.go", "server", "example.com/m/server"),
    ("repo/main.go", "main", "example.com/m"),
    ("repo/server/server_test.go", "server", "example.com/m/server"),
    ("repo/server/x_test.go", "server_test", "example.com/m/server_test"),  # external test package
    ("other/tool/tool.go", "tool", "other/tool"),  # outside any module: its directory
])
def test_import_paths_come_from_go_mod(path, package, expected):
    manifests = Manifests(go_modules=(GoModule("repo", "example.com/m"),))
    assert import_path(path, package, manifests) == expected


def test_packages_types_and_methods_have_go_ids(bundle):
    found = nodes(bundle)
    expected = {
        f"{MOD}/server": "module",
        f"{MOD}/server.Server": "struct",
        f"{MOD}/server.Server.Run": "method",
        f"{MOD}/server.New": "function",
        f"{MOD}/api.Runner": "interface",
        f"{MOD}/api.Runner.Run": "method",  # the interface's method, a declaration
        f"{MOD}/llm.Model.Close": "method",
    }
    assert {k: found[k]["kind"] for k in expected if k in found} == expected
    # the package node stands at the file with the package comment
    assert found[f"{MOD}/server"]["path"] == "server/server.go"
    assert found[f"{MOD}/server"]["doc"].startswith("Package server")
    new = found[f"{MOD}/server.New"]
    assert [p["name"] for p in new["params"]] == ["path"] and new["returns"] == "*Server"
    assert found[f"{MOD}/server.Server.check"]["api"] == "private: unexported"


def test_interface_checks_imports_and_calls(bundle):
    assert (f"{MOD}/server.Server", f"{MOD}/api.Runner") in edges(bundle, "implements")
    imports = edges(bundle, "imports")
    assert {(f"{MOD}/server", f"{MOD}/llm"), (f"{MOD}/server", f"{MOD}/api")} <= imports
    assert (f"{MOD}/server", "go:context") in imports
    calls = edges(bundle, "calls")
    assert (f"{MOD}/server.New", f"{MOD}/llm.Load") in calls  # across packages of the module
    assert (f"{MOD}/server.Server.Run", f"{MOD}/server.Server.check") in calls  # on the receiver
    assert bundle["stats"]["go"]["packages"] == 3


# Seldon Core v2's scheduler: most calls go through locals made on the spot (`km := &KafkaManager{...}`,
# `ss := store.NewMemoryStore(...)`), which the body gives their types
GO_LOCALS = {
    "go.mod": "module example.com/loc\n\ngo 1.22\n",
    "store/store.go": """package store

type Store struct{}

func NewStore() (*Store, error) { return &Store{}, nil }

func (s *Store) Get(name string) string { return name }
""",
    "server/server.go": """package server

import "example.com/loc/store"

type Server struct{ n int }

func (s *Server) Start() {}

func newServer() *Server { return &Server{} }

func Run() {
\tsrv := &Server{n: 1}
\tsrv.Start()
\tst, err := store.NewStore()
\t_ = err
\tst.Get("m")
\tvar other Server
\tother.Start()
\tmade := newServer()
\tmade.Start()
\tp := new(Server)
\tp.Start()
}

func Shadowed() {
\tstore := store.NewStore  // a local named as the package it is made from: the package's name wins
\t_ = store
\tx := 1
\tx.Start()
}
""",
}


def test_calls_on_locals_whose_body_states_their_type_resolve(tmp_path):
    from tests.native_support import written_bundle

    bundle = written_bundle(tmp_path, GO_LOCALS)
    server, st = "go:example.com/loc/server", "go:example.com/loc/store"
    assert {(s, t) for s, t in edges(bundle, "calls") if s.startswith(f"{server}.Run")} == {
        (f"{server}.Run", f"{server}.Server.Start"),  # srv, other, made, p
        (f"{server}.Run", f"{st}.NewStore"),
        (f"{server}.Run", f"{st}.Store.Get"),  # st: NewStore's first result
        (f"{server}.Run", f"{server}.newServer"),
    }
    assert sorted(e["line"] for e in bundle["graph"]["edges"]
                  if e["kind"] == "calls" and e["target"] == f"{server}.Server.Start") == [13, 18, 20, 22]
    assert {t for s, t in edges(bundle, "calls") if s == f"{server}.Shadowed"} == set()
