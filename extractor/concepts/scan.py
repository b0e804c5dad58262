"""Per-file facts for concept detection and layering: what a file imports, includes, calls and defines.

Scanners run in worker processes and are cached by content hash, so they never look at the file's
path: relative imports are recorded with their level and resolved later by the extractor, which knows
the module name. Every fact carries the 1-based line it was seen on, so a concept or a role can
point a reader at the exact place. Every language's scanner returns one type,
:class:`extractor.concepts.facts.ConceptFacts`; its fields hold, for Python (read from the module's
shared index, :mod:`extractor.python.index`):

  imports  Import(module, name, level, line)   ``from a.b import c`` -> ("a.b", "c", 0, n);
                                               ``import a.b`` -> ("a.b", "", 0, n)
  typing_imports  the same, for imports under ``if TYPE_CHECKING:`` (annotations only: not a
                  dependency at run time, so no evidence of a mechanism or a role)
  names    (dotted, line)   chains whose head is an imported name, resolved through the imports:
                            ``from heapq import heappush; heappush(h, x)`` -> "heapq.heappush"
                            (relative heads keep their dots: ".block_pool.BlockPool")
  calls    (method, line)   ``x.pin_memory()`` where ``x`` is not an import -> "pin_memory"
  invokes  (dotted, line)   imported names called: ``app = FastAPI()`` -> "fastapi.FastAPI" (a name
                            used only in an annotation is in ``names``, not here)
  keywords (arg=value, line)  ``pin_memory=True``; non-constant values are shown as ``arg=...``
  attrs    (attr, line)     first access of every attribute name (``self.max_num_batched_tokens``)
  strings  (text, line)     short one-word string constants ("/dev/shm", "text/event-stream")
  routes   (text, line)     HTTP routes a decorator or a registration call declares with a literal path
                            (positional, or as a decorator's ``route=``/``path=``: ``@webmethod(route="/x",
                            method="GET")`` -> "GET /x"):
                            ``@app.post("/v1/chat/completions")`` -> "POST /v1/chat/completions";
                            ``@router.api_route("/x", methods=["GET", "POST"])`` -> "GET|POST /x" ("ANY"
                            when the methods are not literal or not given); ``app.add_api_route("/x", f)``
                            and ``add_url_rule``/``add_route`` likewise; ``@app.websocket("/ws")`` -> "WS /ws";
                            an f-string path keeps its values in braces: "POST {prefix}/embeddings";
                            a router's prefix (made or mounted with) likewise, when no module constant
                            gives it: "GET {settings.API_V1_STR}/users/me"
  defs     Definition(qualname, kind, line, bases)  classes ("class") and functions ("function")
C++/CUDA facts (from one tree-sitter query) fill the same fields where they make sense (no
``keywords``/``attrs``): includes (header, line); names = called and used qualified names without
template arguments ("std::priority_queue", "cudaIpcGetMemHandle"); calls = ``obj.method()``/
``obj->method()`` names; defs kinds are "class", "struct", "function", "kernel" (a ``__global__``
function); c_api (line, n) = an ``extern "C"`` block that declares n function prototypes (a C API
that other programs link against); routes = literal paths a router's ``Get``/``Post``/... registers
(cpp-httplib: ``svr.Post("/completion", h)``) or a registration given the method and the path
(rtp-llm's ``http_server.RegisterRoute("GET", "/health", h)``).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Mapping
from typing import Any

from extractor.concepts.facts import ConceptFacts, Definition, Import, Seen
from extractor.cpp.parse import CONCEPT_CAPTURES, file_nodes
from extractor.model import ParsedFile
from extractor.python.index import ModuleIndex, module_index

_MAX_STRING = 80
_SPACE = re.compile(r"\s")  # what str.isspace() calls whitespace
_DEF_TYPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_SHOWN_CONSTANTS = frozenset({bool, int, float, str, type(None)})  # a keyword's value shown as written


def scan_python(parsed: ParsedFile) -> ConceptFacts | None:
    tree = parsed.tree
    if not isinstance(tree, ast.Module):
        # The pipeline hands the stdlib tree; anything else (no tree, a libcst module) is re-parsed
        # here rather than silently yielding no facts.
        try:
            tree = ast.parse(parsed.data)
        except (SyntaxError, ValueError):
            return None
    return python_facts(module_index(tree))


def python_facts(index: ModuleIndex) -> ConceptFacts:
    """The concept facts of one module, read from its shared index (see :mod:`extractor.python.index`).

    Every loop below runs over all nodes of one type (a sixth of the tree's nodes are names):
    each tests the node's class (``ast`` nodes are never subclassed) and keeps the dotted text
    for the few nodes that need one."""
    imports, typing_imports, aliases = _imports(index)
    Attribute, Name = ast.Attribute, ast.Name

    def resolve(node: ast.expr) -> str | None:
        """Dotted name of an attribute chain whose head is an imported name, else None."""
        parts: list[str] = []
        while node.__class__ is Attribute:
            parts.append(node.attr)
            node = node.value
        if node.__class__ is Name and node.id in aliases:
            parts.append(aliases[node.id])
            return ".".join(reversed(parts))
        return None

    names: set[Seen] = set()
    # A chain (``torch.cuda.Stream``) whose head is an imported name is recorded whole, and neither
    # its links nor its head are facts of their own. Such chains are found from their heads, the
    # few names that are imported ones: in pre-order a chain's links come outermost first, each
    # followed by its value, so the links of a head at position p are the attributes at p-1, p-2...
    # whose value is the node after them.
    nodes = index.nodes
    linked: set[int] = set()  # ids of the links and heads of such chains
    for position in [p for p in index.positions(Name) if nodes[p].id in aliases]:  # type: ignore[attr-defined]
        head = nodes[position]
        parts: list[str] = []
        inner, outer = head, position - 1
        while outer >= 0 and nodes[outer].__class__ is Attribute and nodes[outer].value is inner:  # type: ignore[attr-defined]
            inner = nodes[outer]
            parts.append(inner.attr)  # type: ignore[attr-defined]
            linked.add(id(inner))
            outer -= 1
        if parts:  # innermost link first: the order the chain is written in
            names.add((".".join([aliases[head.id], *parts]), inner.lineno))  # type: ignore[attr-defined]
            linked.add(id(head))
        elif head.ctx.__class__ is ast.Load:  # type: ignore[attr-defined]
            names.add((aliases[head.id], head.lineno))  # type: ignore[attr-defined]
    # Every other attribute is an access; its first one (in pre-order) gives the line.
    attributes = index.of(Attribute)
    if linked:
        attributes = [link for link in attributes if id(link) not in linked]
    attrs = {link.attr: link.lineno for link in reversed(attributes)}

    invokes: set[Seen] = set()
    calls: set[Seen] = set()
    keywords: set[Seen] = set()
    routes: set[Seen] = set()
    decorators = {id(d) for definition in index.of_types(ast.FunctionDef, ast.AsyncFunctionDef)
                  if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for d in definition.decorator_list if d.__class__ is ast.Call}
    # Routes are read after the calls, once the file's router prefixes are known: of all calls, only
    # those that may make or mount a router, and those that may declare a route (a route object, a
    # decorator, a registration method: see _route), are asked (a few of every thousand).
    routers: list[ast.Call] = []
    declaring: list[tuple[ast.Call, str | None]] = []  # (call, what it invokes)
    for call in index.of(ast.Call):
        func = call.func
        invoked = None
        if func.__class__ is Name:
            invoked = aliases.get(func.id)
            if invoked is not None:
                invokes.add((invoked, call.lineno))
            if func.id in _ROUTER_CALLS:
                routers.append(call)
        elif func.__class__ is Attribute:
            invoked = resolve(func)
            if invoked is not None:
                invokes.add((invoked, call.lineno))
            else:
                calls.add((func.attr, call.lineno))
            if func.attr in _ROUTER_CALLS:
                routers.append(call)
        if invoked in _ROUTE_CLASSES or id(call) in decorators or (
                func.__class__ is Attribute and func.attr in _ROUTE_REGISTRATIONS):
            declaring.append((call, invoked))
        for kw in call.keywords:
            if kw.arg is None:
                continue
            value = kw.value
            kind = value.value.__class__ if value.__class__ is ast.Constant else None
            if kind in _SHOWN_CONSTANTS:
                shown = repr(value.value) if kind is str else str(value.value)  # type: ignore[attr-defined]
                if len(shown) > _MAX_STRING:
                    shown = "..."
            else:
                shown = "..."
            keywords.add((f"{kw.arg}={shown}", value.lineno))
    prefixes, mounts = _router_prefixes(index, routers, resolve)
    router_routes: set[tuple[str, str, int]] = set()
    for call, invoked in declaring:
        route = _route_object(call, invoked) if invoked in _ROUTE_CLASSES else \
            _route(call, id(call) in decorators, prefixes)
        if route is not None:
            routes.add((route, call.lineno))
            router = getattr(call.func, "value", None)
            if router.__class__ is Name:
                router_routes.add((router.id, route, call.lineno))

    docstrings = {id(body[0].value) for scope in index.scopes if (body := getattr(scope, "body"))
                  and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)}
    strings: set[Seen] = set()
    for constant in [c for c in index.of(ast.Constant) if c.value.__class__ is str and 3 <= len(c.value) <= _MAX_STRING]:
        text: str = constant.value  # type: ignore[assignment]  # a str, as the list's test says
        if id(constant) not in docstrings and not _SPACE.search(text):
            strings.add((text, constant.lineno))

    defs: list[Definition] = []
    for definition in index.of_types(*_DEF_TYPES):
        qualname = ".".join(index.scopes[definition].names)
        if isinstance(definition, ast.ClassDef):
            bases = tuple(b for b in (resolve(base) for base in definition.bases) if b)
            defs.append(Definition(qualname, "class", definition.lineno, bases))
        elif isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.append(Definition(qualname, "function", definition.lineno))
    defs.sort(key=lambda d: (d.line, d.qualname))
    return ConceptFacts(
        imports=tuple(Import(*t) for t in sorted(imports)),
        typing_imports=tuple(Import(*t) for t in sorted(typing_imports)),
        names=tuple(sorted(names)), calls=tuple(sorted(calls)), invokes=tuple(sorted(invokes)),
        keywords=tuple(sorted(keywords)), attrs=tuple(sorted(attrs.items())), strings=tuple(sorted(strings)),
        routes=tuple(sorted(routes)), router_routes=tuple(sorted(router_routes)), mounts=tuple(sorted(mounts)),
        defs=tuple(defs))


# A decorator `@x.<verb>("/path")` (FastAPI, Starlette, Flask, Quart, Sanic, Litestar) declares a route;
# the same call elsewhere may be a client's request, so only a decorator's counts. A registration
# method names a route wherever it is called.
_ROUTE_VERBS = {"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "patch": "PATCH",
                "head": "HEAD", "options": "OPTIONS", "websocket": "WS", "route": "", "api_route": ""}
_ROUTE_REGISTRATIONS = frozenset({"add_api_route", "add_url_rule", "add_route", "add_websocket_route"})


# A router made with a path prefix (FastAPI's `APIRouter(prefix="/v1")`, Flask's and Quart's
# `Blueprint(name, __name__, url_prefix="/v1")`), or mounted with one in the same file
# (`app.include_router(router, prefix="/v1")`, `app.register_blueprint(bp, url_prefix="/v1")`): the
# routes its decorators declare are under that prefix. A prefix that is not written as a path is
# never dropped (the routes would be said at the root): a module-level name bound once to a literal
# path is read through, anything else is kept as written, in braces ("{settings.API_V1_STR}/users"),
# as an f-string's values are.
_ROUTERS = {"APIRouter": "prefix", "Blueprint": "url_prefix"}
_MOUNTS = {"include_router": "prefix", "register_blueprint": "url_prefix"}
_ROUTER_CALLS = frozenset(_ROUTERS.keys() | _MOUNTS.keys())


def _router_prefixes(index: ModuleIndex, calls: list[ast.Call], resolve: Callable[[ast.expr], str | None]
                     ) -> tuple[dict[str, str], set[tuple[str, str, int]]]:
    """Name of a router the file makes or mounts -> the prefix of its routes (what it is made with,
    then what it is mounted under), when the prefixes are literal paths or f-strings; and the mounts
    of another module's router with a prefix, (the router as imported, prefix, line):
    ``app.include_router(chat.router, prefix="/v1")``. ``calls``: the module's calls named like a router
    class or a mount (_ROUTER_CALLS), in pre-order; no other call makes or mounts one."""
    made: dict[str, str] = {}
    mounted: dict[str, str] = {}
    imported: set[tuple[str, str, int]] = set()
    makers = {id(call) for call in calls if _called_name(call.func) in _ROUTERS}
    # the assignments are read only in a file that calls a router class (vLLM: 2 of 1,871)
    for assign in index.of_types(ast.Assign, ast.AnnAssign) if makers else ():  # router = ..., router: Final = ...
        value = assign.value  # type: ignore[attr-defined]
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]  # type: ignore[attr-defined]
        if not (id(value) in makers and len(targets) == 1 and isinstance(targets[0], ast.Name)):
            continue
        prefix = _keyword_path(value, _ROUTERS[_called_name(value.func)], index)
        if prefix is not None:
            made[targets[0].id] = prefix
    for call in calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _MOUNTS and call.args):
            continue
        prefix = _keyword_path(call, _MOUNTS[func.attr], index)
        if prefix is None:
            continue
        router = call.args[0]
        if isinstance(router, ast.Name):  # mounted twice under two prefixes: neither is the one
            mounted[router.id] = prefix if mounted.get(router.id, prefix) == prefix else ""
        if (target := resolve(router)) is not None:
            imported.add((target, prefix, call.lineno))
    prefixes = {name: mounted.get(name, "") + made.get(name, "") for name in made.keys() | mounted.keys()
                if name not in mounted or mounted[name]}
    return prefixes, imported


def _called_name(func: ast.expr) -> str:
    """The last part of a callee's dotted name (``APIRouter`` of ``fastapi.APIRouter``), else ""."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _keyword_path(call: ast.Call, keyword: str, index: ModuleIndex) -> str | None:
    """The prefix ``call`` gives under ``keyword``: a path, a module constant's path, or the value as
    written in braces; None without one (absent, empty, None)."""
    value = next((k.value for k in call.keywords if keyword and k.arg == keyword), None)
    if value is None or (isinstance(value, ast.Constant) and not value.value):
        return None
    if isinstance(value, ast.Name) and (constant := _module_path(index, value.id)) is not None:
        return constant or None
    path = _route_path(value)
    if path is not None or isinstance(value, ast.Constant):
        return path
    written = ast.unparse(value)
    return "{" + (written if len(written) <= _MAX_STRING and not _SPACE.search(written) else "?") + "}"


def _module_path(index: ModuleIndex, name: str) -> str | None:
    """The path (or "") a module-level statement binds ``name`` to, ``API_PREFIX = "/api/v1"``, when
    nothing else in the file binds that name; else None."""
    stores = [node for node in index.of(ast.Name) if node.id == name and node.ctx.__class__ is not ast.Load]
    if len(stores) != 1:
        return None
    statement = next((s for s in index.tree.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                      and any(t is stores[0] for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))), None)
    value = getattr(statement, "value", None)
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    return "" if not value.value else _route_path(value)


