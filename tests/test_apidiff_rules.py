"""Each breakage rule on tiny packages: (old code, new code, the rows expected), positive and negative.

A row is (symbol path, kind, breaking). Only the rows under the symbol a case is about are compared,
so a case states everything the diff says about that symbol.
"""

from __future__ import annotations

import pytest

from comparator.apidiff import BreakageKind as K
from comparator.apidiff.rules import INFORMATIONAL, PROTOBUF
from tests.apidiff_support import diff_trees

CASES = [
    # parameter removed
    ("removed", "def f(a, b): ...", "def f(a): ...", {("f", K.PARAMETER_REMOVED, True)}),
    ("removed, swallowed by **kwargs", "def f(a, *, b): ...", "def f(a, **kw): ...",
     {("f", K.PARAMETER_REMOVED, False)}),
    ("removed from a private function", "def _f(a, b): ...", "def _f(a): ...",
     {("_f", K.PARAMETER_REMOVED, False)}),
    # positional parameter moved
    ("moved", "def f(a, b): ...", "def f(b, a): ...",
     {("f", K.PARAMETER_MOVED, True)}),
    ("keyword-only reordered", "def f(*, a, b): ...", "def f(*, b, a): ...", set()),
    # parameter kind changed
    ("now keyword-only", "def f(a): ...", "def f(*, a): ...", {("f", K.PARAMETER_KIND_CHANGED, True)}),
    ("now positional-or-keyword", "def f(*, a): ...", "def f(a): ...", {("f", K.PARAMETER_KIND_CHANGED, False)}),
    # parameter added as required
    ("added required", "def f(a): ...", "def f(a, b): ...", {("f", K.PARAMETER_ADDED_REQUIRED, True)}),
    ("added with a default", "def f(a): ...", "def f(a, b=1): ...", set()),
    # parameter now required
    ("now required", "def f(a=1): ...", "def f(a): ...", {("f", K.PARAMETER_NOW_REQUIRED, True)}),
    ("now optional", "def f(a): ...", "def f(a=1): ...", set()),
    # default changed
    ("default changed", "def f(a=1): ...", "def f(a=2): ...", {("f", K.DEFAULT_CHANGED, True)}),
    ("same default respelled", "def f(a=1_000, b='x'): ...", 'def f(a=1000, b="x"): ...', set()),
    # return annotation changed
    ("return retyped", "def f() -> int: ...", "def f() -> str: ...", {("f", K.RETURN_CHANGED, True)}),
    ("return widened", "def f() -> int: ...", "def f() -> Optional[int]: ...", {("f", K.RETURN_CHANGED, True)}),
    ("return narrowed", "def f() -> Optional[int]: ...", "def f() -> int: ...", {("f", K.RETURN_CHANGED, False)}),
    ("returned None", "def f() -> None: ...", "def f() -> int: ...", {("f", K.RETURN_CHANGED, False)}),
    ("return respelled", "def f() -> Optional[List[int]]: ...", "def f() -> list[int] | None: ...", set()),
    # base class removed
    ("base removed", "class B: ...\nclass C(B): ...", "class B: ...\nclass C: ...",
     {("C", K.BASE_REMOVED, True)}),
    ("base kept through a new middle class", "class B: ...\nclass C(B): ...",
     "class B: ...\nclass M(B): ...\nclass C(M): ...", set()),
    # object kind changed
    ("function became a constant", "def X(): ...", "X = 1", {("X", K.OBJECT_KIND_CHANGED, True)}),
    ("function still a function", "def X(): ...", "def X(a=1): ...", set()),
    # public object removed
    ("function removed", "def f(): ...\ndef g(): ...", "def g(): ...", {("f", K.OBJECT_REMOVED, True)}),
    ("private function removed", "def _f(): ...\ndef g(): ...", "def g(): ...", {("_f", K.OBJECT_REMOVED, False)}),
    ("class removed with its members: one row", "class C:\n    def m(self): ...", "",
     {("C", K.OBJECT_REMOVED, True)}),
    # attribute removed or retyped
    ("class attribute removed", "class C:\n    x: int = 0", "class C: ...", {("C", K.ATTRIBUTE_REMOVED, True)}),
    ("instance attribute removed", "class C:\n    def __init__(self):\n        self.y = 1",
     "class C:\n    def __init__(self):\n        pass", {("C", K.ATTRIBUTE_REMOVED, True)}),
    ("private attribute removed", "class C:\n    def __init__(self):\n        self._y = 1",
     "class C:\n    def __init__(self):\n        pass", set()),
    ("attribute retyped", "class C:\n    x: int = 0", "class C:\n    x: str = ''", {("C", K.ATTRIBUTE_RETYPED, True)}),
    ("attribute respelled", "class C:\n    x: Optional[int] = 0", "class C:\n    x: int | None = 0", set()),
    # overload removed
    ("overload removed", "@overload\ndef f(a: int) -> int: ...\n@overload\ndef f(a: str) -> str: ...\ndef f(a): ...",
     "@overload\ndef f(a: int) -> int: ...\ndef f(a): ...", {("f", K.OVERLOAD_REMOVED, True)}),
    ("overloads dropped, the implementation still takes the calls",
     "@overload\ndef f(a: int) -> int: ...\n@overload\ndef f(a: str) -> str: ...\ndef f(a): ...",
     "def f(a): ...", {("f", K.OVERLOAD_REMOVED, False)}),
]
HEADER = "from typing import List, Optional, overload\n"


