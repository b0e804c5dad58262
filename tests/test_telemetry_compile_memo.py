"""The metrics scanner reads an argument through every value assigned to its names, down to
``MAX_DEPTH`` (``python_scope.compile_expr``). A function that assigns a few names many times
from one another made that reading exponential (litellm's ``get_llm_provider``: 19 CPU s for one
file); each expression's value at each depth is now computed once per frame. These tests check
that the values are the ones the unshared reading gives, on the shapes that share (names, a
class's ``self`` attributes through other methods, module-level names), and that the number of
reads grows with the assignments, not with their product."""

from __future__ import annotations

import ast

import pytest

from extractor.model import Language, ParsedFile
from extractor.telemetry import python_scope
from extractor.telemetry.python_scan import scan_python_metrics


class _Unshared(dict):
    """A frame's memo that keeps nothing: every read computed again, as before the memo."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


def _tangle(names: int, times: int) -> str:
    """A factory whose metric name is read through ``names`` names, each assigned ``times``
    times from the others: paths exponential in MAX_DEPTH, few distinct values."""
    lines = ["from prometheus_client import Counter", "", "def make(prefix, kind):"]
    for n in range(names):
        lines.append(f"    v{n} = prefix + '_{n}'")
        for k in range(1, times):
            lines.append(f"    v{n} = v{(n + k) % names}" if k % 2 else
                         f"    v{n} = v{(n + k) % names} if kind else v{(n + 2 * k) % names} + '_x'")
    lines.append("    return Counter(v0 + '_total', 'help')")
    return "\n".join(lines) + "\n"


_SELF_ATTRS = """
from prometheus_client import Gauge, Histogram

PREFIX = "app"
BASE = PREFIX + "_base"
BASE = BASE if PREFIX else PREFIX

class Metrics:
    unit = "seconds"

    def __init__(self, name, labels):
        self.name = name
        self.name = self.name + "_x" if labels else BASE
        self.labels = labels
        self.setup()

    def setup(self):
        self.full = self.name + "_" + self.unit
        self.full = self.full if self.labels else self.name
        self.gauge = Gauge(self.full, "doc", self.labels)

    def other(self):
        self.hist = Histogram(self.full + "_hist", "doc", buckets=[BASE, PREFIX])
"""


def _facts(source: str, monkeypatch: pytest.MonkeyPatch | None = None):
    if monkeypatch is not None:
        real_init = python_scope.Frame.__init__

        def unshared(self, *args, **kwargs):
            real_init(self, *args, **kwargs)
            self.compiled = _Unshared()

        monkeypatch.setattr(python_scope.Frame, "__init__", unshared)
    data = source.encode()
    return scan_python_metrics(ParsedFile(Language.PYTHON, data, ast.parse(data)))


@pytest.mark.parametrize("source", [_tangle(3, 3), _tangle(4, 2), _SELF_ATTRS],
                         ids=["tangle-3x3", "tangle-4x2", "self"])
def test_shared_values_are_the_unshared_ones(source, monkeypatch):
    shared = _facts(source)
    assert shared is not None and shared.calls  # the calls read arguments, so the readings ran
    with monkeypatch.context() as patch:
        unshared = _facts(source, patch)
    assert shared == unshared


def test_reads_grow_with_the_assignments_not_their_product(monkeypatch):
    reads = []
    real = python_scope._compile

    def counted(expr, frame, depth):
        reads.append(1)
        return real(expr, frame, depth)

    monkeypatch.setattr(python_scope, "_compile", counted)
    facts = _facts(_tangle(6, 6))
    call = next(c for c in facts.calls if c.callee == "Counter")
    assert call.args[0][0] == "add"  # read, not given up on
    # 36 assignments of 6 names, each value read at most once per depth (and its parts): 496
    # reads; without sharing the same reading took 82,374
    assert len(reads) < 36 * 4 * (python_scope.MAX_DEPTH + 2)
