"""Same input, byte-identical evidence, whatever the pool size and the listing order."""

from __future__ import annotations

import sqlite3

import pytest

from extractor.evidence.write import dumps_bundle
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.conftest import EVERY_STEP, FIXTURES, cache_root, extract_real


def _extract(spec: str, cache, jobs: int) -> str:
    return dumps_bundle(extract_system([spec], options=ExtractOptions(jobs=jobs, cache_dir=cache)).bundle)


def _forget_bundles(cache) -> None:
    """Drop the whole-bundle memo so the next run recomputes every step from cached facts."""
    db = sqlite3.connect(cache / "facts.sqlite")
    with db:
        db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%'")
    db.close()


@pytest.mark.parametrize("fixture", ["pysample", "pyo3_ext", "cgo_mini", "proto_mini"])
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
    """vLLM 0.10.2 with struct probes: one process and two workers write the same bytes.

    ``two`` is the extraction every real vLLM test shares (``extract_real``: -j2, the test cache),
    computed cold with two workers by the first test that asks for it: this one or another, in this
    run or in an earlier one of the same code and inputs (the memo's key covers them). ``one`` scans
    every file again in this process (-j1, a fact cache of its own). Its struct probes are served
    from the probe results ``two`` computed: that a cached result lays a header out as its compile
    did is part of the claim here; that probes give the same results on one thread and on several
    is test_structs_batch's (a cold probe of vLLM's headers costs as much again as the scan).
    ``again`` reassembles ``one``'s cached facts with two workers, every step recomputed."""
    named = {"name": "vllm", "version": "0.10.2"}  # as the other tests name it: their memo serves ``two``
    two = extract_real(vllm_src, **named, options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff")).data
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "structs-probe").symlink_to(cache_root() / "archdiff" / "structs-probe", target_is_directory=True)
    one = extract_system([str(vllm_src)], **named, options=ExtractOptions(jobs=1, cache_dir=tmp_path / "one")).data
    again = extract_system([str(vllm_src)], **named, options=ExtractOptions(jobs=2, cache_dir=tmp_path / "one"),
                           executor=EVERY_STEP)
    assert again.cache["memo"] == 0 and again.cache["misses"] == 0  # warm: every file's facts from the cache
    assert one == two == again.data
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
