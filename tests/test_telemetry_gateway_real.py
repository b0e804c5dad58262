"""Metric factories made by a function given the metric class, on a real LLM gateway: litellm
1.110.2 builds every metric of its Prometheus logger as ``self._counter_factory(...)`` after
``self._counter_factory = self._create_metric_factory(Counter)`` (a closure calling the class).
The definitions are counted from the source with ``ast``, independently of archdiff."""

from __future__ import annotations

import ast

import pytest

from conftest import sdist_root
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

pytestmark = pytest.mark.real

LOGGER = "litellm/integrations/prometheus.py"
TYPES = {"_counter_factory": "counter", "_gauge_factory": "gauge", "_histogram_factory": "histogram"}


def defined_in_source(path) -> dict[tuple[int, str], str]:
    """(line, name given) -> type, for every ``self._<type>_factory(...)`` call of the file."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TYPES:
            given = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "name")
            assert isinstance(given, ast.Constant), ast.unparse(node)
            found[(node.lineno, given.value)] = TYPES[node.func.attr]
    return found


def test_every_factory_made_metric_of_the_gateway():
    root = sdist_root("litellm", "1.110.2")
    expected = defined_in_source(root / LOGGER)
    assert len(expected) > 80  # the release defines 83
    result = build_context(root, [METRICS_STEP], only=(LOGGER,)).results["metrics"]
    own = [r for r in result.records if not r.origin]
    # prometheus_client drops a counter's _total from the name it keeps
    found = {(r.line, r.name + ("_total" if r.type.value == "counter" and (r.line, r.name + "_total") in expected
                                else "")): r.type.value for r in own}
    assert found == expected
    # (the module is named from the one file read: the package's __init__ files are not in `only`)
    assert {r.via for r in own} == {"factory:prometheus.PrometheusLogger._create_metric_factory > closure"}
    assert not [d for d in result.diagnostics if d.code == "metric-classes-without-records"]
