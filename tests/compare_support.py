"""Shared by the comparator tests: the modified copy of fixtures/pysample that the release diff
must see through, and the committed evidence inputs of the golden tests."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
INPUTS = GOLDEN / "inputs"

# What make_pysample_v2 changes, as the release diff must report it, and nothing else.
REMOVED_FUNCTION = "py:servekit.engine.core.build"
CHANGED_SIGNATURE = "py:servekit.engine.scheduler.Scheduler.add"
RENAMED_CLASS = ("py:servekit.engine.core.Checked", "py:servekit.engine.core.CheckedScheduler")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: fixture changed; {old!r} not found"
    path.write_text(text.replace(old, new, 1))


def make_pysample_v2(parent: Path) -> Path:
    """A copy of fixtures/pysample with one function removed, one signature changed (parameters
    reordered) and one class renamed."""
    target = parent / "pysample_v2"
    shutil.copytree(ROOT / "fixtures" / "pysample", target)
    core = target / "src" / "servekit" / "engine" / "core.py"
    _edit(core, 'def build(kind):\n    if kind == "a":\n        def make():\n            return Engine()\n'
                '    else:\n        def make():\n            return None\n    return make()\n\n\n', "")
    _edit(core, "class Checked(base.BaseScheduler):", "class CheckedScheduler(base.BaseScheduler):")
    _edit(target / "src" / "servekit" / "engine" / "scheduler.py", "def add(self, priority: int, item: T) -> None:",
          "def add(self, item: T, priority: int = 0) -> None:")
    return target


# ---------------------------------------------------------------- hand-built evidence for rule tests

def evidence(name="sys", version="1", *, nodes=(), edges=(), layers=(), structs=(), metrics=(), thresholds=(),
             concepts=()):
    """Evidence records for a rule test: only what the test states, everything else empty."""
    from extractor.evidence import Evidence, Graph, SystemName

    return Evidence(system=SystemName(name, version), sources=(), graph=Graph(tuple(nodes), tuple(edges)),
                    layers=tuple(layers), structs=tuple(structs), metrics=tuple(metrics),
                    thresholds=tuple(thresholds), concepts=tuple(concepts), diagnostics=(), stats={"files": {}})


def metric(name, type_="counter", path="m.py", line=1, unit="", exposed=None):
    from extractor.telemetry.records import MetricDefinition, MetricType

    return MetricDefinition(path, line, name, MetricType(type_), "", (), (), unit, "python", False,
                            tuple(exposed or [name]))


def threshold(metrics, name="alert", path="rules.yaml", line=3, op=">", value=1.0):
    from extractor.telemetry.records import SourceKind, Threshold

    return Threshold(path, line, SourceKind.PROMETHEUS_RULE, name, " + ".join(metrics), tuple(metrics), op, value)


def struct(qualname, size, members, align=8, tags=(), path="h.h", line=1, method="probe-g++"):
    """A layout whose holes and padding are computed as the extractor computes them."""
    from extractor.structs.records import Member, Method, StructLayout, compute_holes

    placed = tuple(Member(o, n, t, s) for n, t, o, s in members)
    holes, padding, bit_padding = compute_holes(placed, size, False)
    return StructLayout(qualname, "struct", path, line, Method(method), size, align, placed, holes, padding,
                        bit_padding, tuple(tags))


def layer(role, paths, apart=False, depends_on=(), share=1.0, concepts=()):
    """A layer of 10 lines per module; ``share`` of its lines corroborated (under half: weak);
    ``concepts``: (id, [(path, line, matched), ...]) found in its modules."""
    from extractor.concepts.records import ConceptEvidence
    from extractor.layers.records import Layer, LayerConcept, LayerDependency, ModuleRole, RoleEvidence

    modules = tuple(ModuleRole(p, 0, f"py:{p}", role, 1.0, 10, "", 0.0, ()) for p in paths)
    deps = tuple(LayerDependency(r, n, paths[0], 1, f"py:{paths[0]}", "py:x", "imports") for r, n in depends_on)
    lines = 10 * len(paths)
    carried = tuple(LayerConcept(cid, len({r[0] for r in rows}), tuple(ConceptEvidence(*r, "names") for r in rows))
                    for cid, rows in concepts)
    return Layer(role, role.title(), f"{role} summary", apart, lines, tuple(c for c, _rows in concepts), (), modules,
                 (RoleEvidence(paths[0], 3, role, "path", "x", 1.0),), deps, round(lines * share), share,
                 share < 0.5, carried)
