"""One system file, one system, whichever command reads it: the ``build:`` section that
``archdiff extract`` honours reaches the struct probes of ``compare`` (a side extracted on the fly)
and of ``releases`` (every release of the system) too, and a malformed file is the same one line
naming the file and key in all three.

The system is the compile_db fixture as a git repository (``releases`` lists tags): its
``Packet`` grows a trace id under ``-DWITH_TRACE`` and its ``VendorFrame`` resolves only with the
vendor SDK's include directory, both given by the file's ``build:`` (the directory relative to the
file, not to the working directory)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from archdiff.cli import cli
from extractor.evidence.read import load_evidence
from extractor.structs.records import STRUCTS
from tests.conftest import FIXTURES
from tests.helpers import git

DB = FIXTURES / "compile_db"
BUILD = "build:\n  include_dirs: [sdk/include]\n  defines: [WITH_TRACE]\n"
BUILD_RECORD = {"compile_commands": False, "defines": ["WITH_TRACE"], "headers_from": [], "include_dirs": 1}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def system(tmp_path_factory) -> dict[str, Path]:
    """``db.yaml`` (the repository, for ``releases``), ``db-1.0.yaml`` (its tag v1.0, for
    ``extract`` and ``compare``) and the evidence ``extract`` makes of the latter."""
    base = tmp_path_factory.mktemp("sysfile")
    repo = base / "proj"
    shutil.copytree(DB / "src", repo / "src")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "tag", "v1.0")
    shutil.copytree(DB / "vendor", base / "sdk")
    (base / "db.yaml").write_text(f"name: db\nsources: ['{repo.as_uri()}']\n{BUILD}")
    (base / "db-1.0.yaml").write_text(f"name: db\nversion: v1.0\nsources: ['{repo.as_uri()}@v1.0']\n{BUILD}")
    cache, out = base / "cache", base / "extracted"
    result = run("extract", str(base / "db-1.0.yaml"), "-o", str(out), "-j", "1", "--cache-dir", str(cache))
    assert result.exit_code == 0, result.output
    return {"base": base, "cache": cache, "evidence": out / "evidence.json"}


def structs_of(bundle: dict) -> tuple[dict, dict]:
    return {s["qualname"]: s for s in bundle["structs"]}, bundle["stats"]["structs"]


def test_extract_takes_the_build_section_with_paths_relative_to_the_file(system):
    found, stats = structs_of(json.loads(system["evidence"].read_text()))
    assert (found["Packet"]["size"], [m["name"] for m in found["Packet"]["members"]]) == \
        (24, ["id", "trace_id", "flags"])
    assert (found["VendorFrame"]["method"], found["VendorFrame"]["size"]) == ("probe-g++", 24)
    assert stats["build_context"] == BUILD_RECORD


def test_compare_extracts_a_system_file_with_its_build_section(system, tmp_path):
    result = run("compare", str(system["evidence"]), str(system["base"] / "db-1.0.yaml"), "-o", str(tmp_path),
                 "--format", "json", "--fail-on", "any", "-j", "1", "--cache-dir", str(system["cache"]))
    report = json.loads((tmp_path / "report.json").read_text())
    # without the build context the extracted side had an 8-byte Packet and no VendorFrame layout
    assert report["structs"]["totals"]["b"] == report["structs"]["totals"]["a"]
    assert (report["mode"], report["differences"]) == ("release", {"any": 0, "breaking": 0})
    assert result.exit_code == 0, result.output


def test_a_compare_side_is_the_evidence_extract_makes(system):
    from archdiff.sides import load_side

    side = load_side(str(system["base"] / "db-1.0.yaml"), system["cache"], 1)
    assert side.stats["structs"]["build_context"] == BUILD_RECORD
    extracted = load_evidence(system["evidence"])
    assert (side.of(STRUCTS), side.stats["structs"]) == (extracted.of(STRUCTS), extracted.stats["structs"])


def test_releases_extract_each_release_as_extract_does(system, tmp_path):
    result = run("releases", str(system["base"] / "db.yaml"), "-o", str(tmp_path), "--format", "json",
                 "-j", "1", "--cache-dir", str(system["cache"]))
    assert result.exit_code == 0, result.output
    # the same system file (at the release's tag) gives the same bytes: build context, layouts, paths
    assert (tmp_path / "releases" / "1.0" / "evidence.json").read_bytes() == system["evidence"].read_bytes()


@pytest.mark.parametrize("command", ["extract", "compare", "releases"])
def test_a_malformed_build_section_is_one_line_naming_file_and_key(system, tmp_path, command):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: db\nversion: '1'\nsources: ['{(system['base'] / 'proj').as_uri()}']\nbuild:\n  defines: WITH_TRACE\n")
    args = {"extract": [str(bad)], "compare": [str(system["evidence"]), str(bad)], "releases": [str(bad)]}[command]
    result = run(command, *args, "-o", str(tmp_path / "out"), "--cache-dir", str(system["cache"]))
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"archdiff: error: {bad}: build.defines: expected a list, got 'WITH_TRACE'"
