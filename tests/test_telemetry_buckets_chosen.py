"""Histogram buckets that are one of several values the run chooses between: LiteLLM's
`tuple(custom) if custom is not None else LATENCY_BUCKETS`, where `custom` is a setting a user may
assign (`litellm.prometheus_latency_buckets`). The reader took the known alternative and said the
buckets were resolved; they are now the last known alternative's values, not resolved, with every
alternative said."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from tests.conftest import extract_real

SETTINGS = """from typing import List, Optional

latency_buckets: Optional[List[float]] = None
"""

METRICS = """from typing import Final

from prometheus_client import Histogram

import svc

LATENCY = (0.1, 0.5, 1.0)
WIDE = [1.0, 2.0]


class Metrics:
    def __init__(self, custom=None, wide=False):
        chosen: Final = svc.latency_buckets
        self.buckets = tuple(chosen) if chosen is not None else LATENCY
        self.latency = Histogram("svc_latency_seconds", "Latency", buckets=self.buckets)
        self.wait = Histogram("svc_wait_seconds", "Wait", buckets=custom or LATENCY)
        self.span = Histogram("svc_span_seconds", "Span", buckets=WIDE if wide else LATENCY)
        self.same = Histogram("svc_same_seconds", "Same", buckets=LATENCY if wide else (0.1, 0.5, 1.0))
        self.fixed = Histogram("svc_fixed_seconds", "Fixed", buckets=LATENCY)
"""


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    (root / "svc").mkdir()
    (root / "svc" / "__init__.py").write_text(SETTINGS)
    (root / "svc" / "metrics.py").write_text(METRICS)
    options = ExtractOptions(jobs=1, cache_dir=Path(tmp_path_factory.mktemp("cache")), probe_structs=False)
    bundle = extract_real(root, options=options).bundle
    return {m["name"]: (m["buckets"], m["buckets_resolved"], m["unresolved"]) for m in bundle["metrics"]}


def test_buckets_one_of_several_alternatives_are_said_chosen_at_run_time(metrics):
    latency = [0.1, 0.5, 1.0]
    assert metrics == {
        # a setting read from another module, or a parameter: not known here
        "svc_latency_seconds": (latency, False, "buckets: one of svc.latency_buckets | [0.1, 0.5, 1.0], "
                                                "chosen at run time (the last known shown)"),
        "svc_wait_seconds": (latency, False, "buckets: one of parameter custom | [0.1, 0.5, 1.0], "
                                             "chosen at run time (the last known shown)"),
        # two known lists: either may be the one
        "svc_span_seconds": (latency, False, "buckets: one of [1.0, 2.0] | [0.1, 0.5, 1.0], "
                                             "chosen at run time (the last known shown)"),
        # alternatives that are the same values, and one value: resolved
        "svc_same_seconds": (latency, True, ""),
        "svc_fixed_seconds": (latency, True, ""),
    }
