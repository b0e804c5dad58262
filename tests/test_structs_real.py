"""Real input, probed and compared with pahole: vLLM 0.10.2's headers (alone, and with torch and
CUTLASS from their wheels) and a C project (ggml, as vendored in llama-cpp-python)."""

from __future__ import annotations

import subprocess
import time

import pytest

from extractor.model import Language
from extractor.structs.probe import HeaderProbe, find_include_dirs, find_nvcc, probe_header
from extractor.structs.records import Method
from extractor.structs.source import find_struct_definitions
from pathlib import Path

from structs_refs import run_gdb_ptype, run_pahole

pytestmark = pytest.mark.compilers  # nvcc and pahole


@pytest.mark.real
def test_vllm_custom_all_reduce_structs_resolve_through_nvcc(vllm_src, tmp_path):
    assert find_nvcc(), "nvcc is required (CUDA toolkit)"
    header = vllm_src / "csrc" / "custom_all_reduce.cuh"
    probe = HeaderProbe("csrc/custom_all_reduce.cuh", header, Language.CUDA,
                        find_struct_definitions(header.read_bytes(), Language.CUDA))
    obj = tmp_path / "probe.o"
    started = time.monotonic()
    result = probe_header(probe, find_include_dirs([vllm_src]), [vllm_src], keep_object=obj)
    assert time.monotonic() - started < 120
    ours = {x.qualname: x for x in result.layouts}
    ref = run_pahole(obj, "Signal", "RankData", "RankSignals")
    for name in ("Signal", "RankData", "RankSignals"):
        mine, theirs = ours[f"vllm::{name}"], ref[name]
        assert mine.method is Method.PROBE_NVCC and mine.path == "csrc/custom_all_reduce.cuh"
        assert mine.size == theirs.size
        assert [(m.name, m.offset, m.size) for m in mine.members] == \
            [(n, o, s) for n, o, s, _b in theirs.members]
        assert mine.padding == theirs.padding
    signal = ours["vllm::Signal"]
    assert (signal.size, signal.align, signal.padding) == (2560, 128, 112)
    assert [m.offset for m in signal.members] == [0, 1152, 2304]
    assert ours["vllm::RankData"].align == ours["vllm::RankSignals"].align == 16
    assert "shared-memory" in signal.tags  # declared in custom_all_reduce.cuh


# -- a C project: ggml, as vendored in the llama-cpp-python sdist --------------------------------------

LLAMA_CPP_PYTHON = "0.3.16"
_GGML = "vendor/llama.cpp/ggml/"


def _ggml_member(name: str) -> bool:
    """ggml's public headers, its core sources and headers, and its CPU backend (not the GPU ones)."""
    rel = name.split("/", 1)[1] if "/" in name else ""
    if not rel.startswith(_GGML):
        return False
    rel = rel[len(_GGML):]
    return rel == "CMakeLists.txt" or rel.startswith(("include/", "src/ggml-cpu/")) or \
        (rel.startswith("src/") and rel.count("/") == 1)


@pytest.fixture(scope="session")
def ggml_tree() -> Path:
    import tarfile

    import shutil

    from tests.conftest import cache_lock
    from extractor.acquire.sources import download_sdist

    with cache_lock(f"ggml-{LLAMA_CPP_PYTHON}") as cache:
        target = cache / f"ggml-{LLAMA_CPP_PYTHON}"
        if not (target / "src" / "ggml-impl.h").is_file():
            archive = download_sdist("llama-cpp-python", LLAMA_CPP_PYTHON, cache / "sdists")
            staging = cache / f".ggml-{LLAMA_CPP_PYTHON}"
            shutil.rmtree(staging, ignore_errors=True)  # what a killed run left
            with tarfile.open(archive) as tar:
                tar.extractall(staging, members=[m for m in tar.getmembers() if _ggml_member(m.name)], filter="data")
            (next(staging.glob("*")) / _GGML.rstrip("/")).rename(target)
            shutil.rmtree(staging)
    return target


