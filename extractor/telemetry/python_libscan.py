"""Per-file facts about metric *libraries* the code uses, beside the metrics it defines itself:
where it serves prometheus_client's default registry (whose default collectors then show in every
scrape), builder objects such as prometheus-fastapi-instrumentator's ``Instrumentator(...)`` with
the methods called on them, and OpenTelemetry Prometheus readers.

Each search first looks for its marker in the raw bytes, so files that do not name the library
cost nothing beyond that test; the nodes come from the module's shared index, in the order
``ast.walk`` meets them (:meth:`extractor.python.index.ModuleIndex.breadth_first`).
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.python.expr import name_chain
from extractor.python.index import ModuleIndex
from extractor.telemetry.python_facts import BuilderArg, BuilderChain, BuilderMethod, ReaderUse, RegistryUse, Sym
from extractor.telemetry.python_scope import Frame, ModuleScope, compile_expr

# prometheus_client's exposition entry points and the position of their ``registry`` argument
# (prometheus_client 0.26.0 exposition.py / asgi.py); a call without one serves REGISTRY.
EXPOSITION = {"start_http_server": 2, "start_wsgi_server": 2, "make_asgi_app": 0, "make_wsgi_app": 0,
              "generate_latest": 0, "write_to_textfile": 1, "push_to_gateway": 2, "pushadd_to_gateway": 2}
BUILDER_NAMES = frozenset({"Instrumentator", "PrometheusFastApiInstrumentator"})
READER_NAMES = frozenset({"PrometheusMetricReader"})


def scan_library_uses(index: ModuleIndex, data: bytes, module: ModuleScope) -> dict[str, Any]:
    """``registry_uses``, ``builders`` and ``readers`` (see :class:`.python_facts.MetricFacts`), when any."""
    facts: dict[str, Any] = {}
    frame = module.frame()
    # REGISTRY and the exposition functions come from prometheus_client (MODEL_REGISTRY does not)
    if b"prometheus" in data and (b"REGISTRY" in data or any(name.encode() in data for name in EXPOSITION)):
        uses = _registry_uses(index)
        if uses:
            facts["registry_uses"] = tuple(uses)
    if any(name.encode() in data for name in BUILDER_NAMES):
        builders = _builders(index, frame)
        if builders:
            facts["builders"] = tuple(builders)
    if any(name.encode() in data for name in READER_NAMES):
        readers = [ReaderUse(name_chain(node.func) or "", node.lineno, _keywords(node, frame))
                   for node in index.breadth_first(ast.Call) if isinstance(node, ast.Call)
                   and (name_chain(node.func) or "").rsplit(".", 1)[-1] in READER_NAMES]
        if readers:
            facts["readers"] = tuple(readers)
    return facts


def _keywords(node: ast.Call, frame: Frame) -> dict[str, Sym]:
    return {k.arg: compile_expr(k.value, frame) for k in node.keywords if k.arg}


def _registry_uses(index: ModuleIndex) -> list[RegistryUse]:
    """Exposition calls (with the registry they serve, "" for the default) and ``REGISTRY`` used
    as a value (returned, passed, assigned), not as the receiver of a method call."""
    uses: list[RegistryUse] = []
    receivers = {id(node.value) for node in index.of(ast.Attribute)}
    for node in index.breadth_first(ast.Call):
        assert isinstance(node, ast.Call)
        callee = name_chain(node.func) or ""
        position = EXPOSITION.get(callee.rsplit(".", 1)[-1])
        if position is None:
            continue
        registry = next((k.value for k in node.keywords if k.arg == "registry"), None)
        if registry is None and len(node.args) > position:
            registry = node.args[position]
        text = "" if registry is None else (name_chain(registry) or ast.unparse(registry)[:80])
        uses.append(RegistryUse("expose", callee, text, node.lineno))
    for node in index.breadth_first(ast.Name, ast.Attribute):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in receivers:
            name = name_chain(node)
            if name and name.rsplit(".", 1)[-1] == "REGISTRY":
                uses.append(RegistryUse("value", name, name, node.lineno))
    return sorted(uses, key=lambda u: (u.line, u.kind, u.callee))


def _builders(index: ModuleIndex, frame: Frame) -> list[BuilderChain]:
    """``Builder(...).m1(...).m2(...)`` chains, and ``x = Builder(...)`` followed by ``x.m(...)``."""
    # chain: (callee, line, kwargs, methods), methods added to while reading
    chains: dict[int, tuple[str, int, dict[str, Sym], list[BuilderMethod]]] = {}
    # id of a call ending a chain -> id of the builder's construction it starts from: a variable may
    # keep the chain's end (`inst = Instrumentator().instrument(app)`, then `inst.expose(app)`)
    starts: dict[int, int] = {}
    variables: dict[str, list[BuilderMethod]] = {}
    calls = [node for node in index.breadth_first(ast.Call) if isinstance(node, ast.Call)]
    for node in calls:
        methods: list[BuilderMethod] = []
        current: ast.expr = node
        while isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute) \
                and isinstance(current.func.value, ast.Call):
            methods.append(_method(current, frame))
            current = current.func.value
        if not isinstance(current, ast.Call):
            continue
        callee = name_chain(current.func) or ""
        if callee.rsplit(".", 1)[-1] not in BUILDER_NAMES:
            continue
        starts[id(node)] = id(current)
        chain = chains.get(id(current))
        if chain is None or len(methods) > len(chain[3]):
            chains[id(current)] = (callee, current.lineno, _keywords(current, frame), list(reversed(methods)))
    for assign in index.breadth_first(ast.Assign):
        if isinstance(assign, ast.Assign) and isinstance(assign.value, ast.Call) and id(assign.value) in starts:
            for target in assign.targets:
                text = name_chain(target)
                if text:
                    variables[text] = chains[starts[id(assign.value)]][3]
    if variables:
        for node in calls:
            if isinstance(node.func, ast.Attribute):
                receiver = name_chain(node.func.value)
                if receiver in variables:
                    variables[receiver].append(_method(node, frame))
    out = [BuilderChain(callee, line, kwargs, tuple(sorted(methods, key=lambda m: (m.line, m.name))))
           for callee, line, kwargs, methods in chains.values()]
    return sorted(out, key=lambda c: c.line)


def _method(node: ast.Call, frame: Frame) -> BuilderMethod:
    assert isinstance(node.func, ast.Attribute)
    args = []
    for arg in node.args:
        if isinstance(arg, ast.Call):  # .add(metrics.latency(buckets=...)): a library function
            args.append(BuilderArg(callee=name_chain(arg.func) or "", kwargs=_keywords(arg, frame)))
        else:
            args.append(BuilderArg(value=compile_expr(arg, frame)))
    return BuilderMethod(node.func.attr, node.lineno, tuple(args), _keywords(node, frame))
