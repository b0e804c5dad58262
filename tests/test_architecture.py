"""The project's own layering contract (.importlinter), checked like any other test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_import_contracts_hold():
    beside = Path(sys.executable).parent / "lint-imports"
    command = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert command, "lint-imports (import-linter) is not installed: pip install -e '.[test]'"
    proc = subprocess.run([command, str(ROOT / ".importlinter")], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_the_product_type_checks():
    """mypy over the packages pyproject.toml names (extractor, comparator, tracking, archdiff),
    its cache in the test cache so that a second run rechecks only what changed."""
    from tests.conftest import cache_root

    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache_root() / "mypy")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout


def test_every_registered_kind_is_under_the_contracts():
    """The kind contracts name the kinds by wildcard (``comparator.kinds.*``, ``comparator.kinds.*.render``),
    so a new kind needs no line in .importlinter: but only if it lives in its own package under
    ``comparator/kinds/`` with its formatting in ``render.py``. A kind elsewhere would escape them."""
    import configparser

    from comparator.registry import KINDS

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    assert config["importlinter:contract:kinds"]["modules"].split() == ["comparator.kinds.*"]
    assert "comparator.kinds.*.render" in config["importlinter:contract:renderers"]["source_modules"].split()
    for kind in KINDS:
        package = type(kind).__module__
        assert package.count(".") == 2 and package.startswith("comparator.kinds."), package
        assert (ROOT / package.replace(".", "/") / "render.py").is_file(), package


def test_the_pipeline_refuses_a_step_before_what_it_requires():
    import pytest

    from extractor import concepts, layers
    from extractor.run.pipeline import extract_system
    from extractor.steps import STEPS, check_order

    check_order(STEPS)  # the shipped order holds
    assert set(layers.STEP.requires) <= set(STEPS) and concepts.STEP in layers.STEP.requires
    swapped = [s for s in STEPS if s.name != "concepts"]
    swapped.append(concepts.STEP)  # concepts after layers, which reads its hits
    with pytest.raises(ValueError, match="step 'layers' requires 'concepts'"):
        check_order(swapped)
    with pytest.raises(ValueError, match="requires"):
        extract_system([str(ROOT / "fixtures" / "pysample")], steps=swapped)


def test_every_part_of_the_extractor_stands_on_a_floor():
    """A package or root module of the extractor that the floors contract does not name would be
    free to import anything: the contract must name every one of them."""
    import configparser
    import re

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    floors = {name for line in config["importlinter:contract:extractor-floors"]["layers"].split("\n")
              for name in re.split(r"\s*\|\s*", line.strip()) if name}
    parts = {f"extractor.{p.stem if p.is_file() else p.name}" for p in (ROOT / "extractor").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert parts == floors
    # and the root stays a small floor of shared records, not a flat room of modules
    assert len([p for p in (ROOT / "extractor").glob("*.py")]) <= 10


def test_no_module_of_the_product_imports_one_that_imports_it_back():
    """No import circle anywhere in the product code, at module level: the import graph of
    extractor, comparator, tracking and archdiff (imports inside functions and under
    TYPE_CHECKING included, as grimp reads them) has no cycle."""
    import grimp
    import networkx as nx

    graph = grimp.build_graph("extractor", "comparator", "tracking", "archdiff")
    imports = nx.DiGraph((module, imported) for module in graph.modules
                         for imported in graph.find_modules_directly_imported_by(module) if imported in graph.modules)
    cycles = sorted(sorted(c) for c in nx.simple_cycles(imports))
    assert cycles == []
