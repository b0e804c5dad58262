"""Generated code kept apart with its generator named, and roles that path words alone cannot decide:
the mini_platform fixture has a models/ package of generated data classes, a models/ package of
hand-written pydantic records, protoc output, and a real nn.Module model package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from handmade_context import build_context

from extractor.concepts import extract_concepts
from extractor.generated import Banner, extract_generated, scan_generated
from extractor.layers import UNASSIGNED, Confidence, extract_layers
from extractor.model import Language, ParsedFile

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mini_platform"


@pytest.fixture(scope="module")
def platform():
    ctx = build_context({"": FIXTURE})
    ctx.results["concepts"] = extract_concepts(ctx)
    result = extract_layers(ctx)
    return ctx, result, {m.path: m for layer in result.records for m in layer.modules}


def test_a_models_package_of_generated_data_classes_is_not_model_architectures(platform):
    _ctx, result, modules = platform
    for path in ("platform_sdk/models/v1_service_spec.py", "platform_sdk/models/v1_condition.py"):
        module = modules[path]
        assert module.role == "generated"
        row = module.evidence[0]
        # the generator is named, at the banner's line (after the licence header)
        assert (row.signal, row.matched) == ("generator", "OpenAPI Generator")
        text = (FIXTURE / path).read_text().splitlines()
        assert "openapi-generator.tech" in text[row.line - 1]
    generated = next(layer for layer in result.records if layer.role == "generated")
    assert generated.apart and "written by OpenAPI Generator (3)" in generated.summary
    assert not any(layer.role == "models" and any(m.path.startswith("platform_sdk/") for m in layer.modules)
                   for layer in result.records)


def test_a_protoc_module_is_apart_with_the_generator_named(platform):
    _ctx, _result, modules = platform
    pb2, grpc = modules["platform_sdk/protocol/predict_pb2.py"], modules["platform_sdk/protocol/predict_pb2_grpc.py"]
    assert (pb2.role, pb2.evidence[0].matched, pb2.evidence[0].line) == ("generated", "protoc (Protocol Buffers compiler)", 2)
    assert (grpc.role, grpc.evidence[0].matched) == ("generated", "gRPC protocol compiler plugin (grpc_tools)")
    # the hand-written server beside them is the ingress, and imports of generated stubs count for it
    assert modules["platform_sdk/protocol/server.py"].role == "ingress"


def test_a_real_model_package_with_nn_module_subclasses_is_models(platform):
    _ctx, _result, modules = platform
    model = modules["tiny_model/models/tiny_lm.py"]
    assert model.role == "models" and model.confidence is Confidence.CORROBORATED
    assert {("base", "torch.nn.Module"), ("import", "torch")} <= {(e.signal, e.matched) for e in model.evidence}


def test_hand_written_records_in_a_models_directory_are_ruled_out_with_why(platform):
    _ctx, _result, modules = platform
    record = modules["platform_sdk/api/models/deployment_record.py"]
    assert record.role != "models"
    assert ("models", "base", "pydantic.BaseModel") in {(r.role, r.signal, r.matched) for r in record.ruled_out}
    assert "models ruled out by base pydantic.BaseModel" in record.why
    # the package's __init__ has nothing but a docstring: path words alone, no tensor library
    init = modules["platform_sdk/api/models/__init__.py"]
    assert init.role == UNASSIGNED and "models (2) rests on path words alone" in init.why


def test_generated_code_is_not_counted_as_architecture_and_its_size_is_reported(platform):
    ctx, result, modules = platform
    generated = [m for m in modules.values() if m.role == "generated"]
    assert result.stats["lines_counted"] == sum(m.lines for m in modules.values()
                                                if m.role not in ("generated", "tests", "build", "vendored"))
    stats = ctx.results["generated"].stats
    assert stats["files"] == len(generated) == 6
    assert stats["by_generator"]["OpenAPI Generator"] == {
        "files": 3, "lines": sum(m.lines for m in generated if m.evidence[0].matched == "OpenAPI Generator")}
    # no dependency of or on the apart layer, and no concept evidence from generated code: the
    # tensor_parallel_size fields of the generated spec are not tensor parallelism
    assert not any(d.role == "generated" for layer in result.records for d in layer.depends_on)
    assert all(not path.startswith("platform_sdk/models/") for path in ctx.results["concepts"].shared.by_file)


def test_a_helper_file_takes_its_packages_role(platform):
    _ctx, _result, modules = platform
    utils = modules["platform_sdk/pool/utils.py"]
    assert utils.role == "execution" and utils.confidence is Confidence.PACKAGE
    assert (utils.evidence[0].signal, utils.evidence[0].matched) == ("package", "platform_sdk/pool/")
    assert "takes execution from its package platform_sdk/pool/" in utils.why


def test_instrumented_code_is_not_telemetry_but_a_metrics_interceptor_is(platform):
    _ctx, _result, modules = platform
    # the dispatcher imports prometheus_client to time its queue: no telemetry path, symbol or
    # header says it is telemetry, so it takes its worker pool's role
    dispatcher = modules["platform_sdk/pool/dispatcher.py"]
    assert dispatcher.role == "execution" and dispatcher.confidence is Confidence.PACKAGE
    assert "telemetry (4) rests on import prometheus_client" in dispatcher.why and "needs" in dispatcher.why
    interceptors = modules["platform_sdk/protocol/interceptors.py"]
    assert interceptors.role == "telemetry" and interceptors.confidence is Confidence.CORROBORATED
    assert ("symbol", "AccessLogInterceptor") in {(e.signal, e.matched) for e in interceptors.evidence}


def test_a_facade_takes_the_role_of_the_names_it_re_exports(platform):
    _ctx, _result, modules = platform
    facade = modules["platform_sdk/types/__init__.py"]
    assert facade.role == "request-model" and "placed by the names it re-exports" in facade.why
    # the rows point at the import line of the re-exported names
    rows = [e for e in facade.evidence if e.signal == "symbol"]
    assert rows and all(e.line == 2 for e in rows)
    assert modules["platform_sdk/types/dataplane.py"].role == "generated"
    # a facade whose names speak for no role stays unassigned, saying why
    assert modules["platform_sdk/__init__.py"].role == UNASSIGNED


def test_layers_state_how_strongly_their_modules_hold_them(platform):
    _ctx, result, _modules = platform
    for layer in result.records:
        corroborated = sum(m.lines for m in layer.modules if m.confidence is Confidence.CORROBORATED)
        assert layer.corroborated_lines == corroborated
        assert layer.corroborated_share == pytest.approx(corroborated / layer.lines if layer.lines else 0, abs=1e-4)
        assert layer.weak == (layer.role != UNASSIGNED and layer.corroborated_share < 0.5)
    execution = next(layer for layer in result.records if layer.role == "execution")
    # runner.py and worker.py are corroborated by their Runner/Worker symbols; utils.py,
    # dispatcher.py and the package docstring hold the role by their package only
    assert 0 < execution.corroborated_share < 1
    assert sorted(m.path for m in execution.modules if m.confidence is Confidence.PACKAGE) == [
        "platform_sdk/pool/__init__.py", "platform_sdk/pool/dispatcher.py", "platform_sdk/pool/utils.py"]


def scan(text: str, language: Language = Language.PYTHON):
    data = text.encode()
    return scan_generated(ParsedFile(language, data, ast.parse(data) if language is Language.PYTHON else None))


@pytest.mark.parametrize("text, language, generator, name, line", [
    ("# Licence\n#\n# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!\nx = 1\n",
     Language.PYTHON, "protoc", "protoc (Protocol Buffers compiler)", 4),
    ("// Code generated by controller-gen. DO NOT EDIT.\n\npackage v1\n", Language.GO, "code-generated",
     "controller-gen", 1),
    ("// automatically generated by the FlatBuffers compiler, do not modify\n#pragma once\n", Language.CPP,
     "flatc", "FlatBuffers compiler (flatc)", 1),
    ("# file generated by setuptools-scm\n# don't change, don't track in version control\n__version__ = '1'\n",
     Language.PYTHON, "setuptools-scm", "setuptools-scm (version file)", 1),
    ("/*\n * Autogenerated by Thrift Compiler (0.19.0)\n */\n", Language.CPP, "thrift", "Apache Thrift compiler", 2),
    ("# This file is auto-generated by make_tables.py from tables.csv\nTABLE = []\n", Language.PYTHON,
     "do-not-edit", "a code generator (unnamed; \"DO NOT EDIT\" banner)", 1),
])
def test_generator_banners_name_the_tool(text, language, generator, name, line):
    assert scan(text, language) == Banner(generator, name, line, text.splitlines()[line - 1].strip())


@pytest.mark.parametrize("text", [
    # a generator script holding its output's banner in a string is not generated code
    (FIXTURE / "tools" / "render_templates.py").read_text(),
    # prose that says "generated by" is no banner
    "# Configuration for checkpoints generated by the quantization tool\nclass QuantConfig:\n    pass\n",
    '"""Helpers for JSON generated by partial_json_parser."""\ndef f():\n    return 1\n',
    # a banner below the first lines a generator writes in does not count
    "\n" * 80 + "# DO NOT EDIT\n",
])
def test_no_banner_where_none_was_written(text):
    assert scan(text) is None


def test_name_rules_apply_without_a_banner(tmp_path):
    (tmp_path / "pkg" / "generated").mkdir(parents=True)
    (tmp_path / "pkg" / "service_pb2.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "generated" / "table.py").write_text("TABLE = [1, 2]\n")
    (tmp_path / "pkg" / "kernel.pb.h").write_text("#pragma once\n")
    (tmp_path / "pkg" / "handwritten.py").write_text("X = 2\n")
    ctx = build_context({"": tmp_path})
    found = {g.path: (g.generator, g.line, g.matched) for g in extract_generated(ctx).shared.by_path.values()}
    assert found == {"pkg/service_pb2.py": ("protoc", 0, "service_pb2.py"),
                     "pkg/kernel.pb.h": ("protoc", 0, "kernel.pb.h"),
                     "pkg/generated/table.py": ("generated-directory", 0, "generated/")}


def test_the_banner_screens_let_through_every_banner_they_stand_for():
    """Each banner is screened by a relaxed copy that keeps a literal prefix (re searches for it
    at C speed); dropping a leading \\b or optional group only widens what it matches."""
    from extractor.generated import _relaxed, load_generator_rules

    assert _relaxed(r"\bDO NOT EDIT\b") == r"DO NOT EDIT\b"
    assert _relaxed(r"(Code )?[Gg]enerated by protoc-gen-\w+") == r"[Gg]enerated by protoc-gen-\w+"
    assert _relaxed(r"\b(auto-?generated|x)\b") == r"(auto-?generated|x)\b"  # not optional: kept
    rules = load_generator_rules()
    lines = ["# Code generated by protoc-gen-go. DO NOT EDIT.", "// Code generated by controller-gen. DO NOT EDIT.",
             "/* Generated by Cython 3.0.11 */", "# This file is auto-generated by make_tables.py from x.csv",
             "// @generated by tool", "# Generated by the protocol buffer compiler.  DO NOT EDIT!",
             "   Autogenerated by Thrift Compiler (0.19.0)", "# file generated by setuptools-scm"]
    for line in lines:
        if any(p.search(line) for rule in rules.rules for p in rule.banners):
            assert any(screen.search(line) for screen in rules.screens), line


def test_a_banner_is_the_first_rule_s_whatever_rules_the_screens_skip():
    """Rules whose banners' screens miss the file's head are not tried line by line; the verdict
    stays the one of trying every rule in order on every line (the first rule that matches wins,
    at its first line), checked on heads that mix banners of several rules in every order."""
    import itertools

    from extractor.generated import C_COMMENT_PREFIXES, HEAD_BYTES, MAX_BANNER, load_generator_rules

    rules = load_generator_rules()

    def every_rule_on_every_line(data: bytes) -> tuple | None:
        head = data[:HEAD_BYTES].decode("utf-8", errors="replace").splitlines()[: rules.head_lines]
        for rule in rules.rules:
            for number, line in enumerate(head, 1):
                if rule.comment_only and not line.lstrip().startswith(C_COMMENT_PREFIXES):
                    continue
                for pattern in rule.banners:
                    if (match := pattern.search(line)) is not None:
                        named = match.groupdict().get("generator")
                        return rule.id, named or rule.title, number, line.strip()[:MAX_BANNER]
        return None

    lines = ["// @generated by torchgen/gen.py", "// Generated by the protocol buffer compiler.  DO NOT EDIT!",
             "/* DO NOT EDIT */", "// Code generated by controller-gen. DO NOT EDIT.", "int x = 1;",
             'const char* s = "@generated";', "// This file is auto-generated by make.py from a.csv"]
    found = set()
    for count in (1, 2, 3):
        for chosen in itertools.permutations(lines, count):
            data = "\n".join(["#pragma once", *chosen]).encode()
            banner = scan_generated(ParsedFile(Language.CPP, data, None))
            expected = every_rule_on_every_line(data)
            assert (banner and (banner.generator, banner.name, banner.line, banner.banner)) == expected, chosen
            found.add(expected and expected[0])
    assert {"at-generated", "protoc", "do-not-edit", "code-generated", None} <= found
