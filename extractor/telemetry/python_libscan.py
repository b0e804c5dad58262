"""Per-file facts about metric *libraries* the code uses, beside the metrics it defines itself:
where it serves prometheus_client's default registry (whose default collectors then show in every
scrape), builder objects such as prometheus-fastapi-instrumentator's ``Instrumentator(...)`` with
the methods called on them, and OpenTelemetry Prometheus readers.

Each search first looks for its marker in the raw bytes, so files that do not name the library
cost nothing beyond that test.
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.telemetry.python_scope import Frame, ModuleScope, compile_expr, dotted

# prometheus_client's exposition entry points and the position of their ``registry`` argument
# (prometheus_client 0.26.0 exposition.py / asgi.py); a call without one serves REGISTRY.
EXPOSITION = {"start_http_server": 2, "start_wsgi_server": 2, "make_asgi_app": 0, "make_wsgi_app": 0,
              "generate_latest": 0, "write_to_textfile": 1, "push_to_gateway": 2, "pushadd_to_gateway": 2}
BUILDER_NAMES = frozenset({"Instrumentator", "PrometheusFastApiInstrumentator"})
READER_NAMES = frozenset({"PrometheusMetricReader"})


def scan_library_uses(tree: ast.Module, data: bytes, module: ModuleScope) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    frame = Frame(module)
    # REGISTRY and the exposition functions come from prometheus_client (MODEL_REGISTRY does not)
    if b"prometheus" in data and (b"REGISTRY" in data or any(name.encode() in data for name in EXPOSITION)):
        uses = _registry_uses(tree)
        if uses:
            facts["registry_uses"] = uses
    if any(name.encode() in data for name in BUILDER_NAMES):
        builders = _builders(tree, frame)
        if builders:
            facts["builders"] = builders
    if any(name.encode() in data for name in READER_NAMES):
        readers = [{"callee": dotted(node.func), "line": node.lineno,
                    "kwargs": {k.arg: compile_expr(k.value, frame) for k in node.keywords if k.arg}}
                   for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and (dotted(node.func) or "").rsplit(".", 1)[-1] in READER_NAMES]
        if readers:
            facts["readers"] = readers
    return facts


def _registry_uses(tree: ast.Module) -> list[dict[str, Any]]:
    """Exposition calls (with the registry they serve, "" for the default) and ``REGISTRY`` used
    as a value (returned, passed, assigned), not as the receiver of a method call."""
    uses: list[dict[str, Any]] = []
    receivers: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            receivers.add(id(node.value))
        if isinstance(node, ast.Call):
            callee = dotted(node.func) or ""
            position = EXPOSITION.get(callee.rsplit(".", 1)[-1])
            if position is None:
                continue
            registry = next((k.value for k in node.keywords if k.arg == "registry"), None)
            if registry is None and len(node.args) > position:
                registry = node.args[position]
            text = "" if registry is None else (dotted(registry) or ast.unparse(registry)[:80])
            uses.append({"kind": "expose", "callee": callee, "registry": text, "line": node.lineno})
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in receivers:
            text = dotted(node)
            if text and text.rsplit(".", 1)[-1] == "REGISTRY":
                uses.append({"kind": "value", "callee": text, "registry": text, "line": node.lineno})
    return sorted(uses, key=lambda u: (u["line"], u["kind"], u["callee"]))


def _builders(tree: ast.Module, frame: Frame) -> list[dict[str, Any]]:
    """``Builder(...).m1(...).m2(...)`` chains, and ``x = Builder(...)`` followed by ``x.m(...)``."""
    chains: dict[int, dict[str, Any]] = {}
    variables: dict[str, dict[str, Any]] = {}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for node in calls:
        methods: list[dict[str, Any]] = []
        current: ast.expr = node
        while isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute) \
                and isinstance(current.func.value, ast.Call):
            methods.append(_method(current, frame))
            current = current.func.value
        if not isinstance(current, ast.Call):
            continue
        callee = dotted(current.func) or ""
        if callee.rsplit(".", 1)[-1] not in BUILDER_NAMES:
            continue
        chain = chains.get(id(current))
        if chain is None or len(methods) > len(chain["methods"]):
            chains[id(current)] = {
                "callee": callee, "line": current.lineno,
                "kwargs": {k.arg: compile_expr(k.value, frame) for k in current.keywords if k.arg},
                "methods": list(reversed(methods))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and id(node.value) in chains:
            for target in node.targets:
                text = dotted(target)
                if text:
                    variables[text] = chains[id(node.value)]
    if variables:
        for node in calls:
            if isinstance(node.func, ast.Attribute):
                receiver = dotted(node.func.value)
                if receiver in variables:
                    variables[receiver]["methods"].append(_method(node, frame))
    out = list(chains.values())
    for chain in out:
        chain["methods"].sort(key=lambda m: (m["line"], m["name"]))
    return sorted(out, key=lambda c: c["line"])


def _method(node: ast.Call, frame: Frame) -> dict[str, Any]:
    assert isinstance(node.func, ast.Attribute)
    args = []
    for arg in node.args:
        if isinstance(arg, ast.Call):  # .add(metrics.latency(buckets=...)): a library function
            args.append({"callee": dotted(arg.func) or "",
                         "kwargs": {k.arg: compile_expr(k.value, frame) for k in arg.keywords if k.arg}})
        else:
            args.append({"value": compile_expr(arg, frame)})
    return {"name": node.func.attr, "line": node.lineno, "args": args,
            "kwargs": {k.arg: compile_expr(k.value, frame) for k in node.keywords if k.arg}}
