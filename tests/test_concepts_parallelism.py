"""Pipeline parallelism as Megatron-LM writes it (and the frameworks built on it): the stage accessors
of its parallel state (`get_pipeline_model_parallel_world_size`, `_rank`, `_group`) and its schedules
(`forward_backward_pipelining_with_interleaving`), found as the tensor-parallel accessors beside them
are. The mini-repo is written here."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

FILES = {
    "core/__init__.py": "",
    "core/parallel_state.py": """def get_tensor_model_parallel_world_size():
    return 1


def get_pipeline_model_parallel_world_size():
    return 1


def get_pipeline_model_parallel_rank():
    return 0


def get_data_parallel_rank():
    return 0
""",
    "core/schedules.py": """def forward_backward_pipelining_with_interleaving(model):
    return model


def forward_backward_no_pipelining(model):
    return model
""",
}


def test_megatrons_pipeline_stage_accessors_and_schedules_are_pipeline_parallelism(tmp_path):
    for rel, code in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    found = {c["id"]: sorted((e["path"], e["line"], e["matched"]) for e in c["evidence"]) for c in bundle["concepts"]}
    assert found["pipeline-parallel"] == [
        ("core/parallel_state.py", 5, "core.parallel_state.get_pipeline_model_parallel_world_size"),
        ("core/parallel_state.py", 9, "core.parallel_state.get_pipeline_model_parallel_rank"),
        ("core/schedules.py", 1, "core.schedules.forward_backward_pipelining_with_interleaving")]
    assert found["tensor-parallel"] == [
        ("core/parallel_state.py", 1, "core.parallel_state.get_tensor_model_parallel_world_size")]