def _rows(found, prefix: str) -> set[tuple[str, K, bool]]:
    out = set()
    for b in found:
        if b.path == prefix or b.path.startswith(prefix + ".") or b.path.startswith(prefix + "("):
            short = b.path[len("pkg.mod."):].split(".")[0]
            out.add((short, b.kind, b.breaking))
    return out


@pytest.mark.parametrize("old, new, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(tmp_path, old, new, expected):
    found = diff_trees(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": HEADER + old},
                       {"pkg/__init__.py": "", "pkg/mod.py": HEADER + new})
    watched = {e[0] for e in expected} or {"f", "X", "C", "_f"}
    got = set()
    for name in watched:
        got |= _rows(found, f"pkg.mod.{name}")
    assert got == expected


def test_every_kind_has_a_positive_case():
    # the protobuf rules have theirs in test_apidiff_proto.py
    assert {e[1] for c in CASES for e in c[3] if e[2]} == set(K) - INFORMATIONAL - PROTOBUF


def test_rows_carry_locations_uses_and_explain(tmp_path):
    old = {"pkg/__init__.py": "", "pkg/mod.py": "def f(a, b): ...\n", "pkg/use.py": "from pkg.mod import f\nf(1, 2)\nf(3, 4)\n"}
    new = {"pkg/__init__.py": "", "pkg/mod.py": "# moved down\n\ndef f(a): ...\n", "pkg/use.py": "from pkg.mod import f\n"}
    (row,) = [b for b in diff_trees(tmp_path, old, new) if b.path == "pkg.mod.f"]
    assert (row.old_location.line, row.new_location.line) == (1, 3)
    assert row.uses == 2  # the module-level calls in use.py are one caller; its import is the other use
    assert row.explain() == ("pkg/mod.py:3: pkg.mod.f(b): parameter removed [breaking: a call passing it fails "
                             "(unless *args/**kwargs of the right kind take it)] (2 uses in the old release)")


def test_reexport_removed_and_moved_but_still_importable(tmp_path):
    old = {"pkg/__init__.py": "from pkg.core import Engine, helper\n__all__ = ['Engine', 'helper']\n",
           "pkg/core.py": "class Engine:\n    def run(self, n): ...\n\ndef helper(): ...\n"}
    new = {"pkg/__init__.py": "from pkg.engine import Engine\n__all__ = ['Engine']\n",
           "pkg/engine.py": "class Engine:\n    def run(self, n, m): ...\n",
           "pkg/core.py": "from pkg.engine import Engine\n\ndef helper(): ...\n"}
    rows = {(b.path, b.kind, b.breaking) for b in diff_trees(tmp_path, old, new)}
    # vllm.LLM-style: the re-export is gone although helper itself stays
    assert ("pkg.helper", K.OBJECT_REMOVED, True) in rows
    # Engine moved to pkg.engine; pkg.core still imports it, so pkg.core.Engine is no removal, and
    # its method is compared where it lives now
    assert not any(path.startswith("pkg.core.Engine") and kind is K.OBJECT_REMOVED for path, kind, _ in rows)
    assert ("pkg.engine.Engine.run", K.PARAMETER_ADDED_REQUIRED, True) in rows


def test_inherited_members_removed_through_a_public_subclass(tmp_path):
    old = {"pkg/__init__.py": "", "pkg/mod.py": "class _Base:\n    def shared(self): ...\n\nclass Pub(_Base): ...\n"}
    new = {"pkg/__init__.py": "", "pkg/mod.py": "class _Base: ...\n\nclass Pub(_Base): ...\n"}
    rows = {(b.path, b.kind, b.breaking) for b in diff_trees(tmp_path, old, new)}
    assert ("pkg.mod.Pub.shared", K.OBJECT_REMOVED, True) in rows  # public through Pub
    assert ("pkg.mod._Base.shared", K.OBJECT_REMOVED, False) in rows


def test_generated_constructor_changes_are_parameter_changes(tmp_path):
    old = {"pkg/__init__.py": "", "pkg/mod.py": "from dataclasses import dataclass, field\n@dataclass\nclass Cfg:\n"
           "    a: int\n    b: str = 'x'\n    c: list = field(default_factory=list)\n"}
    new = {"pkg/__init__.py": "", "pkg/mod.py": "from dataclasses import dataclass, field\n@dataclass\nclass Cfg:\n"
           "    a: int\n    z: int\n    b: str = 'y'\n"}
    rows = {(b.path, b.kind, b.subject, b.breaking) for b in diff_trees(tmp_path, old, new)}
    assert {("pkg.mod.Cfg.__init__", K.PARAMETER_ADDED_REQUIRED, "z", True),
            ("pkg.mod.Cfg.__init__", K.PARAMETER_MOVED, "b", True),
            ("pkg.mod.Cfg.__init__", K.DEFAULT_CHANGED, "b", True),
            ("pkg.mod.Cfg.__init__", K.PARAMETER_REMOVED, "c", True),
            ("pkg.mod.Cfg.c", K.ATTRIBUTE_REMOVED, "", True)} <= rows


def test_functional_namedtuple_fields_are_constructor_parameters(tmp_path):
    old = {"pkg/__init__.py": "", "pkg/mod.py": "from collections import namedtuple\n"
           "Span = namedtuple('Span', 'start end step', defaults=[1])\n"}
    new = {"pkg/__init__.py": "", "pkg/mod.py": "from collections import namedtuple\n"
           "Span = namedtuple('Span', 'start step', defaults=[2])\n"}
    rows = {(b.path, b.kind, b.subject, b.breaking) for b in diff_trees(tmp_path, old, new)}
    assert {("pkg.mod.Span.__new__", K.PARAMETER_REMOVED, "end", True),
            ("pkg.mod.Span.__new__", K.PARAMETER_MOVED, "step", True),
            ("pkg.mod.Span.__new__", K.DEFAULT_CHANGED, "step", True),
            ("pkg.mod.Span.end", K.ATTRIBUTE_REMOVED, "", True)} <= rows
    assert not any(kind is K.OBJECT_KIND_CHANGED for _, kind, _, _ in rows)


def test_language_agnostic_cpp_nodes_by_api(tmp_path):
    from comparator.apidiff import find_breakages
    from extractor.model import Node, NodeKind, Parameter, ParamKind

    def fn(api, params):
        return Node("cpp:ops::rms_norm", NodeKind.FUNCTION, "rms_norm", "ops::rms_norm", "cpp", "csrc/ops.cpp", 10,
                    params=tuple(Parameter(n, ParamKind.POSITIONAL_ONLY, t) for n, t in params), api=api)

    old = fn("public: torch op schema", [("out", "Tensor"), ("input", "Tensor")])
    new = fn("public: torch op schema", [("out", "Tensor"), ("input", "Tensor"), ("eps", "float")])
    (row,) = find_breakages([old], [], [new], [])
    assert (row.kind, row.subject, row.breaking, row.language) == (K.PARAMETER_ADDED_REQUIRED, "eps", True, "cpp")
    internal = find_breakages([fn("private: device helper", [("x", "int")])], [], [fn("private: device helper", [])], [])
    assert [(b.kind, b.breaking) for b in internal] == [(K.PARAMETER_REMOVED, False)]


# Bound is bound: a module-level name the new release still binds, by whatever statement, is not
# removed; what binds it changed, which no rule calls breaking (a row "binding-changed" when the name
# has no symbol of its own in the new release, no row when it has one and its kind is the same). An
# import of a symbol of the system is compared as what it names, like griffe compares an alias.
OTHER = "def g(): ...\ndef h(a): ...\nx = 3\nclass C: ...\n"
BOUND = [
    ("try/except ImportError fallback dropped", "try:\n    import ipaddress\nexcept ImportError:\n"
     "    ipaddress = None\n", "import ipaddress\n", "ipaddress", K.BINDING_CHANGED),
    ("as-import fallback dropped", "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n",
     "import numpy as np\n", "np", K.BINDING_CHANGED),
    ("dotted import binds its head", "os = None\n", "import os.path\n", "os", K.BINDING_CHANGED),
    ("assignment became an outside from-import", "ipaddress = None\n", "from os import path as ipaddress\n",
     "ipaddress", K.BINDING_CHANGED),
    ("assignment became an import of a module of the system", "ipaddress = None\n",
     "from pkg import other as ipaddress\n", "ipaddress", K.OBJECT_KIND_CHANGED),
    ("import became an assignment", "import ipaddress\nipaddress = ipaddress\n", "ipaddress = 1\n", "ipaddress", None),
    ("assignment became a tuple assignment", "a = 1\n", "a, (b, *c) = 1, (2, 3)\n", "a", None),
    ("assignment became annotated", "a = 1\n", "a: int\n", "a", None),
    ("assignment became augmented", "a = 1\n", "a = 0\na += 1\n", "a", None),
    ("assignment became a def", "f = len\n", "def f(x): ...\n", "f", K.OBJECT_KIND_CHANGED),
    ("def became a class", "def f(): ...\n", "class f: ...\n", "f", K.OBJECT_KIND_CHANGED),
    ("def became an alias to a function elsewhere", "def g(): ...\n", "from pkg.other import g\n", "g", None),
    ("def became an alias under another name", "def f(): ...\n", "from pkg.other import g as f\n", "f", None),
    ("def became an alias to another signature", "def f(): ...\n", "from pkg.other import h as f\n", "f",
     K.PARAMETER_ADDED_REQUIRED),
    ("def became an alias to a class", "def f(): ...\n", "from pkg.other import C as f\n", "f",
     K.OBJECT_KIND_CHANGED),
    ("class became an import of it", "class C: ...\n", "from pkg.other import C\n", "C", None),
    ("assignment became a global in a function", "a = 1\n", "def init():\n    global a\n    a = 1\n", "a",
     K.BINDING_CHANGED),
    ("assignment became a for target", "i = 0\n", "for i in range(3):\n    pass\n", "i", K.BINDING_CHANGED),
    ("assignment became a with target", "fh = None\n", "with open('x') as (fh, gh):\n    pass\n", "fh",
     K.BINDING_CHANGED),
    ("assignment moved into if/else branches", "a = 1\n", "if True:\n    a = 1\nelse:\n    a = 2\n", "a", None),
    ("assignment became an import in the else of if TYPE_CHECKING", "json = None\n",
     "if TYPE_CHECKING:\n    pass\nelse:\n    import json\n", "json", K.BINDING_CHANGED),
    ("assignment moved into try/except", "a = 1\n", "try:\n    a = 1\nexcept Exception:\n    a = 2\n", "a", None),
    ("star import of a module without __all__", "x = 1\n", "from pkg.other import *\n", "x", None),
]


@pytest.mark.parametrize("old, new, name, kind", [c[1:] for c in BOUND], ids=[c[0] for c in BOUND])
def test_a_name_still_bound_is_not_removed(tmp_path, old, new, name, kind):
    found = diff_trees(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old, "pkg/other.py": OTHER},
                       {"pkg/__init__.py": "", "pkg/mod.py": new, "pkg/other.py": OTHER})
    rows = [b for b in found if b.path == f"pkg.mod.{name}"]
    assert not [b for b in rows if b.kind in (K.ATTRIBUTE_REMOVED, K.OBJECT_REMOVED)]
    assert {b.kind for b in rows} == ({kind} if kind else set())
    assert all(b.breaking == (b.kind not in INFORMATIONAL) for b in rows)


