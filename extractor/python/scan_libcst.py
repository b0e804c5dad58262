"""Per-file facts of a module only libcst can parse (syntax newer than the running interpreter's ast).

Best effort, in the shape :mod:`extractor.python.scan` gives: definitions with their parameters,
decorators and bases, and imports; no attributes, calls or types.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from extractor.python.expr import KW_ONLY, POS_KW, POS_ONLY, VAR_KW, VAR_POS, display_signature, to_params
from extractor.python.facts import METHOD_TAGS, Definition, Import, Param, PythonFacts


def scan_libcst(module: Any) -> PythonFacts:
    """Definitions (with parameters) and imports of a module only libcst can parse (no calls)."""
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    defs: list[Definition] = []
    imports: list[Import] = []
    code = module.code_for_node

    def as_name(alias: Any) -> str:
        """``import a as b``: "b" ("" without ``as``)."""
        return code(alias.asname.name).strip() if alias.asname else ""

    def name_of(expr: Any) -> str:
        return code(expr).strip() if isinstance(expr, (libcst.Name, libcst.Attribute)) else ""

    def annotation(node: Any) -> str:
        return code(node.annotation.annotation).strip() if node is not None and node.annotation is not None else ""

    def params(p: Any) -> tuple[Param, ...]:
        out = []
        for kind, group in ((POS_ONLY, p.posonly_params), (POS_KW, p.params)):
            out += [Param(x.name.value, kind, annotation(x), code(x.default).strip() if x.default else None)
                    for x in group]
        if isinstance(p.star_arg, libcst.Param):
            out.append(Param(p.star_arg.name.value, VAR_POS, annotation(p.star_arg), None))
        out += [Param(x.name.value, KW_ONLY, annotation(x), code(x.default).strip() if x.default else None)
                for x in p.kwonly_params]
        if p.star_kwarg is not None:
            out.append(Param(p.star_kwarg.name.value, VAR_KW, annotation(p.star_kwarg), None))
        return tuple(out)

    def walk(body: Iterable[Any], scope: str, scope_kind: str) -> None:
        for stmt in body:
            if isinstance(stmt, (libcst.FunctionDef, libcst.ClassDef)):
                name = stmt.name.value
                qual = name if scope_kind == "module" else (
                    f"{scope}.{name}" if scope_kind == "class" else f"{scope}.<locals>.{name}")
                line = positions[stmt].start.line
                decorators = [name_of(d.decorator.func if isinstance(d.decorator, libcst.Call) else d.decorator)
                              for d in stmt.decorators]
                if isinstance(stmt, libcst.ClassDef):
                    bases = [name_of(a.value.value if isinstance(a.value, libcst.Subscript) else a.value)
                             for a in stmt.bases]
                    defs.append(Definition("class", qual, line, "", ("decorated",) if stmt.decorators else (),
                                           tuple(bases), tuple(decorators)))
                    walk(stmt.body.body, qual, "class")
                else:
                    kind = "method" if scope_kind == "class" else "function"
                    tags = (["async"] if stmt.asynchronous else []) + (["decorated"] if stmt.decorators else [])
                    tags += sorted({METHOD_TAGS[d.rsplit(".", 1)[-1]] for d in decorators
                                    if d.rsplit(".", 1)[-1] in METHOD_TAGS})
                    returns = code(stmt.returns.annotation).strip() if stmt.returns is not None else ""
                    given = params(stmt.params)
                    defs.append(Definition(kind, qual, line, "", tuple(sorted(set(tags))), (), tuple(decorators),
                                           given, returns, signature=display_signature(to_params(given), returns)))
                    walk(getattr(stmt.body, "body", ()), qual, "function")
            elif isinstance(stmt, libcst.SimpleStatementLine):
                for small in stmt.body:
                    line = positions[stmt].start.line
                    if isinstance(small, libcst.Import):
                        for alias in small.names:
                            imports.append(Import(scope, line, code(alias.name), 0, "", as_name(alias)))
                    elif isinstance(small, libcst.ImportFrom):
                        module_name = code(small.module) if small.module else ""
                        names = [("*", "")] if isinstance(small.names, libcst.ImportStar) else [
                            (code(a.name), as_name(a)) for a in small.names]
                        for name, asname in names:
                            imports.append(Import(scope, line, module_name, len(small.relative), name, asname))
            else:
                for attr in ("body", "orelse", "handlers", "finalbody"):
                    inner = getattr(stmt, attr, None)
                    if inner is None:
                        continue
                    for block in (inner if isinstance(inner, (list, tuple)) else [inner]):
                        block_body = getattr(block, "body", block)
                        block_body = getattr(block_body, "body", block_body)
                        if isinstance(block_body, (list, tuple)):
                            walk(block_body, scope, scope_kind)

    walk(module.body, "", "module")
    return PythonFacts(defs=tuple(defs), imports=tuple(imports), fallback=True)
