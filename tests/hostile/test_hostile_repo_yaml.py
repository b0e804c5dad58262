"""YAML bombs inside the analysed repository (a rules file): each bad document is a ``yaml-limit``
diagnostic of its file and line, the documents beside it are still read, and the run stays within
a bounded time and memory (before the bounded loader, a billion laughs in a rules file took 2.8 GB
and ran past a minute)."""

from __future__ import annotations

import json

import pytest

from tests.hostile.support import memory_cap

MEMORY = memory_cap(3 * 1024**3)


def _laughs() -> str:
    text = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    for previous, name in zip("abcdefgh", "bcdefghi"):
        text += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
    return text


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_yaml_bombs_in_the_tree_are_diagnostics_and_the_run_goes_on(sandbox, jobs):
    tree = sandbox.input / "tree"
    (tree / "rules").mkdir(parents=True)
    (tree / "rules" / "bomb.yaml").write_text("groups:\n  - name: g\n    rules:\n      - alert: Ok\n"
                                              "        expr: up == 0\n---\n" + _laughs() + "expr: up\n")
    (tree / "rules" / "deep.yaml").write_text("groups: " + "[" * 5000 + "]" * 5000 + "\nexpr: up\n")
    (tree / "rules" / "cycle.yaml").write_text("groups: &g [{name: g, rules: *g}]\nexpr: up\n")
    (tree / "a.py").write_text("A = 1\n")
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", jobs,
                       "--no-probes", timeout=90, fault=MEMORY)
    assert proc.returncode == 0, proc.stderr
    evidence = json.loads((sandbox.out / "evidence.json").read_text())
    problems = sorted((d["path"], d["line"], d["code"], d["message"]) for d in evidence["diagnostics"])
    assert problems == [
        ("rules/bomb.yaml", 7, "yaml-limit",
         "YAML document not read: expands to more than 1000000 nodes (aliases repeating aliases)"),
        ("rules/cycle.yaml", 1, "yaml-limit", "YAML document not read: an alias refers to a node that contains it "
                                              "(a cycle)"),
        ("rules/deep.yaml", 1, "yaml-limit", "YAML document not read: nested deeper than 128 levels"),
    ]
    assert [(t["name"], t["path"], t["line"]) for t in evidence["thresholds"]] == [("Ok", "rules/bomb.yaml", 4)]
    sandbox.assert_contained()
