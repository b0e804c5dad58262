"""The ``metrics`` evidence kind: Prometheus metric definitions from Python and C++, and the
series libraries expose for the code.

Per-file scanners (:mod:`.python_scan`, :mod:`.cpp_scan`) collect candidates; the extract step
decides, with every file at once: the class that ``self._gauge_cls`` names may be set in a
subclass elsewhere (vLLM's ``PrometheusStatLogger`` and ``RayPrometheusStatLogger``), and a
factory may be called from any module (:mod:`.python_records`, :mod:`.factories`).
"""

from __future__ import annotations

from collections import Counter as Tally
from typing import Any

from extractor.context import Context
from extractor.model import Contribution, Language, Step
from extractor.telemetry.cpp_records import cpp_records
from extractor.telemetry.cpp_scan import scan_cpp_metrics
from extractor.telemetry.go_scan import scan_go_metrics
from extractor.telemetry.libraries import conventions
from extractor.telemetry.records import METRICS
from extractor.telemetry.native_metrics import native_records
from extractor.telemetry.python_records import python_records
from extractor.telemetry.python_scan import scan_python_metrics
from extractor.telemetry.rust_scan import scan_rust_metrics
from extractor.telemetry.yaml_tables import scan_yaml_metric_tables, table_records


def extract_metrics(ctx: Context) -> Contribution:
    py_records, py_diags, py_stats = python_records(ctx, conventions())
    cpp_metrics, cpp_diags, cpp_stats = cpp_records(ctx)
    native, native_diags, native_stats = native_records(ctx)  # Rust and Go
    cpp_metrics, cpp_diags, cpp_stats = cpp_metrics + native, cpp_diags + native_diags, cpp_stats + native_stats
    tables, table_diags = table_records(ctx, "metrics")  # metric tables in YAML, made by code that reads them
    cpp_metrics, cpp_diags = cpp_metrics + tables, cpp_diags + table_diags
    # One record per definition site and name: a construction reached through several subclasses
    # that all resolve to the same prometheus_client class is still one metric.
    records = sorted(set(py_records) | set(cpp_metrics))
    stats: dict[str, Any] = dict(py_stats + cpp_stats)
    stats["metrics"] = len(records)
    stats["metrics_by_type"] = dict(sorted(Tally(r.type.value for r in records).items()))
    stats["metrics_by_language"] = dict(sorted(Tally(r.language for r in records).items()))
    stats["metrics_dynamic"] = sum(r.dynamic for r in records)
    stats["metrics_with_lint"] = sum(bool(r.lint) for r in records)
    if tables:
        stats["metrics_from_tables"] = len(set(tables))
    return Contribution(records=tuple(records), diagnostics=tuple(sorted(py_diags + cpp_diags)),
                        stats=stats)


