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


def _chain(times: int) -> str:
    """ncnn's tests of torch's interpolate: one name assigned ``times`` times from a call of itself."""
    body = "".join(f"        x = F.interpolate(x, size={n}, mode='nearest')\n" for n in range(times))
    return ("import torch.nn.functional as F\nfrom prometheus_client import Counter\n\n"
            "CALLS = Counter('interpolate_calls_total', 'calls')\n\n"
            f"class Model:\n    def forward(self, x):\n{body}        return x\n")


def test_a_value_too_large_to_expand_is_unknown_and_the_rest_is_read():
    """Shared, `x`'s value was small in memory; expanded (the facts' encoding, every comparison of two
    values) it was 25 calls deep and 25 wide down to MAX_DEPTH: 4.8 GB and 31 CPU s for a 7 KB file
    of ncnn, whose workers died of it (`parser-crashed`)."""
    from extractor.run.facts import encode_result, pack_result

    facts = _facts(_chain(25))
    counter = next(c for c in facts.calls if c.callee == "Counter")
    assert counter.args[0] == ["lit", "interpolate_calls_total"]
    calls = [c for c in facts.calls if c.callee == "F.interpolate"]
    assert len(calls) == 25
    # its `x` is the parameter or any of the 25 calls, each on an `x` too large to expand: said with its text
    last = calls[-1]
    assert last.kwargs["size"] == ["lit", 24] and last.args[0][0] == "alt"
    assert ["param", "x"] in last.args[0][1] and len(last.args[0][1]) == 26
    assert {repr(value[3]) for value in last.args[0][1] if value[0] == "call"} == {repr([["unk", "x"]])}
    for call in calls:
        assert python_scope._nodes(list(call.args), {}) <= python_scope.MAX_VALUE_NODES
    assert len(pack_result(encode_result(1, [], {"metrics": facts}))) < 64_000


def test_values_under_the_node_limit_are_those_read_without_it(monkeypatch):
    small = [_chain(3), _tangle(4, 2), _SELF_ATTRS]
    limited = [_facts(source) for source in small]
    monkeypatch.setattr(python_scope, "MAX_VALUE_NODES", 10 ** 9)
    assert limited == [_facts(source) for source in small]
