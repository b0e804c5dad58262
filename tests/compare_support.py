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
# The API changes (symbol as callers spell it, rule, subject, breaking) each edit makes: one per
# rule of comparator.apidiff, and a private function's change that breaks no caller.
API_CHANGES = {
    ("servekit.engine.core.build", "object-removed", "", True),
    ("servekit.engine.core.Checked", "object-removed", "", True),
    ("servekit.engine.scheduler.Scheduler.add", "parameter-moved", "priority", True),
    ("servekit.engine.scheduler.Scheduler.add", "parameter-moved", "item", True),
    ("servekit.engine.scheduler.Scheduler.from_config", "parameter-kind-changed", "config", True),
    ("servekit.engine.scheduler.Scheduler.__init__", "parameter-now-required", "capacity", True),
    ("servekit.engine.scheduler.Scheduler", "base-removed", "typing.Generic", True),
    ("servekit.engine.scheduler.Scheduler.waiting", "attribute-retyped", "", True),
    ("servekit.engine.base.BaseScheduler.__init__", "default-changed", "capacity", True),
    ("servekit.engine.core.Engine.backup", "attribute-removed", "", True),
    ("servekit.engine.core.drain", "return-changed", "", True),
    ("servekit.engine.core.local_instance", "parameter-added-required", "config", True),
    ("servekit.engine.core.submit", "overload-removed", "item: str, priority: int", True),
    ("servekit.engine.core.stop", "parameter-removed", "force", True),
    ("servekit.engine.core.make_engine", "object-kind-changed", "", True),
    ("servekit.engine.core._poll", "parameter-removed", "interval", False),
}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: fixture changed; {old!r} not found"
    path.write_text(text.replace(old, new, 1))


def make_pysample_v2(parent: Path) -> Path:
    """A copy of fixtures/pysample with one function removed, one signature changed (parameters
    reordered) and one class renamed, and one change per API breakage rule (``API_CHANGES``)."""
    target = parent / "pysample_v2"
    shutil.copytree(ROOT / "fixtures" / "pysample", target)
    engine = target / "src" / "servekit" / "engine"
    core, scheduler = engine / "core.py", engine / "scheduler.py"
    _edit(core, 'def build(kind):\n    if kind == "a":\n        def make():\n            return Engine()\n'
                '    else:\n        def make():\n            return None\n    return make()\n\n\n', "")
    _edit(core, "class Checked(base.BaseScheduler):", "class CheckedScheduler(base.BaseScheduler):")
    _edit(scheduler, "def add(self, priority: int, item: T) -> None:", "def add(self, item: T, priority: int = 0) -> None:")
    # one change per rule of the API diff
    _edit(scheduler, "def from_config(cls, config: dict)", "def from_config(cls, *, config: dict)")
    _edit(scheduler, "def __init__(self, capacity: int = 8) -> None:", "def __init__(self, capacity: int) -> None:")
    _edit(scheduler, "class Scheduler(BaseScheduler, Generic[T]):", "class Scheduler(BaseScheduler):")
    _edit(scheduler, "def waiting(self) -> int:", "def waiting(self) -> float:")
    _edit(engine / "base.py", "def __init__(self, capacity: int = 8) -> None:",
          "def __init__(self, capacity: int = 16) -> None:")
    _edit(core, "self.backup = sched_mod.Scheduler.make()", "self.spare = sched_mod.Scheduler.make()")
    _edit(core, "def drain(sched: Optional[base.BaseScheduler]) -> int:",
          "def drain(sched: Optional[base.BaseScheduler]) -> str:")
    _edit(core, "def local_instance():", "def local_instance(config):")
    _edit(core, "@overload\ndef submit(item: str, priority: int = 0) -> str: ...\n", "")
    _edit(core, ", force: bool = False) -> None:", ") -> None:")
    _edit(core, "def make_engine() -> Engine:\n    return Engine()\n", "make_engine = Engine\n")
    _edit(core, "def _poll(interval: float) -> None:", "def _poll() -> None:")
    return target


def make_telemetry_ops_v2(parent: Path) -> Path:
    """A copy of fixtures/telemetry_ops as its next release: one metric renamed (the KEDA trigger
    still reads the old name), one removed (an alert reads it behind a recording rule), its Ray
    histograms dropped (the latency metric loses its Ray twin), an alert's threshold raised and
    an alert added."""
    target = parent / "telemetry_ops_v2"
    shutil.copytree(ROOT / "fixtures" / "telemetry_ops", target)
    stats = target / "opsvc" / "stats.py"
    _edit(stats, 'name="opsvc:kv_usage_ratio"', 'name="opsvc:kv_cache_usage_ratio"')
    _edit(stats, '        self.tokens = self._counter_cls(\n            name="opsvc:tokens_total",\n'
                 '            documentation="Tokens generated.",\n            labelnames=labels)\n', "")
    _edit(stats, "    _histogram_cls = RayHistogram\n", "")
    chart = target / "deploy" / "chart"
    _edit(chart / "values.yaml", "latencySeconds: 2", "latencySeconds: 3")
    _edit(chart / "templates" / "prometheusrule.yaml", "        - alert: OpsvcDown\n",
          "        - alert: OpsvcQueueFull\n          expr: max(opsvc:queue_depth) > 64\n          for: 5m\n"
          "        - alert: OpsvcDown\n")
    return target


# ---------------------------------------------------------------- hand-built evidence for rule tests

def evidence(name="sys", version="1", *, nodes=(), edges=(), layers=(), structs=(), metrics=(), thresholds=(),
             concepts=()):
    """Evidence records for a rule test: only what the test states, everything else empty."""
    from extractor.evidence.read import Evidence, Graph, SystemName

    records = {"layers": tuple(layers), "structs": tuple(structs), "metrics": tuple(metrics),
               "thresholds": tuple(thresholds), "concepts": tuple(concepts)}
    return Evidence(system=SystemName(name, version), sources=(), graph=Graph(tuple(nodes), tuple(edges)),
                    records=records, diagnostics=(), stats={"files": {}})


def metric(name, type_="counter", path="m.py", line=1, unit="", exposed=None, **more):
    """A metric record; ``more``: the optional fields (``library``, ``via``, ``origin``, ``dynamic``...)."""
    from extractor.telemetry.records import MetricDefinition, MetricType

    dynamic = more.pop("dynamic", False)
    return MetricDefinition(path, line, name, MetricType(type_), "", (), (), unit, "python", dynamic,
                            tuple(exposed or [name]), **more)


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
