"""Unresolved layouts say what was missing and what would supply it (suppliers.yaml)."""

from __future__ import annotations

import pytest

from extractor.errors import UserInputError
from extractor.structs import layout_counts
from extractor.structs.probing import Reasons
from extractor.run.diagnosis import group_diagnostics
from extractor.structs.reasons import load_suppliers, missing_from, pinned_versions, supplier_for
from extractor.structs.records import unresolved_layout


STD_FIX = "an #include of the standard header that declares it (the header leans on its includers), or a newer -std"


@pytest.mark.parametrize(("error", "missing", "supply"), [
    ("csrc/cpu/cpu_types_x86.hpp:6:10: fatal error: torch/all.h: No such file or directory", "torch/all.h",
     "--headers-from pypi:torch==2.8.0"),
    ('csrc/moe/x.cuh(3): catastrophic error: cannot open source file "cutlass/cutlass.h"', "cutlass/cutlass.h",
     "--headers-from pypi:nvidia-cutlass"),
    ("csrc/mamba/selective_scan.h:154:18: error: ‘at’ was not declared in this scope", "at",
     "--headers-from pypi:torch==2.8.0"),
    ("core/src/x.h:3:10: fatal error: boost/interprocess/managed_shared_memory.hpp: No such file or directory",
     "boost/interprocess/managed_shared_memory.hpp", "apt: libboost-dev"),
    # a more specific rule wins: Debian's default boost is too old for this one
    ("core/src/cache_manager.h:28:10: fatal error: boost/core/span.hpp: No such file or directory",
     "boost/core/span.hpp", "apt: libboost1.81-dev (boost >= 1.78; Debian 12's libboost-dev is 1.74)"),
    ("server/src/grpc/x.h:3:10: fatal error: grpc_service.grpc.pb.h: No such file or directory",
     "grpc_service.grpc.pb.h", "grpc_cpp_plugin (apt: protobuf-compiler-grpc) and libgrpc++-dev"),
    ("core/src/model.h:3:10: fatal error: model_config.pb.h: No such file or directory", "model_config.pb.h",
     "protoc (apt: protobuf-compiler) to generate it from the tree's .proto files"),
    ("csrc/cpu/cpu_types_arm.hpp:1:10: fatal error: arm_neon.h: No such file or directory", "arm_neon.h",
     "an aarch64 cross compiler (apt: g++-aarch64-linux-gnu); the header is for ARM CPUs"),
    ('csrc/q.cuh(12): error: identifier "my_private_type" is undefined', "my_private_type", ""),
    # a name looked for in a scope: the scope is part of what is missing, never the missing name
    # a standard name the header does not declare: its includers include it first (Triton's pb_exception.h)
    ("src/pb_exception.h:39:37: error: ‘string’ in namespace ‘std’ does not name a type", "std::string", STD_FIX),
    ("x.h:5:5: error: ‘Tensor’ in namespace ‘at’ does not name a type", "at::Tensor",
     "--headers-from pypi:torch==2.8.0"),
    ("x.hpp:140:29: error: ‘tuple_cat’ is not a member of ‘std’", "std::tuple_cat", STD_FIX),
    ("x.h:9:9: error: ‘Y’ in ‘struct W<int>’ does not name a type", "W<int>::Y", ""),
    ("x.h:6:4: error: 'X' in 'class C' does not name a type", "C::X", ""),  # GCC in the C locale
    ('x.cuh(5): error: namespace "at" has no member "Tensor"', "at::Tensor", "--headers-from pypi:torch==2.8.0"),
    ('x.cuh(6): error: class "C" has no member "X"', "C::X", ""),
    ("probe compile timed out after 300 CPU s", "", ""),
])
def test_the_missing_header_or_name_and_its_supplier(error, missing, supply):
    assert missing_from(error) == missing
    assert supplier_for(missing, {"torch": "2.8.0"}) == supply
    layout = Reasons((), {}, {"torch": "2.8.0"}).explain(unresolved_layout("X", "struct", "a.h", 1, error))
    assert (layout.missing, layout.supplied_by) == (missing, supply)


def test_the_pinned_version_comes_from_the_projects_build_requirements(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["cmake>=3.26", "torch == 2.8.0", "wheel"]\n')
    assert pinned_versions([tmp_path]) == {"torch": "2.8.0"}
    assert supplier_for("c10/util/Half.h", pinned_versions([tmp_path])) == "--headers-from pypi:torch==2.8.0"
    assert supplier_for("c10/util/Half.h", {}) == "--headers-from pypi:torch"


def test_a_distribution_already_given_is_not_the_fix_for_what_it_lacks():
    # vLLM with --headers-from pypi:torch and pypi:nvidia-cutlass: telling the user to give what was
    # given would be no fix. A header it lacks needs another version; a name of its namespace that
    # is undeclared was not included by the header (machete uses a name vLLM's own CUTLASS
    # extensions declare; selective_scan.h uses `at::` and leaves torch's includes to its includers)
    error = 'm.cuh(9): error: namespace "cutlass" has no member "InterleavedNumericArrayConverter"'
    lacks = "another version of nvidia-cutlass: the one given to --headers-from lacks it"
    leans = ("an #include of what declares it (nvidia-cutlass is given: the header leans on its includers), "
             "or another version")
    for given in (("pypi:nvidia-cutlass",), ("pypi:torch==2.8.0", "pypi:Nvidia_Cutlass==4.2.0"), ("nvidia-cutlass",)):
        layout = Reasons((), {}, {}, given).explain(unresolved_layout("M", "struct", "m.cuh", 9, error))
        assert (layout.missing, layout.supplied_by) == ("cutlass::InterleavedNumericArrayConverter", leans)
        assert supplier_for("cute/tensor.hpp", {}, given) == lacks
    assert supplier_for("at", {}, ("pypi:torch==2.8.0",)).startswith("an #include of what declares it (torch is given")
    # another distribution given changes nothing; and what the given one does not supply is still told
    assert supplier_for("cute/tensor.hpp", {}, ("pypi:torch==2.8.0",)) == "--headers-from pypi:nvidia-cutlass"
    assert supplier_for("c10/util/Half.h", {}, ("pypi:nvidia-cutlass",)) == "--headers-from pypi:torch"
    groups = group_diagnostics([{"severity": "warning", "code": "probe-failed", "path": "m.cuh", "line": 9,
                                 "message": "m.cuh:1:10: fatal error: cute/tensor.hpp: No such file or directory"}],
                               {}, ("pypi:nvidia-cutlass",))
    assert [g.fix for g in groups] == [lacks]


def test_counts_per_family_and_missing_header():
    a = Reasons((), {}, {}).explain(unresolved_layout("ShmRegion", "struct", "a.h", 1, "x.h:1:1: fatal error: boost/a.hpp: "
                                                      "No such file or directory", tags=("shared-memory",)))
    b = unresolved_layout("Plain", "struct", "a.h", 2, "not probed: over the budget of 64 headers per system")
    counts = layout_counts([a, b])
    assert counts["families"] == {"shared-memory": {"resolved": 0, "unresolved": 1},
                                  "untagged": {"resolved": 0, "unresolved": 1}}
    assert counts["unresolved_missing"] == {"boost/a.hpp": 1}
    assert counts["unresolved_supplied_by"] == {"apt: libboost-dev": 1}


def test_a_malformed_suppliers_file_is_one_line(tmp_path):
    bad = tmp_path / "suppliers.yaml"
    bad.write_text("suppliers:\n  - supply: x\n    headers: boost/\n")
    with pytest.raises(UserInputError, match=r"suppliers\[0\]\.headers: expected a list"):
        load_suppliers(bad)
