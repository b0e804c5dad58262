"""Same input, byte-identical evidence, whatever the pool size and the listing order."""

from __future__ import annotations

import sqlite3

import pytest

from extractor.evidence.write import dumps_bundle
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES


def _extract(spec: str, cache, jobs: int) -> str:
    return dumps_bundle(extract_system([spec], options=ExtractOptions(jobs=jobs, cache_dir=cache)).bundle)


def _forget_bundles(cache) -> None:
    """Drop the whole-bundle memo so the next run recomputes every step from cached facts."""
    db = sqlite3.connect(cache / "facts.sqlite")
    with db:
        db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%'")
    db.close()


@pytest.mark.parametrize("fixture", ["pysample", "pyo3_ext", "cgo_mini"])
def test_fixture_bundle_is_byte_identical_cold_warm_and_across_jobs(tmp_path, fixture):
    spec = str(FIXTURES / fixture)
    cold = _extract(spec, tmp_path / "a", 1)
    memo = _extract(spec, tmp_path / "a", 1)
    _forget_bundles(tmp_path / "a")
    from_facts = _extract(spec, tmp_path / "a", 1)
    parallel = _extract(spec, tmp_path / "b", 2)
    assert cold == memo == from_facts == parallel
    assert str(tmp_path) not in cold  # no absolute or temporary paths in evidence


@pytest.mark.real
def test_vllm_bundle_is_byte_identical_across_jobs(vllm_src, tmp_path):
    one = _extract(str(vllm_src), tmp_path / "one", 1)
    two = _extract(str(vllm_src), tmp_path / "two", 2)
    _forget_bundles(tmp_path / "two")
    again = _extract(str(vllm_src), tmp_path / "two", 2)  # warm: every file's facts from the cache
    assert one == two == again
    assert len(one) > 1_000_000


def test_a_changed_manifest_alone_is_not_served_the_old_bundle(tmp_path):
    """Cargo.toml names the crate, so every Rust id depends on it although it is not parsed itself."""
    import shutil

    tree = tmp_path / "ext"
    shutil.copytree(FIXTURES / "pyo3_ext", tree)
    options = ExtractOptions(cache_dir=tmp_path / "cache")
    before = extract_system([str(tree)], name="ext", version="1", options=options)
    manifest = tree / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('name = "fastok-py"', 'name = "renamed-crate"', 1))
    after = extract_system([str(tree)], name="ext", version="1", options=options)
    assert after.cache["memo"] == 0
    ids = {n["id"] for n in after.bundle["graph"]["nodes"]}
    assert any(i.startswith("rs:renamed_crate::") for i in ids)
    assert not any(i.startswith("rs:renamed_crate::") for i in (n["id"] for n in before.bundle["graph"]["nodes"]))


def test_a_memo_hit_serves_the_same_bytes_and_counts_without_parsing_them(tmp_path):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    cold = extract_system([str(FIXTURES / "pysample")], options=options)
    warm = extract_system([str(FIXTURES / "pysample")], options=options)
    assert (cold.cache["memo"], warm.cache["memo"]) == (0, 1)
    assert warm.data == cold.data == dumps_bundle(cold.bundle).encode("utf-8")
    assert warm.summary == cold.summary and warm.summary["nodes"] == len(cold.bundle["graph"]["nodes"])
    assert not warm._parsed  # nothing so far needed the bundle itself
    assert warm.bundle == cold.bundle
    # a memo stored without its summary (an older cache) is counted once from the bundle
    db = sqlite3.connect(tmp_path / "cache" / "facts.sqlite")
    with db:
        db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%:summary'")
    db.close()
    again = extract_system([str(FIXTURES / "pysample")], options=options)
    assert again.cache["memo"] == 1 and again.summary == cold.summary
