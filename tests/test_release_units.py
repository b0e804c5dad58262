"""Release tracking's rules on small inputs: which names are releases and in what order, what a
package index lists, what a state file must be, and that the pages escape repository text."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from archdiff.commands.releases import releases
from extractor.context import ExtractOptions
from extractor.errors import UserInputError
from extractor.evidence.read import load_evidence
from extractor.acquire.sources import default_cache_dir
from tests.conftest import ROOT
from tests.helpers import make_git_repo
from tests.test_sources import _sdist
from tracking.listing import list_releases
from tracking.render import render_index, render_timeline
from tracking.run import track_releases
from tracking.timeline import build_timeline
from tracking.versions import Release, parse_version, select

TAGS = ["v0.9.0", "0.10.0", "v0.10.1", "0.10.1.1", "v0.10.2rc1", "v0.10.2", "1.0.dev3", "latest", "r25.08",
        "nightly-2024", "v", "2.0-beta", "vx1"]


@pytest.mark.parametrize("options, expected", [
    ({}, ["v0.9.0", "0.10.0", "v0.10.1", "0.10.1.1", "v0.10.2"]),
    ({"pre": True}, ["v0.9.0", "0.10.0", "v0.10.1", "0.10.1.1", "v0.10.2rc1", "v0.10.2", "1.0.dev3", "2.0-beta"]),
    ({"since": "0.10.0", "until": "0.10.2"}, ["0.10.0", "v0.10.1", "0.10.1.1", "v0.10.2"]),
    ({"since": "v0.10.1", "last": 2}, ["0.10.1.1", "v0.10.2"]),
    ({"until": "0.10.1", "pre": True}, ["v0.9.0", "0.10.0", "v0.10.1"]),
    ({"last": 1, "pre": True}, ["2.0-beta"]),
])
def test_releases_are_tags_that_are_versions_in_version_order(options, expected):
    releases = sorted(Release(v, t, (t,)) for t in TAGS if (v := parse_version(t)) is not None)
    assert [r.name for r in select(releases, **options)] == expected


def test_names_that_are_no_version_and_bad_bounds():
    assert [parse_version(t) for t in ("latest", "r25.08", "v", "vx1", "nightly-2024")] == [None] * 5
    assert str(parse_version("V1.2")) == "1.2" and str(parse_version("2.0-beta")) == "2.0b0"
    with pytest.raises(UserInputError, match="--from 'tip' is not a version"):
        select([], since="tip")
    with pytest.raises(UserInputError, match="--from 2 comes after --to 1"):
        select([], since="2", until="1")


def test_package_versions_come_from_sdists_on_the_configured_index(tmp_path, monkeypatch):
    index = tmp_path / "simple"
    (index / "demo-pkg").mkdir(parents=True)
    links = []
    for filename, version in (("demo_pkg-1.0.tar.gz", "1.0"), ("demo-pkg-1.1rc1.tar.gz", "1.1rc1"),
                              ("demo_pkg-2.0.zip", "2.0"), ("demo_pkg-3.0-py3-none-any.whl", None),
                              ("demo_pkg_extra-9.0.tar.gz", None)):
        blob = _sdist(tmp_path, "demo_pkg", version or "0")
        (index / "demo-pkg" / filename).write_bytes(blob)
        links.append(f'<a href="{filename}#sha256={hashlib.sha256(blob).hexdigest()}">{filename}</a>')
    (index / "demo-pkg" / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{index}")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    tracked = list_releases("pypi:demo-pkg")
    assert tracked.name == "demo-pkg"
    assert [(r.name, r.specs) for r in tracked.releases] == [
        ("1.0", ("pypi:demo-pkg==1.0",)), ("1.1rc1", ("pypi:demo-pkg==1.1rc1",)), ("2.0", ("pypi:demo-pkg==2.0",))]


@pytest.mark.parametrize("spec, message", [
    ("pypi:vllm==0.10.2", "without a version"),
    ("file:///srv/repo.git@v1", "without @v1"),
    (".", "has no releases to list"),
])
def test_specs_without_releases_are_one_line(spec, message):
    with pytest.raises(UserInputError, match=message):
        list_releases(spec)


def test_a_system_file_takes_the_versions_every_repository_has(tmp_path):
    from tests.helpers import git

    core = make_git_repo(tmp_path / "core", {"core.py": "def run():\n    pass\n"})
    server = make_git_repo(tmp_path / "server", {"server.py": "def serve():\n    pass\n"})
    git(core, "tag", "v2.0")
    git(core, "tag", "v3.0")
    git(server, "tag", "2.0")  # another spelling of the same version
    system = tmp_path / "system.yaml"
    system.write_text(f"name: duo\nsources:\n  - core={core.as_uri()}\n  - {{label: server, spec: {server.as_uri()}}}\n")
    tracked = list_releases(str(system))
    assert tracked.name == "duo"
    assert [(r.name, r.specs) for r in tracked.releases] == [
        ("v1", (f"core={core.as_uri()}@v1", f"server={server.as_uri()}@v1")),
        ("v2.0", (f"core={core.as_uri()}@v2.0", f"server={server.as_uri()}@2.0"))]
    result = track_releases(str(system), tmp_path / "out", options=ExtractOptions(jobs=1, cache_dir=tmp_path / "cache"))
    assert result.extracted == ("v1", "v2.0") and [(p.old, p.new) for p in result.pairs] == [("1", "2.0")]
    evidence = load_evidence(tmp_path / "out" / "releases" / "2.0" / "evidence.json")
    assert evidence.system.name == "duo"  # the system file's name, not a repository's
    assert sorted((s.label, s.ref) for s in evidence.sources) == [("core", "v2.0"), ("server", "2.0")]
    assert {n.path.split("/")[0] for n in evidence.graph.nodes if n.path} == {"core", "server"}


def test_a_state_file_that_is_not_one_is_refused(tmp_path):
    repo = make_git_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "state.json").write_text("{not json")
    with pytest.raises(UserInputError, match="state.json: not a readable archdiff state file"):
        track_releases(repo.as_uri(), out)
    (out / "state.json").write_text(json.dumps({"archdiff_state": 1, "spec": repo.as_uri(), "releases": [{}],
                                                "pairs": []}))
    with pytest.raises(UserInputError, match="malformed archdiff state file"):
        track_releases(repo.as_uri(), out)


def test_without_ray_the_executor_is_one_line(monkeypatch):
    from extractor.run.executor import open_executor

    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets when Ray is not installed
    with pytest.raises(UserInputError, match=r"needs Ray, which is not installed: pip install 'archdiff\[ray\]'"):
        open_executor("ray")
    assert open_executor("local").name == "local"


EVIL = "<script>alert(1)</script>"


def test_pages_escape_repository_text():
    row = {"files": 1, "nodes": 2, "edges": 1, "diagnostics": 0, "layers": {EVIL: 2}, "layer_titles": {EVIL: EVIL},
           "apart": [], "api": {"public": 1, "decided": 2}, "metrics": {"total": 1, "by_type": {EVIL: 1}},
           "structs": {"total": 0, "resolved": 0}, "binds": 0, "commits": [EVIL]}
    pair = {"differences": {"any": 3, "breaking": 1}, "breaking": {EVIL: 1}, "symbols": {}, "metrics": {},
            "structs": {}, "layer_moves": 0, "takeaways": [EVIL]}
    releases = [{"version": "1.0", "name": EVIL, "evidence": f"releases/{EVIL}/evidence.json", "row": row},
                {"version": "2.0", "name": "v2.0", "evidence": "releases/2.0/evidence.json", "row": row}]
    data = build_timeline(EVIL, EVIL, releases, [{"old": "1.0", "new": "2.0", "report": EVIL, "row": pair}])
    for page in (render_timeline(data), render_index(data, [EVIL])):
        assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert page.count("<script") == 2  # the error collector and the self-test, nothing else


def test_the_scheduled_workflow_runs_a_valid_new_only_command_and_keeps_the_cache(monkeypatch, tmp_path):
    """docs/workflows/archdiff-releases.yml: a schedule, the command line archdiff accepts, and the
    cache archdiff uses by default restored before the run and saved after it, whatever its exit."""
    flow = yaml.safe_load((ROOT / "docs" / "workflows" / "archdiff-releases.yml").read_text())
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as true
    assert triggers["schedule"][0]["cron"].count(" ") == 4
    steps = flow["jobs"]["track"]["steps"]
    run = next(s["run"] for s in steps if "archdiff releases" in s.get("run", ""))
    env = flow["env"]
    # the step's shell expands "$SPEC" and friends from the workflow's env
    args = [env.get(word.strip('"').lstrip("$"), word.strip('"')) for word in shlex.split(run, posix=False)]
    assert args[:2] == ["archdiff", "releases"]
    ctx = releases.make_context("releases", args[2:])  # rejects an option archdiff does not have
    assert ctx.params["new_only"] and ctx.params["fail_on"] == "breaking"
    assert ctx.params["spec"] == env["SPEC"] and str(ctx.params["out_dir"]) == env["OUT"]
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore"))
    save = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save"))
    assert steps.index(restore) < steps.index(next(s for s in steps if s.get("run") == run)) < steps.index(save)
    assert save.get("if") == "always()"
    monkeypatch.delenv("ARCHDIFF_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    kept = {p.strip() for p in save["with"]["path"].split("\n") if p.strip()}
    assert kept == {p.strip() for p in restore["with"]["path"].split("\n") if p.strip()}
    assert Path(next(p for p in kept if p.startswith("~")).replace("~", str(tmp_path), 1)) == default_cache_dir()
    assert "${{ env.OUT }}" in kept


@pytest.mark.parametrize("values, ticks", [((3, 1), ["0", "1", "3"]), ((27, 4), ["0", "13", "27"]), ((1, 0), ["0", "1"])])
def test_chart_gridlines_are_whole_counts_at_their_height(values, ticks):
    # every chart counts things: a gridline labelled 14 must not stand at 13.5
    from tracking.svg import bar_chart, Series

    svg = bar_chart("c", "t", ["a", "b"], [Series("n", values, "#000")])
    found = re.findall(r'<line x1=\d+ x2=\d+ y1="([\d.]+)" y2="[\d.]+" class=grid /><text [^>]*class=tick '
                       r'text-anchor=end>([^<]*)<', svg)
    assert [label for _y, label in found] == ticks
    (y0, _), (y_top, _) = found[0], found[-1]
    for y, label in found:
        assert float(y) == pytest.approx(float(y0) - (float(y0) - float(y_top)) * int(label) / max(values), abs=0.06)