@pytest.mark.real
def test_a_c_project_every_header_struct_has_a_record_and_ggml_impl_is_laid_out_as_c(ggml_tree, tmp_path):
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system
    from bench.structs_vs_graph import coverage

    bundle = extract_system([str(ggml_tree)], options=ExtractOptions(jobs=2, cache_dir=tmp_path)).bundle
    result = coverage(bundle)
    assert result["definitions"] >= 60 and result["without_record"] == [] and result["unresolved_without_reason"] == []
    assert result["ratio"] >= 0.85  # measured: 73 of 80
    ours = {(s["path"], s["qualname"]): s for s in bundle["structs"]}
    # the example: graph nodes that had no layout record at all
    cgraph, hashes = ours[("src/ggml-impl.h", "ggml_cgraph")], ours[("src/ggml-impl.h", "ggml_hash_set")]
    assert cgraph["language"] == hashes["language"] == "c"
    # and pahole on our own C compile of the same header agrees
    unit = tmp_path / "impl.c"
    unit.write_text('#include "ggml-impl.h"\n')
    obj = tmp_path / "impl.o"
    subprocess.run(["gcc", "-g", "-c", "-fno-eliminate-unused-debug-types", "-I", str(ggml_tree / "include"),
                    "-I", str(ggml_tree / "src"), str(unit), "-o", str(obj)], check=True)
    ref = run_pahole(obj, "ggml_cgraph", "ggml_hash_set")
    for mine, name in ((cgraph, "ggml_cgraph"), (hashes, "ggml_hash_set")):
        assert mine["size"] == ref[name].size
        assert [(m["name"], m["offset"], m["size"]) for m in mine["members"]] == \
            [(n, o, s) for n, o, s, _b in ref[name].members]
    # ggml-common.h declares its blocks only for an includer that selects them first
    block = ours[("src/ggml-common.h", "block_q4_0")]
    assert block["method"] == "probe-g++" and block["origin"].startswith("src/ggml-common.h as included by")


# -- vLLM with the headers its build compiles against: torch and CUTLASS, from their wheels ----------

@pytest.mark.real
def test_vllm_headers_with_torch_and_cutlass_from_their_wheels_equal_pahole(vllm_src, tmp_path):
    from extractor.structs.buildcontext import CUDA, CXX, ProbeFlags
    from extractor.acquire.headers import resolve_headers_from
    from tests.conftest import cache_root

    # downloaded once into the test cache (torch's wheel is 850 MB; only its include/ is kept)
    torch = resolve_headers_from("pypi:torch==2.8.0", cache_root())
    cutlass = resolve_headers_from("pypi:nvidia-cutlass==4.2.0.0", cache_root())
    assert [d.name for d in torch.include_dirs] == ["include", "include"] and len(cutlass.include_dirs) == 4
    dirs = find_include_dirs([vllm_src])
    cases = (("csrc/custom_all_reduce.cuh", Language.CUDA, CUDA, ("vllm::Signal", "vllm::RankData")),
             ("csrc/core/scalar_type.hpp", Language.CPP, CXX, ("vllm::ScalarType",)),
             ("csrc/cutlass_extensions/vllm_collective_builder.cuh", Language.CUDA, CUDA,
              ("cutlass::gemm::collective::CutlassKernelTag",)))
    sizes = {}
    for rel, language, probe_as, names in cases:
        header = vllm_src / rel
        flags = ProbeFlags((*torch.include_dirs, *cutlass.include_dirs), language=probe_as)
        probe = HeaderProbe(rel, header, language, find_struct_definitions(header.read_bytes(), language), flags)
        obj = tmp_path / (header.stem + ".o")
        result = probe_header(probe, dirs, [vllm_src], keep_object=obj, root_labels=[(vllm_src, "")])
        ours = {x.qualname: x for x in result.layouts}
        ref = run_pahole(obj, *(n.rsplit("::", 1)[-1] for n in names))
        # pahole 1.24 takes unqualified names and may print only torch's c10 `enum ScalarType` for
        # -C ScalarType; gdb's ptype /o, the other reference, takes the qualified name
        ref.update({n.rsplit("::", 1)[-1]: r for n, r in run_gdb_ptype(obj, *(
            n for n in names if n.rsplit("::", 1)[-1] not in ref)).items()})
        for name in names:
            mine, theirs = ours[name], ref[name.rsplit("::", 1)[-1]]
            assert mine.method is not Method.UNRESOLVED, mine.error
            assert mine.size == theirs.size, name
            assert [(m.name, m.offset, m.size) for m in mine.members] == \
                [(n, o, s) for n, o, s, _b in theirs.members], name
            sizes[name] = mine.size
    assert sizes == {"vllm::Signal": 2560, "vllm::RankData": 64, "vllm::ScalarType": 12,
                     "cutlass::gemm::collective::CutlassKernelTag": 1}
