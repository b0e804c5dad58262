"""The Ray executor on a local Ray runtime (``ray.init(num_cpus=2)``): the releases of a tagged
fixture repository give the same evidence and reports, byte for byte, as the local process pool;
per-file facts land in the driver's cache; a file that crashes its scanning worker is a diagnostic
of that file, and the run goes on."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import msgspec
import pytest
import ray

from extractor.context import ExtractOptions
from extractor.run.executor import LOCAL, open_executor
from extractor.run.facts import decode_result
from extractor.run.pipeline import extract_system
from extractor.run.raytasks import RayExecutor, scan_remote
from tests.conftest import ROOT
from tests.release_support import CRASHY, build_release_repo
from tracking.run import track_releases

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def ray_runtime():
    # Workers import the test's own helpers (the crashing scanner below) from the repository.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("index.html", ".lock")}


def test_ray_gives_the_local_executors_bytes(ray_runtime, tmp_path):
    repo = build_release_repo(tmp_path / "repo")
    parsed_local, parsed_ray = [], []
    local = track_releases(repo.as_uri(), tmp_path / "local", options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c1"),
                           executor=LOCAL, on_release=lambda _n, e: parsed_local.append(e.cache["misses"]))
    executor = open_executor("ray")
    assert isinstance(executor, RayExecutor)
    remote = track_releases(repo.as_uri(), tmp_path / "ray", options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c2"),
                            executor=executor, on_release=lambda _n, e: parsed_ray.append(e.cache["misses"]))
    executor.close()  # a runtime the test started stays up
    assert ray.is_initialized()
    assert local.extracted == remote.extracted == ("v0.1.0", "v0.2.0", "v0.3.0")
    # Releases extracted side by side parse each file content once, as one after another does
    # (whether a file came from the cache or from a concurrent release depends on timing).
    assert sum(parsed_ray) == sum(parsed_local) > 0
    a, b = _tree(tmp_path / "local"), _tree(tmp_path / "ray")
    assert sorted(a) == sorted(b) and any(k.endswith("evidence.json") for k in a) and any(k.endswith("report.html") for k in a)
    assert [k for k in a if a[k] != b[k]] == []
    # The tasks' facts went to the driver's cache: the local pipeline, on that cache, parses nothing.
    db = sqlite3.connect(tmp_path / "c2" / "facts.sqlite")
    facts, memos, summaries = (db.execute(f"SELECT count(*) FROM facts WHERE {where}").fetchone()[0] for where in (
        "key NOT LIKE 'bundle:%'", "key LIKE 'bundle:%' AND key NOT LIKE '%:summary'", "key LIKE 'bundle:%:summary'"))
    db.close()
    assert facts > 20 and memos == 3 and summaries == 3  # each release's bundle, and its counts beside it
    again = extract_system([f"{repo.as_uri()}@v0.2.0"], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c2"))
    assert again.cache["memo"] == 1
    assert again.text.encode() == (tmp_path / "local" / "releases" / "0.2.0" / "evidence.json").read_bytes()


def test_a_file_that_kills_its_worker_is_a_diagnostic_of_that_file(ray_runtime):
    items = [("python", f"x = {i}\n".encode()) for i in range(9)]
    items.insert(4, ("python", b"# CRASH_HERE\n"))
    results = [decode_result(r) for r in scan_remote(items, (CRASHY,))]
    assert len(results) == 10
    crashed = results[4]
    assert crashed.facts == {} and crashed.transient is True
    assert [d[1] for d in crashed.diagnostics] == ["parser-crashed"]
    assert all(msgspec.msgpack.decode(r.facts["crashy"])["size"] == len(item[1])
               for r, item in zip(results, items) if r is not crashed)


def test_asking_for_ray_with_a_bad_address_is_one_line():
    from extractor.errors import UserInputError

    with pytest.raises(UserInputError, match="give local, ray, or ray://HOST:PORT"):
        open_executor("spark://x")
