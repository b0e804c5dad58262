"""A name's resolution does not depend on which name was asked first, so modules' calls can be
resolved in any order, or split over processes (extractor.python.graph resolves them in forked
children), and give the same edges.

The case that made it depend: star imports in a cycle. ``a`` star-imports ``b`` then ``c``, ``b``
star-imports ``a`` then ``d``; ``c`` and ``d`` each define ``f``. Asked alone, ``b.f`` looks in
``a``, whose own search for ``f`` meets ``b.f`` again (cut: not there) and finds ``c.f``; ``a.f``
looks in ``b``, meets ``a.f`` again and finds ``d.f``. A memo that kept the answers found inside a
cycle answered ``a.f`` with ``c.f`` once ``b.f`` had been asked, and the other way round."""

from __future__ import annotations

import json

import pytest

from extractor.context import ExtractOptions
from extractor.python import graph as pygraph
from extractor.python.resolve import PyModule, Resolver
from extractor.run.pipeline import extract_system

FILES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "from pkg.b import *\nfrom pkg.c import *\n\nf()\n",
    "pkg/b.py": "from pkg.a import *\nfrom pkg.d import *\n\nf()\n",
    "pkg/c.py": "def f():\n    return 1\n",
    "pkg/d.py": "def f():\n    return 2\n",
    # a chain of star imports longer than the resolver follows (its depth limit), into the cycle
    **{f"pkg/chain{i}.py": f"from pkg.chain{i + 1} import *\n\nf()\n" for i in range(16)},
    "pkg/chain16.py": "from pkg.b import *\n\nf()\n",
    # a local's type that names another local's, both ways
    "pkg/local.py": "def g(x: 'y', y: 'x'):\n    return x.run()\n",
}


def _write(root, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def system(tmp_path_factory) -> tuple[Resolver, dict[str, PyModule]]:
    """The resolver and modules as the Python graph step holds them when it resolves calls."""
    root = _write(tmp_path_factory.mktemp("src"), FILES)
    held: list[tuple[Resolver, dict[str, PyModule]]] = []
    calls = pygraph._last_pass

    def keep(g, resolver, modules, *rest, **named):
        held.append((resolver, modules))
        return calls(g, resolver, modules, *rest, **named)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pygraph, "_last_pass", keep)
        extract_system([str(root)], options=ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("c"),
                                                           probe_structs=False))
    return held[0]


def _fresh(resolver: Resolver) -> Resolver:
    return Resolver(resolver.modules, resolver.nodes, resolver.members)


def _plain(found: pygraph.ModuleCalls) -> tuple:
    return sorted(found.edges), found.outside, sorted(found.counts.items())


def test_a_star_import_cycle_answers_each_name_as_asked_alone(system):
    resolver, _modules = system
    names = ["pkg.a.f", "pkg.b.f", *(f"pkg.chain{i}.f" for i in range(17))]
    alone = {name: _fresh(resolver).absolute(name) for name in names}
    assert alone["pkg.a.f"] == ("node", "py:pkg.d.f")
    assert alone["pkg.b.f"] == ("node", "py:pkg.c.f")
    for order in (names, names[::-1], sorted(names, key=lambda n: (n.count("chain"), n))):
        shared = _fresh(resolver)
        assert {name: shared.absolute(name) for name in order} == alone


def test_every_module_resolves_its_calls_alike_in_any_order(system):
    resolver, modules = system
    alone = {name: _plain(pygraph.module_calls(_fresh(resolver), module)) for name, module in modules.items()}
    for order in (list(modules), list(modules)[::-1]):
        shared = _fresh(resolver)
        assert {name: _plain(pygraph.module_calls(shared, modules[name])) for name in order} == alone
    assert alone["pkg.a"][0] == [("py:pkg.a", "py:pkg.c.f", 4)]
    assert alone["pkg.b"][0] == [("py:pkg.b", "py:pkg.d.f", 4)]


def test_the_bundle_is_the_same_with_one_job_and_two(tmp_path):
    root = _write(tmp_path / "src", FILES)
    bundles = [json.dumps(extract_system([str(root)], options=ExtractOptions(
        jobs=jobs, cache_dir=tmp_path / f"c{jobs}", probe_structs=False)).bundle, sort_keys=True) for jobs in (1, 2)]
    assert bundles[0] == bundles[1]