def test_star_import_through_all_binds_the_listed_names(tmp_path):
    # The importing module has its own __all__, so the star-imported name is no re-export of it;
    # still bound: reading pkg.mod.x works. A name the star source does not export stays removed.
    other = "x = 1\ny = 2\n__all__ = ['x']\n"
    old = "x = 1\ny = 2\n__all__ = ['x', 'y']\n"
    new = "from pkg.other import *\n__all__ = []\n"
    found = diff_trees(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old, "pkg/other.py": other},
                       {"pkg/__init__.py": "", "pkg/mod.py": new, "pkg/other.py": other})
    rows = {b.path: b for b in found if b.path.startswith("pkg.mod.")}
    assert (rows["pkg.mod.x"].kind, rows["pkg.mod.x"].breaking) == (K.BINDING_CHANGED, False)
    assert rows["pkg.mod.x"].new_location.line == 1
    assert (rows["pkg.mod.y"].kind, rows["pkg.mod.y"].breaking) == (K.ATTRIBUTE_REMOVED, True)


def test_a_name_no_statement_binds_any_more_is_still_removed(tmp_path):
    old = "try:\n    import ipaddress\nexcept ImportError:\n    ipaddress = None\nLIMIT = 3\nPath = None\n"
    # only type checkers bind Path now: reading pkg.mod.Path fails when the module runs
    new = "import socket\nfor i in range(2):\n    pass\n\ndef init():\n    global other\n\n" \
          "if TYPE_CHECKING:\n    from pathlib import Path\nelse:\n    import json\n"
    found = diff_trees(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old}, {"pkg/__init__.py": "", "pkg/mod.py": new})
    rows = {(b.path, b.kind, b.breaking) for b in found}
    assert ("pkg.mod.ipaddress", K.ATTRIBUTE_REMOVED, True) in rows
    assert ("pkg.mod.LIMIT", K.ATTRIBUTE_REMOVED, True) in rows
    assert ("pkg.mod.Path", K.ATTRIBUTE_REMOVED, True) in rows


def test_binding_row_says_where_the_name_is_bound_now(tmp_path):
    old = "try:\n    import ipaddress\nexcept ImportError:\n    ipaddress = None\n"
    new = "'''Doc.'''\n\nimport ipaddress\n"
    (row,) = [b for b in diff_trees(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old},
                                    {"pkg/__init__.py": "", "pkg/mod.py": new}) if b.path == "pkg.mod.ipaddress"]
    assert (row.old_location.line, row.new_location.line, row.new) == (4, 3, "import (line 3)")
    assert row.explain().startswith("pkg/mod.py:3: pkg.mod.ipaddress: now bound by another statement")
    assert "not breaking: the module still binds the name" in row.explain()
