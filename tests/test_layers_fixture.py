"""Layering of the handwritten mini_vllm package: roles, evidence, summaries, matrix, taxonomy file."""

from __future__ import annotations

from pathlib import Path

import pytest
from handmade_context import build_context

from extractor.concepts import extract_concepts
from extractor.errors import UserInputError
from extractor.layers import TAXONOMY_FILE, UNASSIGNED, Confidence, extract_layers, load_taxonomy
from extractor.model import Contribution, Edge, EdgeKind, Node, NodeKind

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mini_vllm"

EXPECTED_ROLES = {
    "mini_vllm/entrypoints/api_server.py": "ingress",
    "mini_vllm/engine/llm_engine.py": "engine",
    "mini_vllm/core/scheduler.py": "scheduling",
    "mini_vllm/core/block_pool.py": "memory",
    "mini_vllm/distributed/parallel_state.py": "parallelism",
    "mini_vllm/metrics/loggers.py": "telemetry",
    "csrc/attention/paged_attention.cu": "kernels",
    "csrc/shm_transport.cpp": "memory",
    "tests/check_scheduler.py": "tests",
    "mini_vllm/version.py": UNASSIGNED,
}


def layer(ctx=None, **options):
    ctx = ctx or build_context({"": FIXTURE}, options=options)
    ctx.results["concepts"] = extract_concepts(ctx)
    return ctx, extract_layers(ctx)


def roles(result) -> dict[str, str]:
    return {m.path: m.role for l in result.records for m in l.modules}


@pytest.mark.parametrize("with_graph", [True, False])
def test_each_module_gets_its_role_with_or_without_the_graph(with_graph):
    _ctx, result = layer(build_context({"": FIXTURE}, with_graph=with_graph))
    got = roles(result)
    assert {p: got[p] for p in EXPECTED_ROLES} == EXPECTED_ROLES


def test_the_deciding_evidence_is_kept():
    _ctx, result = layer()
    by_path = {m.path: m for l in result.records for m in l.modules}
    ingress = by_path["mini_vllm/entrypoints/api_server.py"]
    assert ("import", "fastapi", 4) in {(e.signal, e.matched, e.line) for e in ingress.evidence}
    scheduler = by_path["mini_vllm/core/scheduler.py"]
    # a signal counts once: its row shows the first fact that fired it, with the line to open
    assert ("concept", "continuous-batching", 26) in {(e.signal, e.matched, e.line) for e in scheduler.evidence}
    assert ("symbol", "SchedulerConfig", 7) in {(e.signal, e.matched, e.line) for e in scheduler.evidence}
    assert scheduler.score == sum(e.weight for e in scheduler.evidence)
    assert scheduler.runner_up_score < scheduler.score


def test_share_of_lines_leaves_tests_out():
    ctx, result = layer()
    counted = [f for f in ctx.files if not f.rel.startswith("tests/")]
    assert result.stats["lines_counted"] == sum(f.lines for f in counted)
    unassigned = next(f.lines for f in ctx.files if f.rel == "mini_vllm/version.py")
    assert result.stats["lines_assigned"] == result.stats["lines_counted"] - unassigned
    assert result.stats["modules_apart"] == 1


def matrix(result) -> dict[str, dict[str, int]]:
    return {l.role: {d.role: d.count for d in l.depends_on} for l in result.records if l.depends_on}


def test_matrix_and_upward_edges():
    _ctx, result = layer()
    assert matrix(result)["scheduling"]["memory"] == 1  # scheduler.py: from ...block_pool import BlockPool
    assert matrix(result)["ingress"]["engine"] == 1
    memory = next(l for l in result.records if l.role == "memory")
    # each dependency keeps its first edge, so a reader can open it
    assert [(d.role, d.path, d.line, d.kind) for d in memory.depends_on if d.role == "scheduling"] == \
        [("scheduling", "mini_vllm/core/block_pool.py", 4, "imports")]
    # block_pool.py imports SchedulerConfig: memory sits below scheduling in the stack
    assert [tuple(u) for u in result.shared.upward] == [("memory", "scheduling", 1, ("mini_vllm/core/block_pool.py:4",))]
    # tests (apart) and unassigned modules neither depend nor are depended on
    assert not any(l.depends_on for l in result.records if l.apart or l.role == UNASSIGNED)
    assert not any(d.role in ("tests", UNASSIGNED) for l in result.records for d in l.depends_on)


