"""Tampered evidence files: every one is "bad input", exit 2, one line naming the field, through the
real CLI (``compare`` and ``graph export``), never an internal error.

The variants are made here from a committed fixture bundle, one change each.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from archdiff.cli import cli
from tests.compare_support import INPUTS, ROOT

GOOD = INPUTS / "triton_like.evidence.json"


def _set(path, value):
    def change(data):
        *parents, last = path
        target = data
        for key in parents:
            target = target[key]
        target[last] = value
    return change


def _drop(path):
    def change(data):
        *parents, last = path
        target = data
        for key in parents:
            target = target[key]
        del target[last]
    return change


N0, E0 = ("graph", "nodes", 0), ("graph", "edges", 0)
L0, S0, M0, T0, C0 = ("layers", 0), ("structs", 0), ("metrics", 0), ("thresholds", 0), ("concepts", 0)

# (what is changed, the field the message must name)
VARIANTS = [
    *[(_drop((key,)), key) for key in ("system", "sources", "graph", "layers", "structs", "metrics", "thresholds",
                                        "concepts", "diagnostics", "stats")],
    (_drop(("schema_version",)), "schema_version"),
    (_set(("schema_version",), "1"), "schema version"),
    (_set(("system",), "vllm"), "system"),
    (_set(("system", "name"), 5), "system.name"),
    (_drop(("sources", 0, "commit")), "sources[0].commit"),
    (_set(("graph", "nodes"), {}), "graph.nodes"),
    (_set(N0 + ("kind",), "bogus"), "graph.nodes[0].kind"),
    (_set(N0 + ("line",), "3"), "graph.nodes[0].line"),
    (_set(N0 + ("line",), 10 ** 30), "graph.nodes[0].line"),
    (_set(N0 + ("id",), 7), "graph.nodes[0].id"),
    (_drop(N0 + ("name",)), "graph.nodes[0].name"),
    (_set(N0 + ("colour",), "red"), "graph.nodes[0].colour"),
    (_set(N0 + ("tags",), "async"), "graph.nodes[0].tags"),
    (_set(N0 + ("params",), [{"name": 1, "kind": "positional-only", "annotation": "", "default": None}]),
     "graph.nodes[0].params[0].name"),
    (_set(N0 + ("params",), [{"name": "x", "kind": "sideways", "annotation": "", "default": None}]),
     "graph.nodes[0].params[0].kind"),
    (_set(N0 + ("doc",), {"nested": [[[{"garbage": True}]]]}), "graph.nodes[0].doc"),
    (_set(("graph", "nodes", 1, "id"), "__same__"), "listed twice"),
    (_set(E0 + ("source",), "py:no.such.node"), "graph.edges[0].source"),
    (_set(E0 + ("target",), "py:no.such.node"), "graph.edges[0].target"),
    (_set(E0 + ("kind",), "teleports"), "graph.edges[0].kind"),
    (_set(E0 + ("line",), 1.5), "graph.edges[0].line"),
    (_drop(E0 + ("target",)), "graph.edges[0].target"),
    (_set(L0 + ("apart",), "yes"), "layers[0].apart"),
    (_set(L0 + ("modules", 0, "score"), "high"), "layers[0].modules[0].score"),
    (_set(L0 + ("key_symbols", 0, "in_degree"), None), "layers[0].key_symbols[0].in_degree"),
    (_set(L0 + ("depends_on",), [{"role": "x"}]), "layers[0].depends_on[0]"),
    (_drop(L0 + ("summary",)), "layers[0].summary"),
    (_set(S0 + ("method",), "magic"), "structs[0].method"),
    (_set(S0 + ("size",), 1e300), "structs[0].size"),
    (_set(S0 + ("size",), -(2 ** 60)), "structs[0].size"),
    (_set(S0 + ("members",), [{"offset": "0"}]), "structs[0].members[0]"),
    (_set(S0 + ("tags",), [1, 2]), "structs[0].tags[0]"),
    (_set(M0 + ("type",), "bogus"), "metrics[0].type"),
    (_set(M0 + ("buckets",), ["a"]), "metrics[0].buckets[0]"),
    (_set(M0 + ("labels",), "model"), "metrics[0].labels"),
    (_set(M0 + ("dynamic",), "no"), "metrics[0].dynamic"),
    (_set(T0 + ("value",), "80"), "thresholds[0].value"),
    (_set(T0 + ("source_kind",), "nagios"), "thresholds[0].source_kind"),
    (_drop(T0 + ("for",)), "thresholds[0].for"),
    (_set(C0 + ("evidence", 0, "line"), None), "concepts[0].evidence[0].line"),
    (_set(C0 + ("count",), [3]), "concepts[0].count"),
    (_set(("diagnostics",), [{"path": "x", "line": 0, "code": "c", "message": "m", "severity": "fatal"}]),
     "diagnostics[0].severity"),
    (_set(("stats",), []), "stats"),
    (_drop(("stats", "files")), "stats.files"),
    (_set(("stats", "files", "python"), "many"), "stats.files.python"),
]


def _variant(tmp_path, index):
    change, field = VARIANTS[index]
    data = json.loads(GOOD.read_text(encoding="utf-8"))
    if field == "listed twice":
        data["graph"]["nodes"][1]["id"] = data["graph"]["nodes"][0]["id"]
    else:
        change(data)
    path = tmp_path / f"tampered-{index}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, field


def test_there_are_about_fifty_variants():
    assert len(VARIANTS) >= 45
    fixture = json.loads(GOOD.read_text(encoding="utf-8"))
    # each variant changes something the fixture has: none is a no-op
    for i in range(len(VARIANTS)):
        data = copy.deepcopy(fixture)
        change, field = VARIANTS[i]
        if field != "listed twice":
            change(data)
            assert data != fixture, field


@pytest.mark.parametrize("index", range(len(VARIANTS)))
def test_tampered_evidence_is_bad_input_naming_the_field(tmp_path, index):
    path, field = _variant(tmp_path, index)
    runner = CliRunner()
    for args in (["compare", str(path), str(GOOD), "-o", str(tmp_path / "out"), "--format", "json,md,html"],
                 ["graph", "export", str(path), "--format", "graphml", "-o", str(tmp_path / "g.graphml")]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args[0], field, result.output, result.exception)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("archdiff: error: "), result.stderr
        assert field in lines[0] and str(path) in lines[0], lines[0]
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "g.graphml").exists()


def test_nan_and_deep_nesting_are_bad_input_too(tmp_path):
    text = GOOD.read_text(encoding="utf-8")
    nan = tmp_path / "nan.json"
    data = json.loads(text)
    data["thresholds"][0]["value"] = 1.0
    nan.write_text(json.dumps(data).replace('"value": 1.0', '"value": NaN', 1), encoding="utf-8")
    deep = tmp_path / "deep.json"
    deep.write_text(text.replace('"stats":{', '"stats":{"x":' + "[" * 200_000 + "]" * 200_000 + ",", 1),
                    encoding="utf-8")
    for path, says in ((nan, "NaN"), (deep, "nested too deeply")):
        # the installed entry point in a process of its own: exit code and stderr as a user sees them
        done = subprocess.run([sys.executable, "-m", "archdiff.cli", "compare", str(path), str(GOOD), "-o",
                               str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr
