"""Go members: a struct's fields (embedded ones named after their type) are attribute nodes
contained in the struct; an interface's methods are declarations contained in the interface."""

from __future__ import annotations

import pytest

from extractor.go import build_go_graph, scan_go
from extractor.go.parse import parse_source
from extractor.model import EdgeKind, Language, NodeKind, ParsedFile
from extractor.native.manifests import GoModule, Manifests

SERVER = b"""package server

type Server struct {
	Addr, host string
	*sync.Mutex
	Handler
	io.Reader `json:"r"`
	Cache[string]
	opts struct{ Inner int }
}

type Handler interface {
	Serve(req string) error
	io.Closer
}
"""
RUNNER = b"""package server

type Runner struct {
	onStop func()
}

func (r *Runner) Stop() { r.onStop() }

func (r *Runner) Halt() { r.Stop() }
"""


@pytest.fixture(scope="module")
def graph():
    facts = [(path, scan_go(ParsedFile(Language.GO, data, parse_source(data))))
             for path, data in (("server/server.go", SERVER), ("server/runner.go", RUNNER))]
    contribution = build_go_graph(facts, Manifests(go_modules=(GoModule("", "example.com/app"),)))
    return {n.id: n for n in contribution.nodes}, contribution.edges


def test_struct_fields_are_members_exported_when_capitalised(graph):
    found, edges = graph
    prefix = "go:example.com/app/server.Server."
    fields = {n.name: n for n in found.values() if n.id.startswith(prefix) and "field" in n.tags}
    assert {k: (v.line, v.api, v.annotation) for k, v in fields.items()} == {
        "Addr": (4, "public: exported", "string"),
        "host": (4, "private: unexported", "string"),
        "Mutex": (5, "public: exported", "*sync.Mutex"),
        "Handler": (6, "public: exported", "Handler"),
        "Reader": (7, "public: exported", "io.Reader"),
        "Cache": (8, "public: exported", "Cache[string]"),
        "opts": (9, "private: unexported", "struct{ Inner int }"),
    }
    assert {k for k, v in fields.items() if "embedded" in v.tags} == {"Mutex", "Handler", "Reader", "Cache"}
    assert all(v.kind is NodeKind.ATTRIBUTE and v.path == "server/server.go" for v in fields.values())
    # a nested struct type's fields belong to no declared type: not members of Server
    assert prefix + "Inner" not in found
    contains = {(e.source, e.target) for e in edges if e.kind is EdgeKind.CONTAINS}
    assert ("go:example.com/app/server.Server", prefix + "Addr") in contains


def test_interface_methods_are_declarations_inside_the_interface(graph):
    found, edges = graph
    serve = found["go:example.com/app/server.Handler.Serve"]
    assert (serve.kind, serve.line, "declaration" in serve.tags) == (NodeKind.METHOD, 13, True)
    # an embedded interface is an embedding, not a method
    assert "go:example.com/app/server.Handler.Closer" not in found
    contains = {(e.source, e.target) for e in edges if e.kind is EdgeKind.CONTAINS}
    assert ("go:example.com/app/server.Handler", serve.id) in contains


def test_a_call_through_a_func_typed_field_stays_unresolved(graph):
    _found, edges = graph
    calls = {(e.source, e.target) for e in edges if e.kind is EdgeKind.CALLS}
    runner = "go:example.com/app/server.Runner"
    assert (f"{runner}.Halt", f"{runner}.Stop") in calls
    # what the field holds is not known: no call edge to the field's node
    assert not [c for c in calls if c[1] == f"{runner}.onStop"]


STORE = b"""package store

import "context"

type Getter interface {
	Get(key string) string
}

type Base struct{}

func (b *Base) Close() {}

type Store struct {
	Base
	backend Getter
	cache   *Cache
	ctx     context.Context
}

type Cache struct{}

func (c *Cache) Put(key string) {}
"""
USER = b"""package api

import (
	"context"
	"net/http"

	"example.com/app/store"
)

type Handler struct {
	st *store.Store
}

func (h *Handler) Serve(w http.ResponseWriter, req *http.Request, s *store.Store, keys []string) {
	h.st.Close()
	s.Close()
	req.Body.Close()
	w.WriteHeader(200)
	keys.Len()
	s.Missing()
}

func Use(ctx context.Context, c *store.Cache, g store.Getter, http string) {
	c.Put("k")
	g.Get("k")
	ctx.Done()
}
"""


def test_calls_on_values_of_written_types():
    # llm-d's shapes: `ds.epf.ReleaseEndpoint(ep)` on a field of the receiver, `datastore.PodList(...)` on a
    # parameter; a promoted method of an embedded struct, an interface's declaration; a value of a type
    # outside the system is an external call, a slice's or a missing method's stays unresolved
    facts = [(path, scan_go(ParsedFile(Language.GO, data, parse_source(data))))
             for path, data in (("store/store.go", STORE), ("api/api.go", USER))]
    contribution = build_go_graph(facts, Manifests(go_modules=(GoModule("", "example.com/app"),)))
    calls = {(e.source.rsplit("/", 1)[-1], e.target.rsplit("/", 1)[-1], e.line)
             for e in contribution.edges if e.kind is EdgeKind.CALLS}
    assert calls == {
        ("api.Handler.Serve", "store.Base.Close", 15),  # h.st: *store.Store, Close promoted from Base
        ("api.Handler.Serve", "store.Base.Close", 16),  # s: *store.Store
        ("api.Use", "store.Cache.Put", 24),
        ("api.Use", "store.Getter.Get", 25),  # the interface's declaration
    }
    stats = contribution.stats
    # req.Body.Close, w.WriteHeader, ctx.Done: types of net/http and context
    assert (stats["calls_external"], stats["calls_unresolved"]) == (3, 2)