def test_summary_names_key_symbols_ranked_by_the_graph():
    ctx = build_context({"": FIXTURE})
    # What the python step will add: symbols and call edges. BlockPool is called from two places.
    mod = "py:mini_vllm.core.block_pool"
    nodes = (Node(f"{mod}.BlockPool", NodeKind.CLASS, "BlockPool", "mini_vllm.core.block_pool.BlockPool",
                  "python", "mini_vllm/core/block_pool.py", 13),
             Node(f"{mod}.KVCacheBlock", NodeKind.CLASS, "KVCacheBlock", "mini_vllm.core.block_pool.KVCacheBlock",
                  "python", "mini_vllm/core/block_pool.py", 7))
    edges = (Edge("py:mini_vllm.core.scheduler", f"{mod}.BlockPool", EdgeKind.CALLS, "mini_vllm/core/scheduler.py", 14),
             Edge("py:mini_vllm.engine.llm_engine", f"{mod}.BlockPool", EdgeKind.CALLS, "mini_vllm/engine/llm_engine.py", 9),
             Edge(f"{mod}.BlockPool", f"{mod}.KVCacheBlock", EdgeKind.CALLS, "mini_vllm/core/block_pool.py", 15))
    base = ctx.results["python"]
    ctx.results["python"] = Contribution(nodes=base.nodes + nodes, edges=base.edges + edges)
    _ctx, result = layer(ctx)
    memory = next(l for l in result.records if l.role == "memory")
    assert [s.name for s in memory.key_symbols[:2]] == ["BlockPool", "KVCacheBlock"]
    assert memory.key_symbols[0].in_degree == 2
    assert "key symbols BlockPool, KVCacheBlock" in memory.summary
    assert "2 modules" in memory.summary and "\n" not in memory.summary


def test_a_user_taxonomy_replaces_the_shipped_one(tmp_path):
    custom = tmp_path / "roles.yaml"
    custom.write_text("""\
version: 1
threshold: 1
stack: [front, back]
roles:
  - id: front
    title: Front
    signals: [{kind: import, weight: 1, any: ['fastapi(\\..*)?']}]
  - id: back
    title: Back
    signals: [{kind: path, weight: 1, any: ['core']}]
""")
    _ctx, result = layer(taxonomy=str(custom))
    got = roles(result)
    assert got["mini_vllm/entrypoints/api_server.py"] == "front"
    assert got["mini_vllm/core/block_pool.py"] == "back"
    assert got["mini_vllm/metrics/loggers.py"] == UNASSIGNED
    assert result.stats["upward_edges"] == 0  # back -> front would be upward; there is none


