"""The console script: exit codes, one-line errors, exports that networkx reads back."""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import pytest

from tests.conftest import FIXTURES


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "archdiff.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def evidence(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    proc = run("extract", str(FIXTURES / "pysample"), "-o", str(out), "--cache-dir", str(out / "cache"), "-j", "1",
               "--name", "servekit", "--version", "0.1")
    assert proc.returncode == 0, proc.stderr
    # main() ends the process without freeing the run's objects: what it printed is there all the same
    assert f"{out / 'evidence.json'}: " in proc.stdout and " nodes, " in proc.stdout
    return out / "evidence.json"


def test_extract_writes_a_bundle_with_every_key(evidence):
    bundle = json.loads(evidence.read_text())
    assert bundle["system"] == {"name": "servekit", "version": "0.1"}
    for key in ("layers", "structs", "metrics", "thresholds", "concepts", "diagnostics", "stats", "sources"):
        assert isinstance(bundle[key], (list, dict))
    assert "timings" not in evidence.read_text()  # timings live in the run log
    assert "scan" in json.loads((evidence.parent / "run-log.json").read_text())["timings_s"]


@pytest.mark.parametrize("fmt, reader", [("graphml", nx.read_graphml), ("gexf", nx.read_gexf)])
def test_graph_export_reads_back(evidence, tmp_path, fmt, reader):
    out = tmp_path / f"g.{fmt}"
    proc = run("graph", "export", str(evidence), "--format", fmt, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads(evidence.read_text())
    graph = reader(out)
    assert graph.number_of_nodes() == len(bundle["graph"]["nodes"])
    assert graph.number_of_edges() == len(bundle["graph"]["edges"])
    node = graph.nodes["py:servekit.engine.scheduler.Scheduler"]
    assert node["kind"] == "class" and int(node["line"]) == 9


def test_node_link_json_export_loads_in_networkx(evidence, tmp_path):
    out = tmp_path / "g.json"
    assert run("graph", "export", str(evidence), "--format", "json", "-o", str(out)).returncode == 0
    graph = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
    assert graph.has_edge("py:servekit.engine.core.Checked", "py:servekit.engine.base.BaseScheduler")


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ('{"hello": 1}', "not an archdiff evidence file"),
    ('{"schema_version": 99}', "schema version 99"),
])
def test_corrupt_evidence_is_one_line_exit_2(tmp_path, content, fragment):
    bad = tmp_path / "evidence.json"
    bad.write_text(content)
    proc = run("graph", "export", str(bad), "-o", str(tmp_path / "x.graphml"))
    assert proc.returncode == 2
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("spec, fragment", [
    ("not-a-thing", "not a git URL"),
    ("-x", "starts with '-'"),
])
def test_bad_spec_is_one_line_exit_2(tmp_path, spec, fragment):
    proc = run("extract", "--", spec, "-o", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 2 and fragment in proc.stderr and "Traceback" not in proc.stderr


def test_missing_ref_exit_2_names_the_ref(tmp_path):
    from tests.helpers import make_git_repo

    repo = make_git_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    proc = run("extract", f"file://{repo}@nope", "-o", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 2 and "'nope'" in proc.stderr


def test_several_sources_make_one_system_with_labelled_paths(tmp_path):
    root = FIXTURES / "triton_like"
    out = tmp_path / "out"
    proc = run("extract", "--name", "tritonish", "--version", "1", f"server={root / 'server'}",
               f"core={root / 'core'}", f"common={root / 'common'}", "-o", str(out), "--cache-dir", str(tmp_path / "c"),
               "-j", "1")
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads((out / "evidence.json").read_text())
    assert [s["label"] for s in bundle["sources"]] == ["server", "core", "common"]
    paths = {n["path"] for n in bundle["graph"]["nodes"] if n["path"]}
    assert paths and all(p.split("/", 1)[0] in ("server", "core", "common") for p in paths)
    includes = {(e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == "includes"}
    # core's scheduler includes "triton/common/logging.h", found in the common repository
    assert ("file:core/src/dynamic_batch_scheduler.h", "file:common/include/triton/common/logging.h") in includes
    assert all(m["path"].startswith(("server/", "core/", "common/")) for m in bundle["metrics"])


def test_two_sources_with_the_same_label_are_refused(tmp_path):
    root = FIXTURES / "triton_like"
    proc = run("extract", f"x={root / 'server'}", f"x={root / 'core'}", "-o", str(tmp_path / "o"),
               "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 2 and "share the label 'x'" in proc.stderr


def test_help_is_clicks_and_a_usage_error_is_one_line():
    help_proc = run("extract", "--help")
    assert help_proc.returncode == 0 and "SOURCE" in help_proc.stdout and "error" not in help_proc.stderr
    usage = run("extract")
    assert usage.returncode == 2
    assert usage.stderr == "archdiff: error: Missing argument 'SOURCE...' (see archdiff extract --help)\n"


def test_user_taxonomy_is_used_and_a_malformed_one_is_one_line(tmp_path):
    from extractor.layers import TAXONOMY_FILE

    spec = str(FIXTURES / "pysample")
    common = ["-o", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"), "-j", "1", "--no-probes"]
    own = tmp_path / "roles.yaml"
    # The shipped taxonomy with the scheduling role renamed: the user's file must decide the titles.
    own.write_text(TAXONOMY_FILE.read_text().replace("title: Request scheduling & batching",
                                                     "title: Our batching tier", 1))
    proc = run("extract", spec, "--taxonomy", str(own), *common)
    assert proc.returncode == 0, proc.stderr
    titles = {layer["role"]: layer["title"] for layer in json.loads((tmp_path / "o" / "evidence.json").read_text())["layers"]}
    assert titles["scheduling"] == "Our batching tier"
    # Same path, edited content: the cached bundle must not be reused.
    own.write_text(own.read_text().replace("title: Our batching tier", "title: Renamed again", 1))
    assert run("extract", spec, "--taxonomy", str(own), *common).returncode == 0
    titles = {layer["role"]: layer["title"] for layer in json.loads((tmp_path / "o" / "evidence.json").read_text())["layers"]}
    assert titles["scheduling"] == "Renamed again"
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nthreshold: 2.0\nstack: []\nroles:\n  - id: x\n    signals: []\n")
    proc = run("extract", spec, "--taxonomy", str(bad), *common)
    assert proc.returncode == 2 and "bad.yaml" in proc.stderr and "title" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def test_every_plugged_command_is_found_by_its_name():
    """Sub-commands in their own modules are imported when asked for; each name finds its command."""
    import click

    from archdiff.cli import _PLUGGED, cli

    ctx = click.Context(cli)
    assert set(_PLUGGED) <= set(cli.list_commands(ctx))
    for name in _PLUGGED:
        assert cli.get_command(ctx, name).name == name
