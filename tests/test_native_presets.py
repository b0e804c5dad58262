"""The field's presets name versions that were current together, and the comparator handles a
pair of systems in languages it has no other pairing for (Rust + Python against Go + C++)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extractor.presets import load_preset

from tests.conftest import FIXTURES, ROOT


@pytest.mark.parametrize(("name", "first", "second"), [
    ("tgi-vs-vllm", ("https://github.com/huggingface/text-generation-inference@v3.3.5",), ("pypi:vllm==0.10.2",)),
    ("sglang-vs-vllm", ("pypi:sglang==0.5.2", "pypi:sglang-router==0.1.9"), ("pypi:vllm==0.10.2",)),
    ("ollama-vs-llama.cpp", ("https://github.com/ollama/ollama@v0.11.10",),
     ("https://github.com/ggml-org/llama.cpp@e54d41befcc1575f4c898c5ff4ef43970cead75f",)),
    ("kserve-vs-triton", ("https://github.com/kserve/kserve@v0.15.2",), None),
])
def test_field_presets_pair_contemporary_releases(name, first, second):
    a, b = load_preset(name).systems
    assert a.sources == first
    if second is not None:
        assert b.sources == second
    else:  # Triton as in vllm-vs-triton: five labelled repositories at r25.08
        assert b.labels == ("server", "core", "common", "backend", "python_backend")


def test_compare_aligns_layers_across_rust_python_and_go_cpp(tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "compare", str(FIXTURES / "pyo3_ext"),
                           str(FIXTURES / "cgo_mini"), "-o", str(out), "--format", "json",
                           "--cache-dir", str(tmp_path / "cache")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    rows = {row["role"]: row for row in report["layers"]["rows"]}
    # src/metrics_defs.rs (prometheus crate) and server/metrics.go (client_golang) are both telemetry
    assert rows["telemetry"]["a"] and rows["telemetry"]["b"]
    languages = report["graph"]["a"]["nodes_by_language"], report["graph"]["b"]["nodes_by_language"]
    assert {"rust", "python", "cpp"} <= set(languages[0]) and {"go", "cpp"} <= set(languages[1])
