"""The concept facts of Rust and Go files: what a query finds must be what a walk of every node
finds (the scanner walked every node in Python until the query replaced it), on sources that hold
each shape the facts come from."""

from __future__ import annotations

import textwrap
from typing import Any

from extractor.concepts.native_scan import _MAX_STRING, _RUST_DEFS, resolve_names, scan_native
from extractor.go.parse import parse_source as parse_go
from extractor.model import Language, ParsedFile
from extractor.rust.parse import parse_source as parse_rust
from extractor.rust.scan import use_paths

RUST = textwrap.dedent("""\
    use std::sync::{mpsc, Arc as Shared};
    use tokio::sync::mpsc;   // the same alias again: the later one holds
    use crate::engine::*;
    pub struct Engine { queue: Vec<u8> }
    enum State { Idle, Busy }
    trait Schedule { fn next(&self) -> u32; }
    impl Engine {
        pub fn run(&self) {
            let (tx, rx) = mpsc::channel();
            tx.send("requests").unwrap();
            fn helper() { fn too_deep() {} }
            println!("{}", "done_here");
            let shared = Shared::new(1);
        }
    }
    mod inner { fn inside() {} pub mod deeper { fn two_deep() {} } }
    fn main() { let e = Engine { queue: vec![] }; e.run(); std::process::exit(0); }
    fn broken( { "dangling_string" }
    """)

GO = textwrap.dedent("""\
    package server

    import (
        "context"
        g "google.golang.org/grpc"
        "net/http"
    )

    type Server struct{ inner *g.Server }
    type Handler interface{ Serve() }
    type Alias = int

    func New(ctx context.Context) *Server {
        s := g.NewServer()
        http.HandleFunc("/metrics", nil)
        s.Serve(nil)
        label := `raw_label`
        _ = "has space"
        return &Server{inner: s}
    }

    func (s *Server) Stop() { s.inner.Stop(); fmt.Println("stopping") }
    """)


def walked(parsed: ParsedFile) -> tuple:
    """Every node visited in Python, as the scanner did: the reference."""
    rust = parsed.language is Language.RUST
    imports, aliases, names, calls, strings, defs = set(), {}, set(), set(), set(), []
    stack: list[tuple[Any, int]] = [(parsed.tree.root_node, 0)]
    while stack:
        node, depth = stack.pop()
        kind, line = node.type, node.start_point[0] + 1
        if rust and kind == "use_declaration":
            for path, alias in use_paths(node.child_by_field_name("argument")):
                imports.add((path, "", 0, line))
                last = path.rsplit("::", 1)[-1]
                if last not in ("*", "self"):
                    aliases[alias or last] = path
            continue
        if not rust and kind == "import_spec":
            target = node.child_by_field_name("path").text.decode().strip('"`')
            imports.add((target, "", 0, line))
            alias = node.child_by_field_name("name")
            aliases[alias.text.decode() if alias is not None else target.rsplit("/", 1)[-1]] = target
            continue
        if kind == "call_expression":
            fn = node.child_by_field_name("function")
            if fn.type in ("field_expression", "selector_expression"):
                field = fn.child_by_field_name("field")
                operand = fn.child_by_field_name("value" if rust else "operand")
                if not rust and operand.type == "identifier":
                    names.add((f"{operand.text.decode()}.{field.text.decode()}", line))
                else:
                    calls.add((field.text.decode(), line))
            elif fn.type in ("scoped_identifier", "identifier"):
                names.add((fn.text.decode().replace(" ", ""), line))
        elif kind == "macro_invocation":
            names.add((node.child_by_field_name("macro").text.decode() + "!", line))
        elif kind in ("string_literal", "interpreted_string_literal", "raw_string_literal"):
            text = node.text.decode()[1:-1]
            if 3 <= len(text) <= _MAX_STRING and not any(c.isspace() for c in text):
                strings.add((text, line))
            continue
        elif rust and kind in _RUST_DEFS and depth <= 1:
            defs.append((node.child_by_field_name("name").text.decode(), _RUST_DEFS[kind], line))
        elif not rust and kind in ("function_declaration", "type_spec"):
            value = node.child_by_field_name("type")
            what = "function" if kind == "function_declaration" else (
                "struct" if value.type == "struct_type" else "interface" if value.type == "interface_type" else "type")
            defs.append((node.child_by_field_name("name").text.decode(), what, line))
        inner = depth + (kind in ("impl_item", "function_item", "mod_item"))
        stack.extend((child, inner) for child in reversed(node.named_children))
    resolved = resolve_names(names, aliases, rust)  # the same resolution: the walk is what is compared
    return (sorted(imports), sorted(resolved), sorted(calls), sorted(strings), sorted(defs, key=lambda d: (d[2], d[0])))