@pytest.mark.parametrize("text, key", [
    ("version: 1\nthreshold: 1\nstack: [a]\nroles:\n  - id: a\n    title: A\n    signals:\n"
     "      - {kind: path, weight: high, any: [x]}\n", "roles[0].signals[0].weight"),
    ("version: 1\nthreshold: 1\nstack: [a]\nroles:\n  - id: a\n    title: A\n    signals:\n"
     "      - {kind: smell, weight: 1, any: [x]}\n", "roles[0].signals[0].kind"),
    ("version: 1\nthreshold: 1\nstack: [b]\nroles:\n  - id: a\n    title: A\n    signals: []\n", "stack[0]"),
    ("version: 1\nstack: []\nroles: []\n", "threshold"),
    ("version: 1\nthreshold: 1\nstack: []\nroles:\n  - id: a\n    title: A\n    signals:\n"
     "      - {kind: path, weight: 1, any: ['[a-']}\n", "roles[0].signals[0].any[0]"),
    ("version: 1\nthreshold: 1\nstack: []\nroles:\n  - id: a\n    title: A\n    corroborated_by: [smell]\n"
     "    signals: []\n", "roles[0].corroborated_by[0]"),
    ("version: 1\nthreshold: 1\nstack: []\nroles:\n  - id: a\n    title: A\n    signals: []\n"
     "    ruled_out_by: [{kind: import, weight: 1, any: [x]}]\n", "roles[0].ruled_out_by[0].weight"),
    ("version: 1\nthreshold: 1\nstack: []\npackage: {min_modules: two, min_share: 0.5}\nroles: []\n",
     "package.min_modules"),
])
def test_a_malformed_taxonomy_is_one_line_naming_file_and_key(tmp_path, text, key):
    path = tmp_path / "my-roles.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        load_taxonomy(path)
    message = str(err.value)
    assert "\n" not in message and "my-roles.yaml" in message and key in message
    with pytest.raises(UserInputError):
        layer(taxonomy=str(path))


def test_shipped_taxonomy_has_the_roles_the_report_aligns_on():
    taxonomy = load_taxonomy(TAXONOMY_FILE)
    ids = [r.id for r in taxonomy.roles]
    for role in ("ingress", "scheduling", "engine", "model-loading", "kernels", "execution", "orchestration",
                 "memory", "parallelism", "telemetry", "tokenization", "configuration", "tests"):
        assert role in ids
    assert {r.id for r in taxonomy.roles if r.apart} >= {"tests"}
    assert {r for level in taxonomy.stack for r in level} <= set(ids)


def test_output_is_deterministic():
    _a, first = layer()
    _b, second = layer()
    assert first.records == second.records and first.stats == second.stats


@pytest.mark.parametrize("needed, role", [(5, "front"), (6, UNASSIGNED)])
def test_a_signal_can_ask_for_several_distinct_matches(tmp_path, needed, role):
    # api_server.py imports fastapi, fastapi.FastAPI, fastapi.Request, fastapi.responses and
    # fastapi.responses.StreamingResponse: five distinct items
    custom = tmp_path / "roles.yaml"
    custom.write_text(f"""\
version: 1
threshold: 1
stack: [front]
roles:
  - id: front
    title: Front
    signals: [{{kind: import, weight: 1, min: {needed}, any: ['fastapi(\\..*)?']}}]
""")
    _ctx, result = layer(taxonomy=str(custom))
    assert roles(result)["mini_vllm/entrypoints/api_server.py"] == role


def test_the_taxonomy_names_no_project():
    # Signals must hold for any inference server: no rule may mention one project's package or a
    # multi-directory path (path rules see one segment at a time, so a "/" could never match anyway).
    text = TAXONOMY_FILE.read_text().lower()
    for project in ("vllm", "sglang", "tritonserver", "tensorrt", "text_generation", "tgi"):
        assert project not in text, project
    for role in load_taxonomy(TAXONOMY_FILE).roles:
        for signal in role.signals:
            if signal.kind == "path":
                assert "/" not in signal.pattern.pattern, (role.id, signal.pattern.pattern)


@pytest.mark.parametrize("stack, upward", [("[sched, mem]", 1), ("[[sched, mem]]", 0), ("[mem, sched]", 1)])
def test_roles_in_one_stack_level_are_peers(tmp_path, stack, upward):
    custom = tmp_path / "roles.yaml"
    custom.write_text(f"""\
version: 1
threshold: 1
stack: {stack}
roles:
  - id: sched
    title: Scheduling
    signals: [{{kind: path, weight: 1, any: [scheduler]}}]
  - id: mem
    title: Memory
    signals: [{{kind: path, weight: 1, any: [block_pool]}}]
""")
    _ctx, result = layer(taxonomy=str(custom))
    assert matrix(result)["sched"]["mem"] == 1 and matrix(result)["mem"]["sched"] == 1
    assert result.stats["upward_edges"] == upward


