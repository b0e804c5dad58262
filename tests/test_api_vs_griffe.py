"""archdiff's release API diff against griffe on real releases, with every disagreement reviewed.

griffe's rows are kept in the test cache per griffe version and pair of sdists (the trees never
change); archdiff's extraction goes through its own cache. The review files under
tests/api_review list each griffe breakage archdiff does not report breaking and each breaking row
archdiff reports that griffe lacks, with the reason; this test fails when they fall out of date
(rewrite them with ``bench/api_vs_griffe.py ... --review FILE --write-review``, then check the
reasons it could not give).
"""

from __future__ import annotations

import json

import pytest

from bench.api_vs_griffe import load_review, review_differences
from bench.readme_vs_runs import FIGURES, griffe_figures
from tests.apidiff_support import api_comparison
from tests.conftest import ROOT

REVIEWS = ROOT / "tests" / "api_review"
PAIRS = [("vllm", "0.10.1", "0.10.2"), ("datasets", "2.21.0", "3.0.0"), ("accelerate", "0.34.2", "1.0.0")]


@pytest.mark.real
@pytest.mark.parametrize("package, old, new", PAIRS, ids=[p[0] for p in PAIRS])
def test_agreement_with_griffe_and_the_review_file(package, old, new):
    c = api_comparison(package, old, new)
    assert len(c.griffe) >= 10  # a pair with real API churn, or the measure says little
    assert c.recall >= 0.98, f"{len(c.agreed)}/{len(c.griffe)}"
    review = load_review(REVIEWS / f"{package}-{old}-{new}.json")
    assert review_differences(c, review) == []
    # the README's figures of this agreement (docs/figures.json; `bench.readme_vs_runs --only griffe --write`)
    assert griffe_figures(c) == json.loads(FIGURES.read_text(encoding="utf-8"))["griffe"][package]
