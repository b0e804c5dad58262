"""A metric's name, labels and buckets built from what another module defines: an imported
constant (``from .consts import PREFIX``, ``consts.LABELS``, re-exported by a package), a class's
constant, and a helper function returning a name built from its parameter
(``def metric_name(name): return f"{PREFIX}{name}"``, gpustack's shape). Each is read in the
module that defines it; what is not fully known there stays unknown, with its text as the reason."""

from __future__ import annotations

import textwrap

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

FILES = {
    "app/__init__.py": "from .consts import PREFIX as PREFIX\n",
    "app/consts.py": textwrap.dedent('''\
        import os
        PREFIX = "app_"
        BASE = ["model"]
        LABELS = BASE + ["engine"]
        BUCKETS = (0.1, 1.0, 10.0)
        HOST_PREFIX = os.environ.get("HOST_PREFIX", "h_")
    '''),
    "app/names.py": textwrap.dedent('''\
        import enum
        from app import consts


        def metric_name(name: str, unit: str = "") -> str:
            """The name with the system's prefix."""
            prefix = consts.PREFIX + "x:"
            return f"{prefix}{name}{unit}"


        def noisy_name(name):
            print(name)
            return "p_" + name


        class Stage(enum.Enum):
            PREFILL = "prefill"
    '''),
    "app/metrics.py": textwrap.dedent('''\
        from prometheus_client import Counter, Gauge, Histogram
        from app import PREFIX, consts
        from app.consts import HOST_PREFIX
        from app.names import Stage, metric_name, noisy_name


        class Names:
            QUEUE = PREFIX + "queue"


        REQUESTS = Counter(f"{PREFIX}requests_total", "Requests.", consts.LABELS)
        QUEUE = Gauge(Names.QUEUE, "Queue.")
        LATENCY = Histogram(metric_name("latency", unit="_seconds"), "Latency.", buckets=consts.BUCKETS)
        HOSTS = Gauge(HOST_PREFIX + "hosts", "Hosts.")
        NOISY = Gauge(noisy_name("noisy"), "Noisy.")
        STAGE = Gauge(Stage.PREFILL, "Stage.")


        def make(PREFIX):
            return Gauge(PREFIX + "made", "Made.")


        MADE = make("local_")
    '''),
}


def test_names_labels_and_buckets_from_other_modules_are_read_there(tmp_path):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    records = {(r["name"], r["line"]): r for r in (to_jsonable(record) for record in result.records)}
    assert {key: (r["labels"], r["buckets"], r["dynamic"]) for key, r in records.items()} == {
        ("app_requests", 11): (["model", "engine"], [], False),
        ("app_queue", 12): ([], [], False),
        ("app_x:latency_seconds", 13): ([], [0.1, 1.0, 10.0], False),
        ("{HOST_PREFIX}hosts", 14): ([], [], True),  # an environment variable decides: not known
        ("local_made", 23): ([], [], False),  # the parameter, not the imported PREFIX
    }
    assert records[("{HOST_PREFIX}hosts", 14)]["unresolved"] == "HOST_PREFIX"
    unresolved = {d.line: d.message for d in result.diagnostics if d.code == "metric-name-unresolved"}
    # a function doing more than naming values is not read; an Enum's member is no string
    assert unresolved == {15: "gauge name is not a string the code gives: noisy_name('noisy')",
                          16: "gauge name is not a string the code gives: Stage.PREFILL"}


