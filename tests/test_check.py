"""``archdiff check`` on a git repository built at test time (tests/check_support.py): the newest
release tag by version order, the four promises the tree breaks, the policy, accepted changes, the
CI formats and the version verdict."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest
from packaging.version import Version

from comparator.gate.accepted import PLACEHOLDER, AcceptedChange, apply_accepted
from comparator.gate.findings import Family, Finding, Status
from comparator.gate.verdict import Bump, version_verdict
from tests.check_support import git, make_repo
from tests.sarif_schema import SARIF_2_1_0_SUBSET

FOUR = {  # the four promises the tree breaks, each (rule, symbol)
    ("object-removed", "servekit.core.helper"),
    ("parameter-kind-changed", "servekit.core.Engine.run"),
    ("threshold-orphaned", "ServekitIdle"),
    ("struct-layout-changed", "KVHeader"),
}
NOT_EXPORTED = ("parameter-removed", "servekit.tools.tidy")  # public by name, not in any __all__
REEXPORT = ("object-removed", "servekit.helper")  # the package's re-export of the removed function


def check(repo: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "archdiff.cli", "check", *args, "--cache-dir", str(cache), "-j", "1"],
                          cwd=repo, check=False, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})


def rows(stdout: str, status: str) -> set[tuple[str, str]]:
    """(rule, symbol) of the text output's lines of one status."""
    out = set()
    for line in stdout.splitlines():
        m = re.match(rf"  {status}: (?:\S+:\d+: )?([a-z-]+): (?:threshold |metric )?((?:[\w.]|::)+)", line)
        if m:
            out.add((m.group(1), m.group(2)))
    return out


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def test_check_picks_the_newest_release_tag_and_lists_the_breaks(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo")
    head = (repo / ".git" / "HEAD").read_bytes()
    proc = check(repo, cache)
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    # not v0.9.0 (tagged later), not v1.1.0rc1 (a pre-release), not v1.5.0 (not reachable from HEAD)
    assert "servekit v1.0.0 -> servekit 1.0.1" in first
    assert rows(proc.stdout, "failing") == FOUR | {NOT_EXPORTED, REEXPORT}
    # the renamed metric is a warning: with metrics.removal = read it fails through the alert reading it
    assert rows(proc.stdout, "warning") == {("metric-renamed", "servekit_requests")}
    assert "needs a major bump (1.0.0 -> 2.0.0 at least); the tree declares 1.0.1 (patch): too small" in proc.stdout
    # the ref was read from git objects: the tree and its HEAD are as they were
    assert (repo / ".git" / "HEAD").read_bytes() == head
    assert "sequence" in (repo / "include/servekit/kv.h").read_text()


def test_accept_then_reasons_make_the_gate_pass_and_an_extra_entry_is_stale(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo")
    assert check(repo, cache, "--accept").returncode == 0
    accepted = repo / "archdiff-accepted.yaml"
    text = accepted.read_text()
    assert text.count(PLACEHOLDER) == 6
    # placeholders accept nothing
    unexplained = check(repo, cache)
    assert unexplained.returncode == 1
    assert "accepted entry no reason yet: object-removed servekit.core.helper" in unexplained.stdout
    text = text.replace(PLACEHOLDER, "removed on purpose, see CHANGELOG")
    text += "- rule: parameter-removed\n  symbol: servekit.core.build\n  subject: kind\n  reason: old\n"
    accepted.write_text(text)
    proc = check(repo, cache)
    assert proc.returncode == 0, proc.stdout
    assert rows(proc.stdout, "accepted") == FOUR | {NOT_EXPORTED, REEXPORT}
    assert rows(proc.stdout, "failing") == set()
    assert "accepted entry stale: parameter-removed servekit.core.build(kind)" in proc.stdout
    # accepting a break does not make it compatible: the version is still too small
    assert check(repo, cache, "--fail-on", "version").returncode == 1
    assert check(repo, cache, "--fail-on", "version", "--tree-version", "2.0.0").returncode == 0


def test_a_policy_of_dunder_all_exports_drops_the_findings_on_names_not_exported(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo", policy='\n[tool.archdiff.api]\npublic = "all"\n')
    proc = check(repo, cache)
    assert proc.returncode == 1
    assert rows(proc.stdout, "failing") == FOUR | {REEXPORT}
    assert "1 outside the policy" in proc.stdout.splitlines()[0]


RENUMBERED = ("field-renumbered", "serve.wire.Request.max_tokens")  # the .proto's break, outside every Python package


@pytest.mark.parametrize("api", ['packages = ["servekit"]', 'public = "all"', 'public = "init"'])
def test_the_python_api_policy_leaves_a_proto_wire_break_failing(tmp_path: Path, cache: Path, api: str):
    repo = make_repo(tmp_path / "repo", policy=f"\n[tool.archdiff.api]\n{api}\n", proto=True)
    proc = check(repo, cache)
    assert proc.returncode == 1
    assert RENUMBERED in rows(proc.stdout, "failing")


def test_proto_globs_scope_the_wire_findings(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo", policy='\n[tool.archdiff.proto]\nexclude = ["serve.wire.*"]\n', proto=True)
    proc = check(repo, cache)
    assert rows(proc.stdout, "failing") == FOUR | {NOT_EXPORTED, REEXPORT}  # the renumbered field left out
    assert "1 outside the policy" in proc.stdout.splitlines()[0]


@pytest.mark.parametrize(("policy", "message"), [
    ("\n[tool.archdiff]\nignroe = []\n", "tool.archdiff.ignroe: unknown key"),
    ("\n[tool.archdiff]\nwarn = \"return-changed\"\n", "tool.archdiff.warn: expected a list"),
    ("\n[tool.archdiff.api]\npublic = \"exported\"\n", "tool.archdiff.api.public: expected one of names, all, init"),
])
def test_a_wrong_policy_is_one_error_naming_the_key(tmp_path: Path, cache: Path, policy: str, message: str):
    repo = make_repo(tmp_path / "repo", policy=policy)
    proc = check(repo, cache)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


_COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def test_sarif_validates_and_github_lines_parse_as_workflow_commands(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo")
    sarif = check(repo, cache, "--format", "sarif")
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, SARIF_2_1_0_SUBSET, format_checker=jsonschema.FormatChecker())
    (run,) = log["runs"]
    assert run["tool"]["driver"]["version"] == metadata.version("archdiff")
    by_rule = {r["ruleId"]: r for r in run["results"]}
    struct = by_rule["struct-layout-changed"]["locations"][0]["physicalLocation"]
    assert struct["artifactLocation"]["uri"] == "include/servekit/kv.h" and struct["region"]["startLine"] == 4
    assert all(r["ruleIndex"] == [d["id"] for d in run["tool"]["driver"]["rules"]].index(r["ruleId"])
               for r in run["results"])
    again = json.loads(check(repo, cache, "--format", "sarif").stdout)
    assert [r["partialFingerprints"] for r in again["runs"][0]["results"]] == \
        [r["partialFingerprints"] for r in run["results"]]

    github = check(repo, cache, "--format", "github")
    assert github.returncode == 1
    commands = [_COMMAND.match(line) for line in github.stdout.splitlines()]
    assert all(commands), github.stdout
    errors = [m for m in commands if m and m.group(1) == "error"]
    props = [dict(p.split("=", 1) for p in (m.group(2) or "").split(",") if p) for m in errors]
    assert {"file": "servekit/core.py", "line": "7", "title": "archdiff parameter-kind-changed"} in props
    assert len(errors) == 6 + 1  # six failing findings and the version verdict


def test_markdown_summary_names_the_version_and_each_failure(tmp_path: Path, cache: Path):
    repo = make_repo(tmp_path / "repo")
    md = check(repo, cache, "--format", "markdown").stdout
    assert md.startswith("## ❌ archdiff check: servekit v1.0.0 → servekit 1.0.1")
    table = [line for line in md.splitlines() if line.startswith("| failing |")]
    assert len(table) == 6 and any("`KVHeader`" in line for line in table)
    assert f"archdiff {metadata.version('archdiff')}" in md


def test_version_flag_prints_the_installed_version():
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "--version"], check=False, capture_output=True, text=True)
    assert proc.stdout.strip() == f"archdiff {metadata.version('archdiff')}"


@pytest.mark.parametrize(("old", "declared", "breaking", "additions", "needed", "too_small"), [
    ("1.2.3", "1.2.4", True, False, Bump.MAJOR, True),
    ("1.2.3", "2.0.0", True, False, Bump.MAJOR, False),
    ("1.2.3", "1.3.0", False, True, Bump.MINOR, False),
    ("1.2.3", "1.2.4", False, True, Bump.MINOR, True),
    ("1.2.3", "1.2.4", False, False, Bump.PATCH, False),
    ("0.10.1", "0.10.2", True, False, Bump.MINOR, True),  # the 0.MINOR rule: a break moves 0.x's minor
    ("0.10.1", "0.11.0", True, False, Bump.MINOR, False),
    ("0.10.1", "0.10.2", False, True, Bump.PATCH, False),
])
def test_version_verdict(old, declared, breaking, additions, needed, too_small):
    verdict = version_verdict(Version(old), Version(declared), breaking, additions)
    assert (verdict.needed, verdict.too_small) == (needed, too_small)


def test_an_accepted_entry_lapses_at_its_until_version():
    finding = Finding("a.py", 3, "object-removed", "pkg.f", "", Family.API, "gone")
    entry = AcceptedChange("object-removed", "pkg.f", "", "deprecated in 1.4", until="2.0.0")
    kept = apply_accepted([finding], [entry], Version("1.5.0"))
    assert kept.findings[0].status is Status.ACCEPTED and not kept.lapsed
    lapsed = apply_accepted([finding], [entry], Version("2.0.0"))
    assert lapsed.findings[0].status is Status.FAILING and lapsed.lapsed == (entry,)


def test_the_documented_workflow_and_pre_commit_hook_run_on_a_fixture_repository(tmp_path: Path, cache: Path):
    """docs/workflows/archdiff-check.yml's archdiff steps and .pre-commit-hooks.yaml's entry, run as
    GitHub Actions and pre-commit run them (bash -e; entry plus no file names), in a repository that
    breaks four promises."""
    import shlex

    import yaml

    from tests.conftest import ROOT

    repo = make_repo(tmp_path / "repo")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "ARCHDIFF_CACHE": str(cache), "GITHUB_STEP_SUMMARY": str(summary)}
    flow = yaml.safe_load((ROOT / "docs" / "workflows" / "archdiff-check.yml").read_text())
    steps = flow["jobs"]["check"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0  # the tags must be there
    runs = {s["name"]: s["run"] for s in steps if s.get("name", "").startswith("archdiff")}
    assert set(runs) == {"archdiff check", "archdiff summary", "archdiff sarif"}
    results = {name: subprocess.run(["bash", "-e", "-c", run], cwd=repo, env=env, check=False, capture_output=True, text=True)
               for name, run in runs.items()}
    gate = results["archdiff check"]
    assert gate.returncode == 1  # the job fails
    assert gate.stdout.startswith(f"archdiff {metadata.version('archdiff')}\n")
    assert sum(line.startswith("::error file=") for line in gate.stdout.splitlines()) == 6
    assert results["archdiff summary"].returncode == 0 and summary.read_text().startswith("## ❌ archdiff check")
    sarif = json.loads((repo / "archdiff.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == 7  # six failing, one warning

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["pass_filenames"] is False
    proc = subprocess.run([*shlex.split(hook["entry"]), *hook.get("args", [])], cwd=repo, env=env,
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 1 and "failing: servekit/core.py:7: parameter-kind-changed" in proc.stdout


def test_the_gate_rows_are_the_comparisons_breaking_rows():
    """Read from a release report (tests/golden/release.json), the gate has one row for each
    difference the comparator counts as breaking, each at a place in the tree."""
    from comparator.gate.findings import release_findings
    from tests.conftest import ROOT

    report = json.loads((ROOT / "tests" / "golden" / "release.json").read_text())
    found = release_findings(report)
    assert len(found) == report["differences"]["breaking"] > 0
    assert all(f.path and f.line > 0 for f in found)


def test_against_names_another_release_and_a_repository_without_release_tags_is_one_error(tmp_path: Path,
                                                                                            cache: Path):
    repo = make_repo(tmp_path / "repo")
    older = check(repo, cache, "--against", "v0.9.0")
    assert older.stdout.splitlines()[0].startswith(f"archdiff {metadata.version('archdiff')} check: "
                                                   "servekit v0.9.0 -> servekit 1.0.1")
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    (plain / "m.py").write_text("def f():\n    pass\n")
    git(plain, "add", "-A")
    git(plain, "commit", "-q", "-m", "no release yet")
    proc = check(plain, cache)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"archdiff: error: {plain.resolve().as_uri()} has no release tag " \
                                  "reachable from HEAD (a version such as v1.2.3): give --against REF"
