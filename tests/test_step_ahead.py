"""A step's ``ahead`` work (extractor.model.Step.ahead): done on each file as the scan's results
come in, handed to the step once, and the evidence the same as the step's own work gives.

The Python step places each module's definitions ahead (extractor.python.defs.DefinitionsAhead).
"""

from __future__ import annotations

import dataclasses

from extractor import python
from extractor.acquire.inventory import list_files
from extractor.acquire.sources import acquire, parse_spec
from extractor.context import Context, ExtractOptions
from extractor.python.defs import DefinitionsAhead
from extractor.run.cache import FactCache
from extractor.run.compute import _read, _scan
from extractor.run.pipeline import extract_system
from extractor.run.progress import Progress

_UTIL = "class Pool:\n    size: int = 4\n\n    def take(self, n):\n        return n\n\n\ndef helper(x):\n    return x\n"


def _tree(tmp_path):
    root = tmp_path / "src"
    for package in ("alpha", "beta"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text(f'"""The {package} package."""\n')
        (root / package / "util.py").write_text(_UTIL)  # the same bytes in both packages
    (root / "alpha" / "engine.py").write_text("from alpha.util import Pool\n\n\nclass Engine(Pool):\n"
                                              "    def step(self):\n        return self.take(1)\n")
    return root


def _extract(root, cache, step, keep=None):
    options = ExtractOptions(jobs=2, cache_dir=cache, probe_structs=False)
    return extract_system([str(root)], name="s", version="1", options=options, steps=[step], keep=keep)


def test_definitions_placed_ahead_give_the_evidence_the_step_places_itself(tmp_path):
    root = _tree(tmp_path)
    placed: list[tuple[str, str]] = []

    class Counted(DefinitionsAhead):
        def __call__(self, path, module, facts):
            placed.append((path, module))
            return super().__call__(path, module, facts)

    kept: list[object] = []
    ahead = _extract(root, tmp_path / "c1", dataclasses.replace(python.STEP, ahead=Counted), kept)
    itself = _extract(root, tmp_path / "c2", dataclasses.replace(python.STEP, ahead=None))
    # Every file was placed ahead, the two of one content under one of their paths (the other
    # file's definitions are placed by the step, at its own path).
    assert sorted(set(placed)) in (
        [("alpha/__init__.py", "alpha"), ("alpha/engine.py", "alpha.engine"), ("alpha/util.py", "alpha.util"),
         ("beta/__init__.py", "beta")],
        [("alpha/__init__.py", "alpha"), ("alpha/engine.py", "alpha.engine"), ("beta/__init__.py", "beta"),
         ("beta/util.py", "beta.util")])
    assert bytes(ahead.data) == bytes(itself.data)
    nodes = {n["id"]: n for n in ahead.bundle["graph"]["nodes"]}
    assert nodes["py:beta.util.Pool.take"]["path"] == "beta/util.py"
    assert nodes["py:alpha.util.Pool.take"]["path"] == "alpha/util.py"
    ctx = next(k for k in kept if isinstance(k, Context))
    assert ctx.take_ahead(python.STEP) == {}  # handed over once, to the step


def test_definitions_placed_under_another_module_name_are_placed_again(tmp_path):
    root = _tree(tmp_path)
    source = acquire(parse_spec(str(root)), tmp_path / "c")
    entries, _ = list_files(source)
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "c")
    blobs, _ = _read([(source, e) for e in entries], (python.STEP,))
    files, _, _, done = _scan(blobs, (python.STEP,), options, FactCache(None), Progress())
    engine = "alpha/engine.py"
    assert done["python"][engine][0] == "alpha.engine"
    # as if the inventory had named the module otherwise than the step does
    facts = next(f.facts["python"] for f in files if f.path == engine)
    done["python"][engine] = DefinitionsAhead()(engine, "elsewhere.engine", facts)
    ctx = Context("s", "1", (source,), files, options, done_ahead=done)
    ids = {n.id for n in python.STEP.extract(ctx).nodes}
    assert "py:alpha.engine.Engine.step" in ids
    assert not any(i.startswith("py:elsewhere") for i in ids)