def test_a_string_enum_member_and_a_class_through_a_local_alias(tmp_path):
    """Dynamo's ``class EmbeddingCacheMetrics(str, enum.Enum)`` with f-string members over an imported
    class's constant, used as ``ECM = EmbeddingCacheMetrics; Counter(ECM.HITS_TOTAL, ...)``: a string
    Enum's member is a ``str`` holding its value; a plain Enum's is not."""
    files = {
        "pkg/__init__.py": "",
        "pkg/names.py": "class prefix:\n    COMPONENT = \"svc_component\"\n",
        "pkg/metrics.py": textwrap.dedent('''\
            import enum
            from enum import StrEnum
            from prometheus_client import Counter, Gauge
            from pkg.names import prefix


            class CacheMetrics(str, enum.Enum):
                HITS_TOTAL = f"{prefix.COMPONENT}_cache_hits_total"


            class Sizes(StrEnum):
                BYTES = "cache_bytes"


            class Plain(enum.Enum):
                NOPE = "plain_gauge"


            class Names:
                QUEUED = "queued"


            def make(registry):
                CM = CacheMetrics
                names = Names
                Counter(CM.HITS_TOTAL, "Hits.", registry=registry)
                Gauge(Sizes.BYTES, "Bytes.", registry=registry)
                Gauge(names.QUEUED, "Queued.", registry=registry)
                Gauge(Plain.NOPE, "Not a string.", registry=registry)
        '''),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert {(r.name, r.line) for r in result.records} == {
        ("svc_component_cache_hits", 26), ("cache_bytes", 27), ("queued", 28)}
    unresolved = {d.line: d.message for d in result.diagnostics if d.code == "metric-name-unresolved"}
    assert unresolved == {29: "gauge name is not a string the code gives: Plain.NOPE"}


def test_names_a_star_import_brings(tmp_path):
    """litellm's ``from litellm.types.integrations.prometheus import *`` brings the buckets its histograms
    use: a name the module neither defines nor imports by name is read in the analysed module it
    star-imports (the last one that has it), names that module imports in turn; a private name, a
    builtin, or a name no star-imported module has stays unknown."""
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "PREFIX = 'svc'\n_HIDDEN = 'hidden'\n",
        "pkg/first.py": "BUCKETS = (9.0,)\n",
        "pkg/types.py": textwrap.dedent('''\
            from pkg.base import PREFIX
            BUCKETS = (0.5, 1.0, float("inf"))
            LABELS = ["model", "route"]
            def named(name):
                return f"svc_{name}"
            class Names:
                QUEUE = "svc_queue"
        '''),
        "pkg/metrics.py": textwrap.dedent('''\
            from prometheus_client import Gauge, Histogram
            from pkg.first import *
            from pkg.types import *
            from pkg.base import *
            from os.path import *
            Histogram("svc_latency_seconds", "d", LABELS, buckets=BUCKETS)
            Gauge(Names.QUEUE, "d")
            Gauge(named("depth"), "d")
            Gauge(PREFIX + "_up", "d")
            Gauge(_HIDDEN, "d")
            Gauge(sep, "d")
        '''),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.line, r.name, r.labels, r.buckets) for r in result.records) == [
        (6, "svc_latency_seconds", ("model", "route"), (0.5, 1.0)),  # types', not first's
        (7, "svc_queue", (), ()), (8, "svc_depth", (), ()), (9, "svc_up", (), ())]
    unresolved = {d.line: d.message for d in result.diagnostics if d.code == "metric-name-unresolved"}
    assert unresolved == {10: "gauge name is not a string the code gives: _HIDDEN",
                          11: "gauge name is not a string the code gives: sep"}


def test_an_enum_member_value_and_annotated_class_constants(tmp_path):
    """litellm's label lists of ``UserAPIKeyLabelNames.TEAM.value`` (a plain Enum) and its OpenTelemetry
    names in ``class Metric: TOKEN_USAGE: Final = "gen_ai.client.token.usage"``: a member's ``.value`` is
    its value, an annotated class constant is a constant; a member itself, or a value made at run time
    (``auto()``), is not known."""
    files = {
        "pkg/__init__.py": "",
        "pkg/names.py": textwrap.dedent('''\
            import enum
            from typing import Final
            class Labels(enum.Enum):
                TEAM = "team"
                MODEL = "model"
                LATER = enum.auto()
            class Metric:
                QUEUE: Final = "svc.queue"
                SIZE: str = "svc_size"
        '''),
        "pkg/metrics.py": textwrap.dedent('''\
            import enum
            from prometheus_client import Gauge
            from opentelemetry import metrics
            from pkg.names import Labels, Metric
            class Local(enum.Enum):
                UP = "svc_up"
            meter = metrics.get_meter("svc")
            Gauge("svc_members", "d", [Labels.TEAM.value, Labels.MODEL.value])
            Gauge(Local.UP.value, "d")
            Gauge(Metric.SIZE, "d")
            meter.create_histogram(name=Metric.QUEUE, unit="s")
            Gauge(Labels.TEAM, "d")
            Gauge("svc_later", "d", [Labels.LATER.value])
        '''),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.line, r.name, r.labels, r.labels_resolved) for r in result.records) == [
        (8, "svc_members", ("team", "model"), True), (9, "svc_up", (), True), (10, "svc_size", (), True),
        (11, "svc_queue_seconds", (), False), (13, "svc_later", (), False)]
    unresolved = {d.line: d.message for d in result.diagnostics if d.code == "metric-name-unresolved"}
    assert unresolved == {12: "gauge name is not a string the code gives: Labels.TEAM"}
