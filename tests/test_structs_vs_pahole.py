"""bench/structs_vs_pahole.py on the struct fixtures: every layout the probes resolve, read back by
pahole and gdb ptype /o from the very objects the probes compiled, agrees with them; what a
reference cannot print is listed with its reason, never counted as agreement."""

from __future__ import annotations

import pytest

from extractor.buildsettings import BuildSettings
from bench.structs_vs_pahole import compare, extract_with_objects, short
from tests.conftest import FIXTURES


@pytest.mark.compilers
def test_every_fixture_layout_equals_pahole_and_gdb_on_the_probe_objects(tmp_path):
    bundle = extract_with_objects([str(FIXTURES / "structs")], BuildSettings(), tmp_path / "objects", 2,
                                  tmp_path / "cache")
    result = compare(bundle, tmp_path / "objects")
    tally = result["tally"]
    assert result["disagreements"] == [] and "no object" not in tally
    assert tally["pahole: equal"] >= 25 and tally["gdb: equal"] >= 12  # C structs, bit-fields, CUDA, C++ bases
    assert tally["layouts: equal to every reference that printed them"] == result["resolved"] >= 30
    # pahole 1.24 prints nothing for classes with base classes: said per layout, not hidden
    assert ("pahole", "engine::Derived (src/engine.hpp:13)", "pahole -C Derived printed nothing") in result["uncompared"]


@pytest.mark.parametrize("qualname, expected", [
    ("vllm::Signal", "Signal"), ("Plain", "Plain"),
    ("ns::AllocPayload<inference::ModelInferResponse>", "AllocPayload<inference::ModelInferResponse>"),
    ("std::remove_reference<a::B<c::D>::f()::<lambda()> >::type", "type"),
])
def test_pahole_is_asked_for_the_name_after_the_last_scope(qualname, expected):
    assert short(qualname) == expected