# A decorator of the system's own or of a smaller framework that declares its route by keyword: Llama
# Stack's `@webmethod(route="/models", method="GET")` (its server mounts each under the API version),
# BentoML's `@bentoml.api(route="/v1/x")`; `path=` only on a decorator named by a verb (`@app.get(path=
# "/x")`, Litestar's `@get(path="/x")`): a cache's or a loader's decorator takes a `path` too.


def _route(call: ast.Call, decorator: bool, prefixes: Mapping[str, str]) -> str | None:
    """The route ``call`` declares ("POST /v1/completions"), when it declares one (see above)."""
    func = call.func
    name = _called_name(func)
    keywords = ("route", "path") if name in _ROUTE_VERBS else ("route",)  # `path=` alone is too common a word
    keyword = next((k.value for k in call.keywords if k.arg in keywords), None) if decorator else None
    if keyword is not None:  # `@webmethod(route="/models", method="GET")`, `@app.get(path="/x")`
        path = _route_path(keyword)
        if path is None or not path.startswith("/"):
            return None
    elif isinstance(func, ast.Attribute) and call.args and (
            (decorator and name in _ROUTE_VERBS) or name in _ROUTE_REGISTRATIONS):
        path = _route_path(call.args[0])
        if path is None:
            return None
    else:
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in prefixes:
        path = prefixes[func.value.id].rstrip("/") + path if path.startswith("/") else prefixes[func.value.id] + path
    verb = "WS" if name == "add_websocket_route" else _ROUTE_VERBS.get(name, "")
    return f"{verb or _methods_verb(call)} {path}"


