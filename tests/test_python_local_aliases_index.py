"""The locals a function's every binding gives a name, read from the module's index in one pass
(``scan._FunctionBodies``), are what a walk of each function body finds (``_walk_locals`` below):
the shapes where the two could part are the borders the walk draws (nested defs and their headers,
lambdas, the test of a conditional naming assignment) and the bindings that are no assignment."""

from __future__ import annotations

import ast
import textwrap

from extractor.model import Language, ParsedFile
from extractor.python import scan
from extractor.python.index import module_index

SOURCE = textwrap.dedent('''
    import k

    def plain(c):
        fn = k.a
        if c:
            fn = k.b
        other = k.c
        other = make()
        return fn, other

    def lambdas(xs):
        fn = k.a
        key = k.b
        g = lambda fn=k.c: [fn for fn in xs]   # binds fn only inside the lambda
        h = lambda: (key := 1)                  # and key
        return fn, key, g, h

    def nested(xs):
        fn = k.a
        late = k.b
        def inner(x=(late := 2)):               # a default runs outside inner, but the walk skips it
            fn = k.z
            return fn
        class Box:
            fn = k.y
        return fn, inner, late, Box

    def conditional(c, xs):
        fn = k.a if any(g for g in xs) else k.b  # the test binds g, which the walk does not see
        g = k.c
        pick = k.a if c else None
        return fn, g, pick

    def walrus(xs):
        fn = k.a
        if (fn := xs):
            pass
        seen = k.b
        return [seen for seen in xs], fn

    def other_bindings(xs):
        global a
        a = k.a
        b = k.b
        c = k.c
        d = k.d
        e = k.e
        f = k.f
        try:
            pass
        except ValueError as b:
            pass
        import os as c
        for d in xs:
            pass
        with open(xs) as e:
            pass
        match xs:
            case {"x": 1, **f}:
                pass
            case [*rest] if rest:
                pass
        del rest
        kept = k.g
        return kept

    class C:
        def method(self):
            fn = self.run
            return fn

    async def coroutine():
        fn = k.a
        async for fn2 in k.gen():
            pass
        return fn
''')


def _walk_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> scan._Locals:
    """The reference: a walk of the body that stops at nested defs and lambdas and at an
    assignment that gives a local a name (the scanner's reading before the index served it)."""
    found = scan._Locals()
    pending: list[ast.AST] = list(fn.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.other.add(node.name)
            continue  # its body is a scope of its own
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            held = scan._named_values(node.value, node.targets[0].id)
            if held is not None:
                found.values.setdefault(node.targets[0].id, []).extend((value, node.lineno) for value in held)
                continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.other.add(node.id)
        else:
            scan._bind_other(node, found.other)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _by_walk_and_by_index() -> tuple[dict[str, list], dict[str, list]]:
    tree = ast.parse(SOURCE)
    bodies = scan._FunctionBodies(module_index(tree))
    walked, indexed = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            walked[node.name] = scan._function_aliases(node.name, node, _walk_locals(node))
            indexed[node.name] = scan._function_aliases(node.name, node, bodies.locals_of(node))
    return walked, indexed


def test_the_index_finds_what_the_walk_finds_in_every_function():
    walked, indexed = _by_walk_and_by_index()
    assert indexed == walked


def test_the_walk_keeps_the_names_only_a_nested_scope_rebinds():
    walked, _ = _by_walk_and_by_index()
    names = {name: sorted({(alias.name, alias.value) for alias in walked[name]}) for name in walked}
    assert names["plain"] == [("fn", "k.a"), ("fn", "k.b")]  # other is also a call's result
    assert names["lambdas"] == [("fn", "k.a"), ("key", "k.b")]
    assert names["nested"] == [("fn", "k.a"), ("late", "k.b")]
    assert names["conditional"] == [("fn", "k.a"), ("fn", "k.b"), ("g", "k.c"), ("pick", "k.a")]
    assert names["walrus"] == []
    assert names["other_bindings"] == [("kept", "k.g")]
    assert names["method"] == [("fn", "self.run")]
    assert names["coroutine"] == [("fn", "k.a")]


def test_the_scanner_reports_them_in_its_facts():
    tree = ast.parse(SOURCE)
    facts = scan.scan_python(ParsedFile(Language.PYTHON, SOURCE.encode(), tree))
    assert {(a.scope, a.name) for a in facts.local_aliases} >= {("lambdas", "key"), ("nested", "late"),
                                                              ("C.method", "fn"), ("other_bindings", "kept")}
