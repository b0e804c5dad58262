"""Same input, byte-identical evidence, whatever the pool size and the listing order."""

from __future__ import annotations

import pytest

from extractor.bundle import dumps_bundle
from extractor.context import ExtractOptions
from extractor.pipeline import extract_system
from tests.conftest import FIXTURES


def _extract(spec: str, cache, jobs: int) -> str:
    return dumps_bundle(extract_system([spec], options=ExtractOptions(jobs=jobs, cache_dir=cache)).bundle)


def test_fixture_bundle_is_byte_identical_cold_warm_and_across_jobs(tmp_path):
    spec = str(FIXTURES / "pysample")
    cold = _extract(spec, tmp_path / "a", 1)
    warm = _extract(spec, tmp_path / "a", 1)
    parallel = _extract(spec, tmp_path / "b", 2)
    assert cold == warm == parallel
    assert str(tmp_path) not in cold  # no absolute or temporary paths in evidence


@pytest.mark.real
def test_vllm_bundle_is_byte_identical_across_jobs(vllm_src, tmp_path):
    one = _extract(str(vllm_src), tmp_path / "one", 1)
    two = _extract(str(vllm_src), tmp_path / "two", 2)
    again = _extract(str(vllm_src), tmp_path / "two", 2)  # warm: from the cache
    assert one == two == again
    assert len(one) > 1_000_000