def _methods_verb(call: ast.Call) -> str:
    """The verbs a call's ``methods=`` (or ``method=``) keyword lists when each is a literal ("GET|POST"),
    else "ANY"."""
    methods = next((k.value for k in call.keywords if k.arg in ("methods", "method")), None)
    elements = methods.elts if isinstance(methods, (ast.List, ast.Tuple, ast.Set)) else \
        [methods] if methods is not None else []
    written = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return "|".join(sorted({m.upper() for m in written})) if written and len(written) == len(elements) else "ANY"


# Route objects listed in an application's routes (Starlette's `Route("/x", endpoint, methods=["GET"])`,
# `WebSocketRoute("/ws", endpoint)`, FastAPI's own classes): routes as a decorator's are, resolved through
# the file's imports so that a class of the system's own named `Route` is none.
_ROUTE_CLASSES = {"starlette.routing.Route": "", "starlette.routing.WebSocketRoute": "WS",
                  "fastapi.routing.APIRoute": "", "fastapi.routing.APIWebSocketRoute": "WS",
                  "starlette.routing.Mount": None}


def _route_object(call: ast.Call, invoked: str | None) -> str | None:
    """The route a route object declares ("GET|POST /x", "WS /ws"); None for a mount or a path that is
    not written as one."""
    verb = _ROUTE_CLASSES.get(invoked or "")
    if verb is None:
        return None
    value = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "path"), None)
    path = _route_path(value) if value is not None else None
    if path is None:
        return None
    return f"{verb or _methods_verb(call)} {path}"


