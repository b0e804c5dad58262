"""A kind written outside the extractor package is an input of the cache by its code: after its
author changes its scanner, the next run neither serves the facts nor the bundle computed before."""

from __future__ import annotations

import importlib
import json
import sys

from extractor.context import ExtractOptions
from extractor.run.cache import code_fingerprint
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS

KIND = '''
from extractor.model import Contribution, Language, Step


def scan(parsed):
    return {"n": parsed.text.count(MARK)}


def extract(ctx):
    found = sum(facts["n"] for _file, facts in ctx.facts(STEP.name, Language.PYTHON))
    return Contribution(stats={"found": found})


STEP = Step(name="marks", extract=extract, scanners={Language.PYTHON: scan})
'''


def _kind(folder, mark: str):
    (folder / "outside_kind.py").write_text(f"MARK = {mark!r}\n" + KIND)
    sys.modules.pop("outside_kind", None)
    importlib.invalidate_caches()
    return importlib.import_module("outside_kind")


def test_a_changed_outside_scanner_is_run_again(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    root = tmp_path / "src"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("A = 1  # alpha\nB = 2  # beta beta\n")
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache", probe_structs=False)

    def found(mark: str) -> tuple[int, str]:
        step = _kind(tmp_path, mark).STEP
        extraction = extract_system([str(root)], name="m", version="1", steps=(*STEPS, step), options=options)
        return json.loads(extraction.data)["stats"]["marks"]["found"], code_fingerprint((*STEPS, step))

    alpha, before = found("alpha")
    beta, after = found("beta")
    assert (alpha, beta) == (1, 2)  # before the fix the second run served the first run's bundle: 1
    assert before != after
    assert found("beta") == (2, after)  # unchanged code: the same fingerprint


def test_the_product_steps_add_no_outside_source():
    from extractor.run import cache

    package = cache.Path(cache.__file__).resolve().parent.parent
    assert cache._outside_sources(list(STEPS), package) == set()
