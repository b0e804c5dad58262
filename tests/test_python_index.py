"""The shared walk of a module (extractor.python.index) against a reference recursive walk, the
scopes it gives each node, and the fast ``unparse`` against ``ast.unparse``."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from extractor.python.expr import unparse
from extractor.python.index import (BODY, DECORATOR, DEFAULT, KW_DEFAULT, PARAMETER, RETURNS, ModuleIndex,
                                    module_index)
from tests.conftest import ROOT

# Every statement and expression form the 3.11 grammar has, nested in defs, classes and lambdas.
EVERYTHING = '''
"""Module docstring."""
import os, sys as system
from .. import pkg
from .mod import (a as b, c)
from m import *
x: int = 1
y = z = [i for i in range(3) if i] + [*x, *y]
d = {**x, "k": v, 1: {j async for j in g}}
s = {1, 2}; t = (1,); e = ()
f = lambda a, /, b=1, *c, d=2, e, **g: (a, b, c, d, e, g)
w = (n := 10) if x else -y
fs = f"{x!r:>{width}} and {y=}" + rb"\\x00" + u"u"
sub = x[1:2, ::3, ...][0][:, None]
global_names = not a and b or c
cmp = 1 < a <= b is not c in d
aw = [await q async for q in r] if False else None
del x[0], y.z

@decorator(arg=call())
@other.attr
class C(Base[int], metaclass=Meta, flag=make()):
    """Class doc."""
    attr: ClassVar[int] = field(default_factory=list)

    def method(self, p: Annotated[int, note()] = default(), *, k=kw_default(), **kw) -> ret():
        global g
        nonlocal_free = 1

        def inner(q=lambda r=inner_default(): r):
            nonlocal nonlocal_free
            return q

        for i, j in pairs:
            continue
        else:
            pass
        while cond():
            break
        with ctx() as (a, b), other():
            yield a
        try:
            raise Error() from cause
        except (A, B) as err:
            assert err, "message"
        except Exception:
            pass
        else:
            pass
        finally:
            return inner

    async def coroutine(self):
        async with lock:
            async for item in stream():
                await item
        match command:
            case [Point(x=0, y=yy), *rest] if rest:
                pass
            case {"key": 1, **others}:
                pass
            case Point() | None as p:
                pass
            case _:
                pass
'''


def reference(tree: ast.AST) -> tuple[list[ast.AST], list[int], list[int]]:
    """Pre-order nodes (as ast.NodeVisitor.generic_visit meets them), their depths, and the
    post-order, without expression contexts and operators (the index does not keep them)."""
    skip = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    nodes: list[ast.AST] = []
    depths: list[int] = []
    post: list[int] = []

    def visit(node: ast.AST, depth: int) -> None:
        position = len(nodes)
        nodes.append(node)
        depths.append(depth)
        for _field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST) and not isinstance(child, skip):
                    visit(child, depth + 1)
        post.append(position)

    visit(tree, 0)
    return nodes, depths, post


def sources() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "extractor" / "python").glob("*.py"))


@pytest.mark.parametrize("text", [EVERYTHING, "", "x = 1\n", "def f(): pass\n"])
def test_the_index_meets_nodes_as_a_visitor_does(text):
    check(ast.parse(text))


def test_the_index_meets_every_node_of_real_files_as_a_visitor_does():
    for path in sources():
        check(ast.parse(path.read_bytes()))


def check(tree: ast.Module) -> None:
    index = ModuleIndex(tree)
    nodes, depths, post = reference(tree)
    assert len(index.nodes) == len(nodes) and all(a is b for a, b in zip(index.nodes, nodes))
    assert index.depths == depths
    everywhere = list(range(len(nodes)))
    assert index.post_order(everywhere) == post
    calls = index.positions(ast.Call)
    assert index.post_order(calls) == [p for p in post if p in set(calls)]
    walked = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Call, ast.Name))]
    assert index.breadth_first(ast.Import, ast.ImportFrom, ast.Call, ast.Name) == walked
    assert index.sites(everywhere) == [index.site(p) for p in everywhere]


def test_module_index_is_built_once_per_tree():
    tree = ast.parse("x = 1\n")
    assert module_index(tree) is module_index(tree)
    assert module_index(ast.parse("x = 1\n")) is not module_index(tree)


def test_a_defs_header_runs_in_the_enclosing_scope():
    tree = ast.parse(textwrap.dedent('''\
        @deco(d())
        def f(a: ann() = default(), *, k=kw(), l: (lambda m=lam(): m)() = 0) -> ret():
            body()

        class C(base(), flag=kw_class()):
            def m(self):
                def inner():
                    deep()
        '''))
    index = ModuleIndex(tree)
    positions = index.positions(ast.Call)
    where = {ast.unparse(call.func): site for call, site in zip(index.of(ast.Call), index.sites(positions))}
    assert (where["deco"].scope.qualname, where["deco"].header.qualname, where["deco"].part) == ("", "f", DECORATOR)
    assert where["d"].part == DECORATOR
    assert (where["default"].scope.qualname, where["default"].part) == ("", DEFAULT)
    assert where["kw"].part == KW_DEFAULT
    assert where["ann"].part == PARAMETER
    # a lambda's default inside an annotation stays in the annotation
    assert where["lam"].part == PARAMETER and where["ret"].part == RETURNS
    assert (where["body"].scope.qualname, where["body"].header, where["body"].part) == ("f", None, BODY)
    assert where["body"].owner.qualname == "f" and where["deco"].owner.qualname == "f"
    assert where["base"].header.qualname == "C" and where["kw_class"].scope.qualname == ""
    assert where["deep"].scope.qualname == "C.m.<locals>.inner"
    assert index.scopes[tree.body[1].body[0]].names == ("C", "m")


STRINGS = ["'plain'", '"dq"', "'it''s'", "'a\"b'", "'tab\\there'", "'new\\nline'", "'ünïcode'", "u'u'",
           "'back\\\\slash'", "''", "'\\x00'", "b'bytes'", "f'{x}'", "'x' 'y'"]
NUMBERS = ["1", "-1", "1.5", "-0.0", "1e400", "-1e400", "1j", "0x10", "10**1000", "True", "None", "...", "-True"]
SHAPES = ["a.b.c", "Optional[int]", "Dict[str, List[int]]", "x[1,]", "x[()]", "x[*a]", "Callable[[int], str]",
          "int | None", "a | b | c", "a | (b | c)", "f(a, b=c)", "f(*a, **k)", "f()", "super().f()",
          "super(C, self).f()", "a.b(c.d, e=[f, g])", "x[1:2]", "-x", "-(1)", "(a + b) | c", "lambda: 0",
          "f(x for x in y)", "1 .real", "a[b][c]"]


@pytest.mark.parametrize("text", STRINGS + NUMBERS + SHAPES)
def test_unparse_is_ast_unparse(text):
    expr = ast.parse(text, mode="eval").body
    assert unparse(expr) == ast.unparse(expr)


def test_unparse_is_ast_unparse_on_every_expression_of_real_files():
    for path in sources():
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.expr):
                assert unparse(node) == ast.unparse(node), f"{path}:{node.lineno}"


def test_a_huge_integer_fails_as_ast_unparse_does():
    expr = ast.Constant(10 ** (sys.get_int_max_str_digits() + 1))
    with pytest.raises(ValueError):
        ast.unparse(expr)
    with pytest.raises(ValueError):
        unparse(expr)
