"""Same input, byte-identical evidence in every process. Python salts the hashes of strings per
process (``PYTHONHASHSEED``), so code that takes an arbitrary element of a set of names, or
orders anything by a set's iteration, gives one result in one run and another in the next; the
in-process determinism tests (tests/test_determinism.py) cannot see it, since all their runs share
one seed. Each fixture is extracted here, struct probes included, in two processes with two seeds.
Seeds 1 and 2 are two under which the set of the return types of fixtures/cpp_overload_results's
overloads iterated in different orders before the choice among them was made deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from tests.conftest import FIXTURES, ROOT, cache_root, extract_real

_DIGESTS = """
import hashlib, sys, tempfile
from pathlib import Path
from extractor.context import ExtractOptions
from extractor.evidence.write import dumps_bundle
from extractor.run.pipeline import extract_system
with tempfile.TemporaryDirectory() as tmp:
    for d in sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_dir()):
        options = ExtractOptions(jobs=1, cache_dir=Path(tmp) / d.name)
        bundle = dumps_bundle(extract_system([str(d)], options=options).bundle)
        print(d.name, hashlib.sha256(bundle.encode()).hexdigest())
"""


def _run(seed: int, script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _digests(seed: int) -> list[str]:
    return _run(seed, _DIGESTS, str(FIXTURES)).splitlines()


def test_every_fixture_gives_the_same_bytes_under_two_hash_seeds():
    one, two = _digests(1), _digests(2)
    assert len(one) == sum(1 for p in FIXTURES.iterdir() if p.is_dir()) >= 30
    assert [line for line in one if line not in two] == []


_VLLM = """
import sys
from pathlib import Path
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
options = ExtractOptions(jobs=2, cache_dir=Path(sys.argv[2]))
data = extract_system([sys.argv[1]], name="vllm", version="0.10.2", options=options).data
Path(sys.argv[3]).write_bytes(data)
"""


@pytest.mark.real
def test_vllm_gives_the_same_bytes_under_another_hash_seed(vllm_src: Path, tmp_path: Path):
    """vLLM 0.10.2 scanned cold and assembled in a process of its own seed, against the extraction
    the real tests share (test_determinism's ``two``: computed in this process, or served from the
    memo another process wrote). Its struct probes are that extraction's, from the probe cache."""
    two = extract_real(vllm_src, name="vllm", version="0.10.2",
                       options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff")).data
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "structs-probe").symlink_to(cache_root() / "archdiff" / "structs-probe",
                                                      target_is_directory=True)
    _run(7, _VLLM, str(vllm_src), str(tmp_path / "cache"), str(tmp_path / "vllm.json"))
    other = (tmp_path / "vllm.json").read_bytes()
    assert len(other) > 1_000_000 and other == two
