"""Names a star import passes on from a module of the system that bound them by import
(fixtures/star_reach: ``torch`` reached only through ``from .common import *``, as DeepSpeed's
``deepspeed/comm/torch.py`` reaches it). Until then such a name resolved to nothing, so a
``torch.ops.<ns>.<op>`` call through it was no operator call at all: no binds edge, not counted."""

from __future__ import annotations

import pytest

from extractor.context import ExtractOptions
from tests.conftest import FIXTURES, extract_real


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("cache"), probe_structs=False)
    return extract_real(FIXTURES / "star_reach", options=options).bundle


def test_operator_calls_through_a_star_imported_torch_bind(bundle):
    binds = {(e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("py:starpkg.backend.scale", "cpp:scale_rows", "starpkg/backend.py", 5),
        # two star imports deep: chained <- backend <- common
        ("py:starpkg.chained.Runner.step", "cpp:scale_rows", "starpkg/chained.py", 6),
        # not bound, as Python would not bind them: ``_torch_private`` (a private name), ``torch``
        # left out of ``listed.__all__``, names a star import of numpy may or may not bring
    }


def test_only_the_calls_that_reach_torch_count_as_operator_calls(bundle):
    stats = bundle["stats"]["bindings"]
    assert (stats["torch_op_calls"], stats["torch_op_calls_bound"], stats["torch_ops_registered"]) == (2, 2, 1)
