"""archdiff's release API diff against griffe on real releases, with every disagreement reviewed.

griffe's rows are kept in the test cache per griffe version and pair of sdists (the trees never
change); archdiff's extraction goes through its own cache. The review files under
tests/api_review list each griffe breakage archdiff does not report breaking and each breaking row
archdiff reports that griffe lacks, with the reason; this test fails when they fall out of date
(rewrite them with ``scripts/api_vs_griffe.py ... --review FILE --write-review``, then check the
reasons it could not give).
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from scripts.api_vs_griffe import cached_griffe_breakages, compare, load_review, review_differences
from tests.conftest import ROOT, cache_root

REVIEWS = ROOT / "tests" / "api_review"
PAIRS = [("vllm", "0.10.1", "0.10.2"), ("datasets", "2.21.0", "3.0.0"), ("accelerate", "0.34.2", "1.0.0")]


def sdist_root(name: str, version: str) -> Path:
    from extractor.sources import download_sdist  # the same code users run

    cache = cache_root()
    target = cache / f"{name}-{version}"
    if not (target / "PKG-INFO").exists():
        archive = download_sdist(name, version, cache / "sdists")
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return target


@pytest.mark.real
@pytest.mark.parametrize("package, old, new", PAIRS, ids=[p[0] for p in PAIRS])
def test_agreement_with_griffe_and_the_review_file(package, old, new):
    old_tree, new_tree = sdist_root(package, old), sdist_root(package, new)
    cache = cache_root()
    rows = cached_griffe_breakages(old_tree, new_tree, package, cache / "griffe")
    c = compare(old_tree, new_tree, package, cache / "api-extractions", python_only=True, griffe_rows=rows)
    assert len(c.griffe) >= 10  # a pair with real API churn, or the measure says little
    assert c.recall >= 0.98, f"{len(c.agreed)}/{len(c.griffe)}"
    review = load_review(REVIEWS / f"{package}-{old}-{new}.json")
    assert review_differences(c, review) == []