def _route_path(node: ast.expr) -> str | None:
    """A route's path: a literal ("/v1/models"), or an f-string with its values as written in braces
    ("{url_prefix}/models"); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        pieces = [str(part.value) if isinstance(part, ast.Constant) else
                  "{" + ast.unparse(part.value) + "}" if isinstance(part, ast.FormattedValue) else "?"
                  for part in node.values]
        text = "".join(pieces)
    else:
        return None
    if not text.startswith(("/", "{")) or "/" not in text or _SPACE.search(text) or len(text) > _MAX_STRING:
        return None
    return text


def _imports(index: ModuleIndex) -> tuple[set[tuple[str, str, int, int]], set[tuple[str, str, int, int]],
                                          dict[str, str]]:
    """(imports, imports under ``if TYPE_CHECKING:``, local name -> what it imports). Every import
    counts, however nested: a name imported in one function is still an imported name where the
    code uses it. Where two imports bind one name, the one ``ast.walk`` meets last wins."""
    typing_only = {id(n) for branch in index.of(ast.If) if _is_type_checking(branch.test)
                   for inner in branch.body for n in ast.walk(inner)
                   if isinstance(n, (ast.Import, ast.ImportFrom))}
    imports: set[tuple[str, str, int, int]] = set()
    typing_imports: set[tuple[str, str, int, int]] = set()
    aliases: dict[str, str] = {}
    for sub in index.breadth_first(ast.Import, ast.ImportFrom):
        found = typing_imports if id(sub) in typing_only else imports
        if isinstance(sub, ast.Import):
            for alias in sub.names:
                found.add((alias.name, "", 0, sub.lineno))
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    aliases.setdefault(head, head)
        elif isinstance(sub, ast.ImportFrom):
            module = sub.module or ""
            prefix = "." * sub.level + module
            for alias in sub.names:
                found.add((module, alias.name, sub.level, sub.lineno))
                if alias.name == "*":
                    continue
                target = f"{prefix}.{alias.name}" if module else prefix + alias.name
                aliases[alias.asname or alias.name] = target
    return imports, typing_imports, aliases


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:`` (also ``t.TYPE_CHECKING``)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# --- C++ / CUDA -----------------------------------------------------------------------------------

_CLASS_TYPES = {"class_specifier": "class", "struct_specifier": "struct"}
# Every node the C++ facts come from is captured by the per-file query the C/C++ scanners share
# (extractor.cpp.parse.file_nodes, as ``concept.<kind>``): tree-sitter matches in C and hands
# Python only these (a walk over every node built a Python object per node, twice the parse).
# What lies inside these is part of them, not a fact of its own: an include's path string, the
# parts and template arguments of a qualified name, a string's pieces.
_WHOLE = ("include", "qualified", "string")


def scan_cpp(parsed: ParsedFile) -> ConceptFacts | None:
    tree = parsed.tree
    if getattr(tree, "root_node", None) is None:
        return None
    found = file_nodes(tree, parsed.language)
    captured = {name: found.get(f"concept.{name}", []) for name in CONCEPT_CAPTURES}
    inside = _Inside([n for name in _WHOLE for n in captured.get(name, ())])

    def nodes(name: str) -> list[Any]:
        return [n for n in captured.get(name, ()) if not inside(n)]

    includes: set[Seen] = set()
    names: set[Seen] = set()
    calls: set[Seen] = set()
    strings: set[Seen] = set()
    routes: set[Seen] = set()
    c_api: list[tuple[int, int]] = []
    for node in nodes("include"):
        path = node.child_by_field_name("path")
        if path is not None:
            includes.add((_text(path).strip('"<>'), node.start_point[0] + 1))
    for node in nodes("linkage"):
        value, body = node.child_by_field_name("value"), node.child_by_field_name("body")
        if value is not None and _text(value) == '"C"' and body is not None:
            declared = sum(1 for c in body.named_children
                           if c.type == "declaration" and _function_declarator(c) is not None)
            if declared:
                c_api.append((node.start_point[0] + 1, declared))
    for node in nodes("call"):
        func = node.child_by_field_name("function")
        if func is not None:
            line = node.start_point[0] + 1
            route = _cpp_route(node, func)
            if route is not None:
                routes.add((route, line))
            if func.type == "field_expression":
                field = func.child_by_field_name("field")
                if field is not None:
                    calls.add((_text(field), line))
            else:
                name = _plain_name(func)
                if name:
                    names.add((name, line))
    for node in nodes("qualified"):
        names.add((_plain_name(node), node.start_point[0] + 1))
    for node in nodes("type"):
        names.add((_text(node), node.start_point[0] + 1))
    for node in nodes("string"):
        text = "".join(_text(c) for c in node.named_children if c.type == "string_content")
        if 3 <= len(text) <= _MAX_STRING and not _SPACE.search(text):
            strings.add((text, node.start_point[0] + 1))
    defs = _cpp_definitions(nodes("namespace"), nodes("class") + nodes("struct"), nodes("function"))
    return ConceptFacts(
        includes=tuple(sorted(includes)), names=tuple(sorted(names)), calls=tuple(sorted(calls)),
        strings=tuple(sorted(strings)), routes=tuple(sorted(routes)),
        defs=tuple(sorted(defs, key=lambda d: (d.line, d.qualname))), c_api=tuple(sorted(c_api)))


_HTTP_METHODS = frozenset({"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"})
# cpp-httplib's Server (and servers shaped like it): `svr.Get("/health", handler)`
_CPP_ROUTE_METHODS = {"Get": "GET", "Post": "POST", "Put": "PUT", "Delete": "DELETE", "Patch": "PATCH",
                      "Options": "OPTIONS"}


# what a registration is called (`RegisterRoute`, `addHandler`, `on`, `route`), not a lookup (`find`, `match`)
_REGISTERS = re.compile(r"(?i)(?:register|add|set|on|handle|map|bind)\w*|\w*(?:route|handler|endpoint)\w*")


def _cpp_route(call: Any, func: Any) -> str | None:
    """The route a C/C++ call registers with literals: a router's method named after the HTTP method
    (``svr.Post("/completion", handler)``), or a registration given the method and the path, then
    more (``server.RegisterRoute("GET", "/health", handler)``: a function named to register, route or
    handle); None for anything else."""
    arguments = call.child_by_field_name("arguments")
    args = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    literals = [_cpp_literal(a) for a in args[:2]]
    method = ""
    path = None
    if func.type == "field_expression" and len(args) >= 2:
        field = func.child_by_field_name("field")
        method = _CPP_ROUTE_METHODS.get(_text(field), "") if field is not None else ""
        path = literals[0]
    if not method and len(args) >= 3 and literals[0] in _HTTP_METHODS \
            and _REGISTERS.fullmatch(_text(func).rsplit("::", 1)[-1].rsplit(".", 1)[-1].rsplit(">", 1)[-1]):
        method, path = literals[0] or "", literals[1]
    if not method or path is None or not path.startswith("/") or len(path) > _MAX_STRING or _SPACE.search(path):
        return None
    return f"{method} {path}"


def _cpp_literal(node: Any) -> str | None:
    if node.type != "string_literal":
        return None
    parts = node.named_children
    if any(c.type != "string_content" for c in parts):
        return None
    return "".join(_text(c) for c in parts)


class _Inside:
    """Whether a node lies inside one of some nodes (by byte range: a tree's nodes nest)."""

    def __init__(self, wholes: list[Any]) -> None:
        outermost: list[Any] = []
        for node in sorted(wholes, key=lambda n: (n.start_byte, -n.end_byte)):
            if not outermost or node.start_byte >= outermost[-1].end_byte:
                outermost.append(node)
        self._nodes = outermost
        self._starts = [n.start_byte for n in outermost]

    def __call__(self, node: Any) -> bool:
        i = bisect.bisect_right(self._starts, node.start_byte) - 1
        if i < 0:
            return False
        whole = self._nodes[i]
        return node.end_byte <= whole.end_byte and node != whole


def _cpp_definitions(namespaces: list[Any], classes: list[Any], functions: list[Any]) -> list[Definition]:
    """Classes, structs and functions, qualified by the namespaces and classes around them."""
    # A scope is opened by a named namespace, and by a named class or struct with a body.
    openers: list[tuple[Any, str]] = []
    for node in namespaces:
        name = node.child_by_field_name("name")
        if name is not None:
            openers.append((node, _text(name)))
    entries: list[tuple[int, int, int, Any]] = []  # (start, -end, order, node): outer before inner
    for node in classes:
        if node.child_by_field_name("body") is not None and node.child_by_field_name("name") is not None:
            openers.append((node, ""))
    opened = {id(node): name for node, name in openers}
    for node, _name in openers:
        entries.append((node.start_byte, -node.end_byte, 0, node))
    for node in functions:
        entries.append((node.start_byte, -node.end_byte, 1, node))
    entries.sort(key=lambda e: e[:3])
    defs: list[Definition] = []
    stack: list[tuple[Any, str]] = []  # the open scopes around the current node: (node, name)
    for _start, _end, _order, node in entries:
        while stack and not (node.start_byte >= stack[-1][0].start_byte and node.end_byte <= stack[-1][0].end_byte):
            stack.pop()
        scope = [name for _node, name in stack]
        kind = node.type
        if kind in _CLASS_TYPES:
            name_node = node.child_by_field_name("name")
            bases: list[str] = []
            for child in node.children:
                if child.type == "base_class_clause":
                    bases = [_plain_name(c) for c in child.named_children if c.type != "access_specifier"]
            plain = _plain_name(name_node)
            # the name's line, not the specifier's: "template <...>" may come first
            defs.append(Definition("::".join([*scope, plain]), _CLASS_TYPES[kind], _name_line(name_node),
                                   tuple(b for b in bases if b)))
            stack.append((node, plain))
        elif id(node) in opened:  # a namespace
            stack.append((node, opened[id(node)]))
        else:
            declarator = _function_declarator(node)
            name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
            if name_node is not None:
                is_kernel = any(c.type == "__global__" or _text(c) == "__global__" for c in node.children
                                if c.type != "compound_statement")
                defs.append(Definition("::".join([*scope, _plain_name(name_node)]),
                                       "kernel" if is_kernel else "function", _name_line(name_node)))
    return defs


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _name_line(node: Any) -> int:
    """Line of the last part of a (qualified) name: the line a reader looks for."""
    while node.type == "qualified_identifier" and node.child_by_field_name("name") is not None:
        node = node.child_by_field_name("name")
    return node.start_point[0] + 1


def _function_declarator(node: Any) -> Any:
    declarator = node.child_by_field_name("declarator")
    # pointer/reference declarators wrap the function declarator (``T* f()``, ``T& f()``)
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _plain_name(node: Any) -> str:
    """``a::b::f<int>`` -> ``a::b::f``; ``B<int>`` -> ``B``; other nodes: their text."""
    kind = node.type
    if kind == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        name = node.child_by_field_name("name")
        head = _plain_name(scope) if scope is not None else ""
        tail = _plain_name(name) if name is not None else ""
        return f"{head}::{tail}"
    if kind in ("template_type", "template_function", "template_method"):
        name = node.child_by_field_name("name")
        return _plain_name(name) if name is not None else ""
    if kind in ("identifier", "type_identifier", "namespace_identifier", "field_identifier",
                "destructor_name", "operator_name", "primitive_type"):
        return _text(node)
    return ""