def facts(parsed: ParsedFile) -> tuple:
    found = scan_native(parsed)
    return ([(i.module, i.name, i.level, i.line) for i in found.imports], [tuple(s) for s in found.names],
            [tuple(s) for s in found.calls], [tuple(s) for s in found.strings],
            [(d.qualname, d.kind, d.line) for d in found.defs])


def test_rust_facts_equal_a_walk_of_every_node():
    parsed = ParsedFile(Language.RUST, RUST.encode(), parse_rust(RUST.encode()))
    assert parsed.tree.root_node.has_error  # the broken function at the end is read too
    ours = facts(parsed)
    assert ours == walked(parsed)
    imports, names, calls, strings, defs = ours
    assert ("tokio::sync::mpsc::channel", 9) in names  # the later `use` of mpsc holds
    assert ("std::sync::Arc::new", 13) in names and ("println!", 12) in names
    assert {"send", "unwrap", "run"} <= {c for c, _ in calls}
    assert {("requests", 10), ("done_here", 12), ("dangling_string", 18)} <= set(strings)
    # an item inside two impl/fn/mod items is not a definition (helper, too_deep, two_deep); inside
    # one it is (run, inside); a trait's signature and a module are not definitions here
    assert [d[0] for d in defs] == ["Engine", "State", "Schedule", "run", "inside", "main", "broken"]


def test_go_facts_equal_a_walk_of_every_node():
    parsed = ParsedFile(Language.GO, GO.encode(), parse_go(GO.encode()))
    ours = facts(parsed)
    assert ours == walked(parsed)
    imports, names, calls, strings, defs = ours
    assert [i[0] for i in imports] == ["context", "google.golang.org/grpc", "net/http"]
    assert ("google.golang.org/grpc.NewServer", 14) in names and ("net/http.HandleFunc", 15) in names
    assert not any(n.startswith("s.") for n, _ in names)  # a selector on a variable says nothing
    # an import's path is not a string the code uses; a string with a space is not a word
    assert {s for s, _ in strings} == {"/metrics", "raw_label", "stopping"}
    # a method is not a definition here, nor a type alias (`type Alias = int`)
    assert [(d[0], d[1]) for d in defs] == [("Server", "struct"), ("Handler", "interface"), ("New", "function")]


def test_go_http_routes():
    source = textwrap.dedent("""\
        package server

        import "net/http"

        func Routes(mux *http.ServeMux, r Router) {
        \thttp.HandleFunc("/health", health)
        \tmux.Handle("POST /v1/completions", h)
        \tr.GET("/v1/models", models)
        \tr.Any("/proxy/*path", proxy)
        \tr.GET(dynamicPath, other)
        \tmux.Handle("GET /x", h)
        \thttp.Get("/not/a/route/registration")
        }
        """).encode()
    found = scan_native(ParsedFile(Language.GO, source, parse_go(source)))
    assert found is not None
    assert found.routes == (("ANY /health", 6), ("ANY /proxy/*path", 9), ("GET /v1/models", 8), ("GET /x", 11),
                            ("POST /v1/completions", 7))


def test_rust_router_routes():
    # axum (`Router::new().route(...)`, chained method routers, a method router's path) and actix-web's
    # `App::route(path, web::post().to(h))`; a path that is no literal, and an argument that names no
    # method, register no route said
    code = textwrap.dedent("""\
        use axum::{routing::{get, post}, Router};
        fn app(endpoint: &str) -> Router {
            let router = Router::new()
                .route("/", get(index))
                .route("/v1/chat/completions", post(chat).get(describe))
                .route("/health", axum::routing::get(health));
            let router = router.route(endpoint, post(inference));
            router.route("/plain", handler)
        }
        fn actix(app: App) -> App {
            app.route("/generate", web::post().to(generate))
        }
        """).encode()
    facts = scan_native(ParsedFile(Language.RUST, code, parse_rust(code)))
    assert facts.routes == (("GET /", 4), ("GET /health", 6), ("GET|POST /v1/chat/completions", 5),
                            ("POST /generate", 11))
