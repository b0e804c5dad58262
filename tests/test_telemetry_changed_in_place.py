"""Metric arguments held in names the code changes in place after assigning them
(fixtures/built_buckets: LightLLM's shape, duration buckets built by ``append`` in a loop). The
assignment tables are flow-insensitive and the readers took the list first assigned, so such a
histogram had the buckets of that first list (none, for ``[]``) and said they were resolved."""

from __future__ import annotations

import pytest

from extractor.context import ExtractOptions
from tests.conftest import FIXTURES, extract_real

PATH = "monitor/metrics.py"


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("cache"), probe_structs=False)
    bundle = extract_real(FIXTURES / "built_buckets", options=options).bundle
    return {m["name"]: m for m in bundle["metrics"]}


def _read(m):
    return (m["path"], m["line"], m["buckets"], m["buckets_resolved"], m["labels"], m["labels_resolved"],
            m["unresolved"])


def test_arguments_changed_in_place_are_unresolved_and_say_by_what(metrics):
    assert {name: _read(m) for name, m in metrics.items()} == {
        # appended in a loop in __init__, read through self in another method
        "svc_step_seconds": (PATH, 21, [], False, [], True, "buckets: latency.append(edge)"),
        "svc_batch_size": (PATH, 22, [], False, [], True, "buckets: self.sizes += [8, 16]"),
        # a module-level list with an item replaced
        "svc_prompt_tokens": (PATH, 23, [], False, [], True, "buckets: TOKEN_BUCKETS[2] = 1024"),
        "svc_requests": (PATH, 26, [], True, [], False, "labels: labels.extend(['route'])"),
        # nothing changes this one: still read whole
        "svc_queue_seconds": (PATH, 28, [0.1, 1.0, 10.0], True, [], True, ""),
    }
