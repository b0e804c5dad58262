"""Layers of a kernel-heavy C++/CUDA engine (the handwritten mini_engine: the shapes LMDeploy's
TurboMind showed, issue 25) and of the real vLLM 0.10.2 csrc/ tree: a kernel tree keeps the
kernels role against one word of another role, a role resting on one word says so, and package
context stays within a language family and speaks only for a directory it is a good share of."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from handmade_context import build_real_context

from extractor.concepts import extract_concepts
from extractor.layers import TAXONOMY_FILE, UNASSIGNED, Confidence, ModuleRole, RoleEvidence, extract_layers, load_taxonomy
from extractor.layers.package import settle_by_package
from extractor.layers.records import one_word

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mini_engine"
KERNELS = "src/tm/kernels/gemm/"


@pytest.fixture(scope="module")
def modules() -> dict[str, ModuleRole]:
    ctx = build_real_context(str(FIXTURE))
    ctx.results["concepts"] = extract_concepts(ctx)
    return {m.path: m for layer in extract_layers(ctx).records for m in layer.modules}


@pytest.mark.parametrize("path, weak, was", [
    # the GEMM tuner's statistics class repeats its file's name: one word, not telemetry
    (KERNELS + "tuner/stats.h", "telemetry (3) rests on one word (path stats, symbol Stats)", "path gemm"),
    (KERNELS + "gpu_metric.h", "telemetry (2) rests on one path word (gpu_metric)", "path gemm"),
    (KERNELS + "scheduler_sm70.cuh", "scheduling (4) rests on one word (path scheduler_sm70, symbol SchedulerSm70)",
     "language cuda"),
])
def test_a_kernel_tree_keeps_kernels_against_one_word_of_another_role(modules, path, weak, was):
    module = modules[path]
    assert module.role == "kernels"
    assert module.why.startswith(f"{weak} and gives way to kernels, which strong evidence backs (")
    assert was in module.why


@pytest.mark.parametrize("word, kernels", [
    ("gemm", True), ("gemm_sm90", True), ("moe_gemm_kernels", True), ("grouped_gemm", True),
    ("gemma4_tool_parser", False), ("gemma", False), ("paligemma", False),  # the model family, not GEMM
])
def test_gemm_is_a_kernel_path_word_and_gemma_is_not(word, kernels):
    role = load_taxonomy().role("kernels")
    assert role is not None
    paths = [s for s in role.signals if s.kind == "path"]
    assert any(s.pattern.fullmatch(word) for s in paths) is kernels
    assert any(s.is_strong(word) for s in paths) is kernels


def test_an_architecture_tag_is_a_kernel_path_word(modules):
    config = modules[KERNELS + "arch/config_sm80_s16816.h"]
    # configuration's "config_" and kernels' "sm80" tag are the same path word, near the file
    assert (config.role, config.score) == ("kernels", 2.0)
    assert [(r.signal, r.matched) for r in config.evidence] == [("path", "config_sm80_s16816")]
    assert config.why == "kernels (2) rests on one path word (config_sm80_s16816)"


def test_a_template_kernel_in_a_header_defines_a_kernel(modules):
    # "template <...> __global__ void" in a .h parsed as C++: the graph step's kernel node says so
    fused = modules["src/tm/kernels/linear_attn/sm_120/fused_fwd.h"]
    assert fused.role == "kernels" and fused.why == ""
    assert ("defines", "kernel", 10) in {(r.signal, r.matched, r.line) for r in fused.evidence}


def test_a_role_on_one_symbol_stands_without_a_strong_rival_and_says_so(modules):
    messages = modules["enginepy/messages.py"]
    assert messages.role == "scheduling"
    assert messages.why == "scheduling (2) rests on one symbol (ScheduleMetrics, line 21)"


def test_a_test_of_a_kernel_stays_a_test(modules):
    # its evidence is its path: roles set apart never give way
    test = modules["tests/test_gemm.cu"]
    assert (test.role, test.why) == ("tests", "")


def test_model_weight_files_are_models_not_the_processors_beside_them(modules):
    for name in ("ffn_weight", "attention_weight", "decoder_layer_weight", "layer_norm_weight"):
        module = modules[f"src/tm/models/{name}.cc"]
        assert (module.role, module.confidence) == ("models", Confidence.CORROBORATED), name
    # ModelWeight names no layer: its package, where the weight files hold most lines, places it
    whole = modules["src/tm/models/model_weight.cc"]
    assert (whole.role, whole.confidence) == ("models", Confidence.PACKAGE)
    assert "takes models from its package src/tm/models/" in whole.why


def test_package_context_does_not_cross_languages(modules):
    # the Python processors beside it place the package's Python files, not a C++ source
    assert modules["enginepy/vl/base.py"].role == "tokenization"
    resize = modules["enginepy/vl/fast_resize.cc"]
    assert (resize.role, resize.why) == (UNASSIGNED, "no signal of any role fired")


def _module(path: str, role: str, lines: int, confidence: Confidence, *rows: tuple[str, str]) -> ModuleRole:
    evidence = tuple(RoleEvidence(path, 0, role, signal, matched, 2.0) for signal, matched in rows)
    return ModuleRole(path, 0, f"file:{path}", role, 2.0 * len(rows), lines, "", 0.0, evidence, confidence)


@pytest.mark.parametrize("directory_share, role", [(0.25, UNASSIGNED), (0.0, "tokenization")])
def test_a_few_modules_do_not_speak_for_a_directory_of_many(directory_share, role):
    processors = [_module(f"m/{side}_processor.{ext}", "tokenization", 60, Confidence.CORROBORATED,
                          ("path", f"{side}_processor"), ("symbol", "Processor"))
                  for side in ("input", "output") for ext in ("cc", "h")]
    weights = [_module(f"m/w{i}_weight.cc", UNASSIGNED, 100, Confidence.NONE) for i in range(10)]
    taxonomy = load_taxonomy(TAXONOMY_FILE)
    assert taxonomy.package is not None and taxonomy.package.min_directory_share == 0.25
    rule = dataclasses.replace(taxonomy.package, min_directory_share=directory_share)
    settled = settle_by_package(processors + weights, dataclasses.replace(taxonomy, package=rule))
    # 240 of 1,240 lines: all the corroborated lines, under a quarter of the directory's
    assert {m.role for m in settled if m.path.startswith("m/w")} == {role}


@pytest.mark.real
def test_no_kernel_file_of_a_real_engine_holds_telemetry_configuration_or_scheduling_on_one_word(vllm_src):
    """vLLM 0.10.2's csrc/ is its C++/CUDA engine (the PyPI engine CI reaches; LMDeploy's TurboMind
    is measured by bench.layers_vs_labels from a mirror)."""
    from extractor.context import ExtractOptions
    from tests.conftest import cache_root, extract_real

    bundle = extract_real(vllm_src, name="vllm", version="0.10.2",
                          options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff")).bundle
    csrc = {m["path"]: (layer["role"], m) for layer in bundle["layers"] for m in layer["modules"]
            if m["path"].startswith("csrc/") and layer["role"] not in ("tests", "generated", "vendored", "build")}
    assert len(csrc) > 200  # 216 C/C++/CUDA and generator files outside tests in 0.10.2
    weak = {path: (role, module["why"]) for path, (role, module) in csrc.items()
            if role in ("telemetry", "configuration", "scheduling")
            and one_word(RoleEvidence(**row) for row in module["evidence"])}
    assert weak == {}
    # machete's kernel generator defines one ScheduleConfig class: it was scheduling on that symbol
    generator, module = csrc["csrc/quantization/machete/generate.py"]
    assert generator == "kernels"
    assert module["why"].startswith("scheduling (2) rests on one symbol (ScheduleConfig, line ")
    # no role rests on one word in csrc/ without saying so
    assert [p for p, (_r, m) in csrc.items() if one_word(RoleEvidence(**row) for row in m["evidence"])
            and not m["why"]] == []
