"""Calls resolved once per call key (extractor.python.resolve.ModuleLookup.call_key) resolve as
they would one scope at a time: a parameter shadows a module-level name in its function only, a
class body sees its own members, ``self.x()`` follows each class."""

from __future__ import annotations

import textwrap

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.helpers import edge_set

SOURCE = '''
def helper():
    return 1


def make():
    return 2


def shadowed(helper):
    return helper()


def plain():
    return helper()


class A:
    def make():
        return 3

    value = make()

    def step(self):
        return 4

    def run(self):
        return self.step()


class B:
    def step(self):
        return 5

    def run(self):
        return self.step()


made = make()
'''

M = "py:pkg.mod."


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    root = tmp_path_factory.mktemp("src")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(textwrap.dedent(SOURCE))
    options = ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("cache"), probe_structs=False)
    return edge_set(extract_system([str(root)], options=options).bundle, "calls")


def test_a_parameter_shadows_the_module_name_in_its_function_only(calls):
    assert (M + "plain", M + "helper") in calls
    assert not {target for source, target in calls if source == M + "shadowed"}


def test_a_class_body_sees_its_members_and_module_level_code_does_not(calls):
    assert (M + "A", M + "A.make") in calls
    assert ("py:pkg.mod", M + "make") in calls
    assert ("py:pkg.mod", M + "A.make") not in calls


def test_self_calls_follow_each_class(calls):
    assert (M + "A.run", M + "A.step") in calls
    assert (M + "B.run", M + "B.step") in calls
    assert (M + "B.run", M + "A.step") not in calls