def test_records_stats_and_shared_are_plain_json():
    import json

    from extractor.model import to_jsonable

    ctx, result = layer()
    for contribution in (ctx.results["concepts"], result):
        text = json.dumps(to_jsonable({"records": contribution.records, "stats": contribution.stats,
                                       "shared": contribution.shared}), sort_keys=True)
        assert "/work/" not in text and str(FIXTURE) not in text  # relative paths only
    layers = json.loads(json.dumps(to_jsonable(result.records)))
    memory = next(l for l in layers if l["role"] == "memory")
    assert {"role", "title", "summary", "modules", "key_symbols", "evidence"} <= set(memory)
    assert memory["modules"][0]["evidence"][0]["signal"] in {"path", "symbol", "concept", "import", "include"}


def test_a_role_that_needs_corroboration_is_not_given_on_path_words_alone(tmp_path):
    custom = tmp_path / "roles.yaml"
    custom.write_text("""\
version: 1
threshold: 1
stack: [web, plain]
roles:
  - id: web
    title: Web
    corroborated_by: [call]
    signals:
      - {kind: path, weight: 3, any: ['entrypoints', 'core']}
      - {kind: call, weight: 1, any: ['fastapi\\.FastAPI']}
    ruled_out_by:
      - {kind: symbol, any: ['BlockPool']}
  - id: plain
    title: Plain
    signals: [{kind: path, weight: 2, any: ['core', 'engine']}]
""")
    _ctx, result = layer(taxonomy=str(custom))
    by_path = {m.path: m for l in result.records for m in l.modules}
    # api_server.py calls FastAPI(): corroborated
    api = by_path["mini_vllm/entrypoints/api_server.py"]
    assert (api.role, api.confidence) == ("web", Confidence.CORROBORATED)
    assert ("call", "fastapi.FastAPI", 9) in {(e.signal, e.matched, e.line) for e in api.evidence}
    # scheduler.py has the path word only: web is passed over for the next role, which says why
    scheduler = by_path["mini_vllm/core/scheduler.py"]
    assert (scheduler.role, scheduler.confidence) == ("plain", Confidence.PATH_ONLY)
    assert scheduler.why.startswith("web (3) rests on path words alone (core) and needs call; plain instead")
    # block_pool.py defines BlockPool: web is ruled out, and the row says where
    pool = by_path["mini_vllm/core/block_pool.py"]
    assert pool.role == "plain" and [(r.role, r.signal, r.matched, r.line) for r in pool.ruled_out] == [
        ("web", "symbol", "BlockPool", 13)]
    assert "web ruled out by symbol BlockPool (line 13)" in pool.why
    # a module no role reaches stays unassigned and says so
    version = by_path["mini_vllm/version.py"]
    assert version.role == UNASSIGNED and version.why == "no signal of any role fired"


def test_a_layer_carries_a_concept_only_through_its_own_modules_with_their_rows():
    _ctx, result = layer()
    for l in result.records:
        paths = {m.path for m in l.modules}
        assert [c.id for c in l.concept_evidence] == list(l.concepts)
        for concept in l.concept_evidence:
            assert concept.evidence and {e.path for e in concept.evidence} <= paths
            assert concept.modules == len({e.path for e in concept.evidence})
    scheduling = next(l for l in result.records if l.role == "scheduling")
    batching = next(c for c in scheduling.concept_evidence if c.id == "continuous-batching")
    assert [(e.path, e.line) for e in batching.evidence] == [("mini_vllm/core/scheduler.py", 26)]
    # the memory layer's shared-memory hit is in its own C++ transport, not the scheduler's
    memory = next(l for l in result.records if l.role == "memory")
    assert all(e.path != "mini_vllm/core/scheduler.py" for c in memory.concept_evidence for e in c.evidence)