STEP = METRICS_STEP = Step(
    name="metrics",
    extract=extract_metrics,
    scanners={Language.PYTHON: scan_python_metrics, Language.CPP: scan_cpp_metrics,
              Language.CUDA: scan_cpp_metrics, Language.RUST: scan_rust_metrics, Language.GO: scan_go_metrics,
              Language.YAML: scan_yaml_metric_tables},
    records=METRICS,
    version="50",  # 3: makers of factories, metric class uses; 4: imports of libraries not modeled;
    # 5: the None tests on parameters a call runs under; 6: C/C++ includes and Rust crates of libraries not modeled;
    # 7: the Rust prometheus-client crate's registrations and the crate-wide definitions that type them,
    # the metrics crate's macros up to 0.21, Go OpenTelemetry instruments, prometheus-cpp names built
    # from a constant of an included header; 8: the Rust prometheus crate's own constructors
    # (`IntCounter::new(name, help)`, `GaugeVec::new(opts, &[labels])`) and the type they give an Opts;
    # 9: Prometheus text written by hand in C/C++ string literals (`# TYPE name type`); 10: Triton's
    # Python backend's MetricFamily (its name among the metric classes a file may spell); 11: Triton's C API
    # metric families (TRITONSERVER_MetricFamilyNew); 12: Prometheus text written by hand in Python
    # (string literals and f-strings, python_exposition); 13: Python names changed in place (append,
    # +=, item set) after they are assigned hold unknown values; 14: the metrics crate's labels handed
    # over as one expression, and exporter buckets configured in a file that names no metrics macro;
    # 15: prometheus_client's *MetricFamily classes among the metric classes a file may spell; 16: names a
    # file imports and calls of functions it imports or defines (ext, call), its constants and its functions
    # returning a value built from their parameters; 17: metric classes held in a dict or a sequence are uses;
    # 18: Go custom collectors' prometheus.NewDesc, typed by the const metrics the file makes with them;
    # 19: Python tables of metric specifications made in a loop (`cfg["type"](cfg["name"], ...)`), metric
    # classes held as dict values counted as uses (a branch's 15, beside the 15-18 above); 20: C/C++
    # function-like macros and their uses at namespace scope, `.Add` on a helper's family, brpc's bvar
    # variables (another branch's 15 and 16); 21: C/C++ trees parsed with a directive's comments on its
    # continued lines blanked (extractor.cpp.parse.blank_continued_comments); 22: Go files' imports and
    # label names given as constants, `pkg.Name` kept whole (another package's constant); 23 (a branch's 22
    # beside it): a class's methods named like a metric class that return one (ClassFacts.forwards) and the
    # annotated parameter a call's head names (CallFacts.receiver); 24: C/C++ trees parsed with a namespace
    # block opened and closed in conditional groups of one condition joined (parse.join_conditional_blocks);
    # 25: YAML metric tables (yaml_tables: `counter: [{name, unit, dimensions}]`, entries with `type:`);
    # 26: Rust string constants by module path (also of files that define no metric), format! pieces, name helpers;
    # 27: Python string Enums' members as constants, a class's attribute read through a local alias of it;
    # 28: Rust functions returning a prometheus metric named like a maker, and calls of functions so named
    # (a branch's 25-28); 29: C/C++ trees with declaration wrappers unwrapped, attribute-only function-like
    # macros blanked; 30: yalantinglibs metrics (CppMetricFacts.ylt: objects, members, constructors' initializers)
    # 31 (another branch's 25): a library not modeled imported under any part of the path (a copy in the
    # system's tree), KMonitor; 32: a metric class a method keeps on self (`self.Histogram = Histogram`);
    # 33: Python star imports of the analysed code (MetricFacts.stars), names they may bring read as imported;
    # 34: Python Enum members' `.value` and annotated class constants (`NAME: Final = "x"`) among constants;
    # 35: a variable keeping a builder chain's end (`inst = Instrumentator().instrument(app)`) has its methods;
    # 36: Go label sets and buckets held in package-level variables of the file, append() of label sets,
    # the list as written when it cannot be read (NativeMetric.labels_text); 37: Go buckets with comments between them;
    # 38: Go k8s.io/component-base/metrics constructors, their StabilityLevel; 39: Go imports of libraries not
    # modeled (libraries.yaml go_imports: controller-runtime's metrics); 40 (beside 32-39): a C/C++ file that
    # launches kernels read with the CUDA grammar; 41: Python buckets that are one of several alternatives
    # (`custom if custom is not None else DEFAULT`) said chosen at run time, not resolved; 42: Go label lists held in
    # package-level variables of another file of the package (NativeMetricFacts.label_sets); 43 (a branch's 41
    # beside them): Go label lists held in locals of the function, metric factories (a function whose parameters
    # are a metric's options) and their calls, package bucket variables; 44 (another branch's 41): C/C++ trees
    # parsed with a conditional group that continues an if-else chain joined, and with the second of two branches
    # that open the same blocks blanked; 45: Metal files and headers read as C++, their qualifiers blanked; 46 (a
    # branch's 45 beside it): and with the second of two branches that open the same parentheses; 45-47 of another
    # branch beside them, 48 above both: TensorFlow monitoring metrics (CppMetricFacts.tf); client_rust names made by
    # format! (their pieces), `x.field` of a struct the file declares (and the buckets its struct literals store
    # there), `<Registry>::default()`; a TensorFlow metric's absl::StrCat name (its pieces); 49: C/C++, Rust and Go
    # tree-sitter captures in document order (native.grammar.in_document_order); 50: a Python value of more than
    # python_scope.MAX_VALUE_NODES nodes is unknown
    forkable=True,  # beside the python graph: it reads the facts alone
)
