"""Protobuf headers a tree generates at build time are generated for the probes from its .proto
files (protoc), never from files outside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.structs.protogen import generate_protobuf_headers

pytestmark = pytest.mark.compilers  # protoc

PROTO = 'syntax = "proto3";\npackage demo;\nmessage ModelConfig { string name = 1; int64 max_batch_size = 2; }\n'


def _tree(root: Path) -> Path:
    (root / "protobuf").mkdir(parents=True)
    (root / "protobuf" / "model_config.proto").write_text(PROTO)
    # a second file of the same directory that imports the first, as Triton's grpc_service.proto does
    (root / "protobuf" / "service.proto").write_text('syntax = "proto3";\npackage demo;\nimport "model_config.proto";\n'
                                                     "message Request { ModelConfig config = 1; }\n")
    (root / "src").mkdir()
    (root / "src" / "model.h").write_text('#pragma once\n#include "model_config.pb.h"\n#include "service.pb.h"\n'
                                          "struct ModelEntry { demo::ModelConfig config; int version; };\n")
    (root / "src" / "model.cc").write_text('#include "model.h"\nint version(const ModelEntry& e) { return e.version; }\n')
    return root


def test_a_header_that_includes_a_generated_pb_h_is_laid_out(tmp_path):
    assert shutil.which("protoc"), "protoc is required (apt: protobuf-compiler)"
    root = _tree(tmp_path / "proj")
    bundle = extract_system([str(root)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")).bundle
    (entry,) = [s for s in bundle["structs"] if s["qualname"] == "ModelEntry"]
    assert entry["method"] == "probe-g++"
    assert [m["name"] for m in entry["members"]] == ["config", "version"]
    assert entry["members"][0]["type"] == "demo::ModelConfig" and entry["members"][0]["size"] > 16
    # model_config.pb.h and service.pb.h, and their .grpc.pb.h where grpc_cpp_plugin is installed
    assert bundle["stats"]["structs"]["protobuf_headers_generated"] == (4 if shutil.which("grpc_cpp_plugin") else 2)
    # the generated message classes are not the tree's: no records for them
    assert not [s for s in bundle["structs"] if s["qualname"].startswith("demo::")]


def test_a_proto_that_imports_a_file_outside_the_tree_is_dropped(tmp_path):
    secret = tmp_path / "outside" / "secret.proto"
    secret.parent.mkdir()
    secret.write_text('syntax = "proto3";\nmessage Secret { string token = 1; }\n')
    root = tmp_path / "proj" / "protobuf"
    root.mkdir(parents=True)
    (root / "leaky.proto").write_text(f'syntax = "proto3";\nimport "{secret}";\nmessage Leaky {{ Secret s = 1; }}\n')
    into = tmp_path / "generated"
    into.mkdir()
    assert shutil.which("protoc"), "protoc is required (apt: protobuf-compiler)"
    result = generate_protobuf_headers([tmp_path / "proj"], into)
    assert result.refused == 1 and result.generated == 0
    assert not list(into.rglob("*.pb.h"))
