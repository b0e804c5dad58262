"""The ``metrics`` evidence kind: Prometheus metric definitions from Python and C++.

Per-file scanners (:mod:`.python_scan`, :mod:`.cpp_scan`) collect candidates; this module decides
which Python candidates are prometheus_client metrics, which needs every file at once: the class
that ``self._gauge_cls`` names may be set in a base class in another module and overridden in a
subclass elsewhere (vLLM's ``PrometheusStatLogger`` and ``RayPrometheusStatLogger``).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter as Tally
from typing import Any

from extractor.context import Context
from extractor.model import Contribution, Diagnostic, Language, Severity, Step
from extractor.telemetry.cpp_scan import scan_cpp_metrics
from extractor.telemetry.go_scan import scan_go_metrics
from extractor.telemetry.native_metrics import native_records
from extractor.telemetry.python_scan import METRIC_CLASS_NAMES, scan_python_metrics
from extractor.telemetry.records import (MetricDefinition, MetricType, build_python_name,
                                         expose_names, lint_name)
from extractor.telemetry.rust_scan import scan_rust_metrics

PROMETHEUS_MODULE = "prometheus_client"
_TYPE_BY_CLASS = {
    "Counter": MetricType.COUNTER, "Gauge": MetricType.GAUGE, "Histogram": MetricType.HISTOGRAM,
    "Summary": MetricType.SUMMARY, "Info": MetricType.INFO, "Enum": MetricType.ENUM,
}


def _default_buckets() -> tuple[float, ...]:
    import prometheus_client  # the installed library is the authority on its own default

    return tuple(prometheus_client.Histogram.DEFAULT_BUCKETS)


# -- Python: resolving callees across modules -------------------------------------------------

def module_name(rel: str) -> str:
    """``vllm/v1/metrics/loggers.py`` -> ``vllm.v1.metrics.loggers`` (packages drop ``__init__``)."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclasses.dataclass
class _Module:
    name: str
    is_package: bool
    imports: dict[str, dict[str, Any]]
    classes: dict[str, dict[str, Any]]


class PythonResolver:
    """Resolves dotted names to canonical targets (``prometheus_client.Gauge``, ``pkg.mod.Class``)."""

    def __init__(self, modules: dict[str, _Module]):
        self.modules = modules
        self.classes: dict[str, tuple[_Module, dict[str, Any]]] = {}
        for module in modules.values():
            for cls in module.classes.values():
                self.classes[f"{module.name}.{cls['name']}"] = (module, cls)
        # "pkg.mod.Class" also under "mod.Class"-style tails, for trees whose import root is not
        # the source root (a src/ layout): used only when the tail names one class.
        self._tails: dict[str, set[str]] = {}
        for qual in self.classes:
            parts = qual.split(".")
            for i in range(1, len(parts) - 1):
                self._tails.setdefault(".".join(parts[i:]), set()).add(qual)
        self.subclasses: dict[str, set[str]] = {}
        for qual, (module, cls) in self.classes.items():
            for base in cls["bases"]:
                target = self.resolve(base, module)
                if target:
                    self.subclasses.setdefault(target, set()).add(qual)

    def _import_target(self, entry: dict[str, Any], module: _Module) -> str:
        base = entry["module"]
        if entry["level"]:
            package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
            package = package[: len(package) - (entry["level"] - 1)] if entry["level"] > 1 else package
            base = ".".join(package + ([entry["module"]] if entry["module"] else []))
        return f"{base}.{entry['name']}" if entry["name"] else base

    def resolve(self, text: str, module: _Module, depth: int = 0) -> str:
        """Canonical dotted target of ``text`` as written in ``module``; '' when unknown."""
        if depth > 10:
            return ""
        head, _, rest = text.partition(".")
        if head in module.imports:
            target = self._import_target(module.imports[head], module)
        elif head in module.classes:
            target = f"{module.name}.{head}"
        else:
            return ""
        full = f"{target}.{rest}" if rest else target
        return self._follow_reexport(full, depth)

    def _follow_reexport(self, full: str, depth: int) -> str:
        """``pkg.Name`` where ``pkg/__init__.py`` imports ``Name`` from elsewhere -> the origin."""
        if full in self.classes:
            return full
        tails = self._tails.get(full, ())
        if len(tails) == 1:
            return next(iter(tails))
        owner, _, name = full.rpartition(".")
        module = self.modules.get(owner)
        if module is not None and name in module.imports:
            return self.resolve(name, module, depth + 1)
        return full

    def metric_type(self, target: str, seen: frozenset[str] = frozenset()) -> tuple[MetricType | None, str]:
        """The prometheus_client type ``target`` constructs, following thin subclasses."""
        if target in seen:
            return None, ""
        if target.startswith(PROMETHEUS_MODULE + "."):
            last = target.rsplit(".", 1)[-1]
            return (_TYPE_BY_CLASS.get(last), "") if last in METRIC_CLASS_NAMES else (None, "")
        if target in self.classes:
            module, cls = self.classes[target]
            for base in cls["bases"]:
                resolved = self.resolve(base, module)
                kind, _ = self.metric_type(resolved, seen | {target})
                if kind:
                    return kind, f"subclass:{target}"
        return None, ""

    def lookup_attr(self, class_qual: str, attr: str, seen: frozenset[str] = frozenset()) -> str:
        """Resolve class attribute ``attr`` along ``class_qual``'s bases (depth-first MRO)."""
        if class_qual in seen or class_qual not in self.classes:
            return ""
        module, cls = self.classes[class_qual]
        if attr in cls["attrs"]:
            return self.resolve(cls["attrs"][attr], module)
        for base in cls["bases"]:
            found = self.lookup_attr(self.resolve(base, module), attr, seen | {class_qual})
            if found:
                return found
        return ""

    def descendants(self, class_qual: str) -> list[str]:
        out: list[str] = []
        stack = [class_qual]
        while stack:
            current = stack.pop()
            for sub in sorted(self.subclasses.get(current, ())):
                if sub not in out and sub != class_qual:
                    out.append(sub)
                    stack.append(sub)
        return sorted(out)


def _construction_types(construction: dict[str, Any], module: _Module,
                        resolver: PythonResolver) -> list[tuple[MetricType, str]]:
    callee: str = construction["callee"]
    head, _, attr = callee.partition(".")
    if head in ("self", "cls") and attr and "." not in attr:
        if not construction["class"]:
            return []
        owner = f"{module.name}.{construction['class']}"
        found: dict[MetricType, str] = {}
        for klass in [owner, *resolver.descendants(owner)]:
            kind, _ = resolver.metric_type(resolver.lookup_attr(klass, attr))
            if kind and kind not in found:
                found[kind] = f"class-attr:{klass.rsplit('.', 1)[-1]}.{attr}"
        return sorted(found.items())
    target = resolver.resolve(callee, module)
    kind, via = resolver.metric_type(target)
    if not kind:
        return []
    return [(kind, via or ("attribute" if "." in callee else "import"))]


def _first(values: dict[str, Any] | None) -> str:
    if not values or not values.get("values"):
        return ""
    return values["values"][0][0]


def _python_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    files = list(ctx.facts("metrics", Language.PYTHON))
    modules: dict[str, _Module] = {}
    for file, facts in files:
        name = module_name(file.rel)
        modules[name] = _Module(name, file.rel.endswith("__init__.py"), facts.get("imports", {}),
                                {c["name"]: c for c in facts.get("classes", [])})
    resolver = PythonResolver(modules)
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    for file, facts in files:
        module = modules[module_name(file.rel)]
        for construction in facts.get("constructions", []):
            for kind, via in _construction_types(construction, module, resolver):
                built, problems = _python_definitions(construction, kind, via, file.path)
                records.extend(built)
                diagnostics.extend(problems)
                stats["python_constructions"] += 1
    return records, diagnostics, stats


def _python_definitions(construction: dict[str, Any], kind: MetricType, via: str,
                        path: str) -> tuple[list[MetricDefinition], list[Diagnostic]]:
    line = construction["line"]
    names = construction.get("name") or {"values": [], "unresolved": "(no name argument)"}
    if not names.get("values"):
        return [], [Diagnostic(path, line, "metric-name-unresolved",
                               f"{kind.value} name {names.get('unresolved', '')!r} is not a string the "
                               "file defines", Severity.INFO)]
    helps = [v for v, _ in (construction.get("help") or {}).get("values", [])]
    labels = construction.get("labels") or {"values": [], "resolved": True}
    label_names = list(labels.get("values", []))
    buckets_fact = construction.get("buckets")
    buckets_resolved = kind is not MetricType.HISTOGRAM or buckets_fact is None or bool(buckets_fact.get("resolved"))
    if kind is MetricType.HISTOGRAM:
        if buckets_fact is None:
            buckets = _default_buckets()
        else:
            buckets = tuple(float(v) for v in buckets_fact.get("values", []) if v != "+Inf")
        # +Inf is implicit (both libraries always add it) and JSON cannot hold it: left out.
        buckets = tuple(b for b in buckets if b != float("inf"))
    else:
        buckets = ()
    namespace, subsystem, unit = (_first(construction.get(k)) for k in ("namespace", "subsystem", "unit"))
    dynamic_prefix = any((construction.get(k) or {}).get("unresolved") for k in ("namespace", "subsystem"))
    out: list[MetricDefinition] = []
    for index, (raw_name, dynamic) in enumerate(names["values"]):
        full = build_python_name(kind, raw_name, namespace, subsystem, unit)
        help_text = helps[index] if len(helps) == len(names["values"]) else (helps[0] if helps else "")
        out.append(MetricDefinition(
            path=path, line=line, name=full, type=kind, help=help_text,
            labels=tuple(label_names), buckets=buckets, unit=unit,
            language=Language.PYTHON.value, dynamic=dynamic or dynamic_prefix,
            exposed_names=expose_names(kind, full, "prometheus_client"),
            lint=lint_name(full, kind, "prometheus_client", unit),
            labels_resolved=bool(labels.get("resolved", True)), buckets_resolved=buckets_resolved,
            library="prometheus_client", via=via,
        ))
    return out, []


# -- C++ ----------------------------------------------------------------------------------

_CONSTANT_NAME = re.compile(r"^(k[A-Z0-9]\w*|[A-Z][A-Z0-9_]+)$")


def _cpp_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    files = list(ctx.facts("metrics", Language.CPP, Language.CUDA))
    # Constants from other files (a header's kMetricName) resolve a name only when they look like
    # constants and have one value system-wide: an ordinary identifier such as `name` could be
    # anything, and guessing would invent a metric.
    shared: dict[str, set[str]] = {}
    for _, facts in files:
        for key, value in facts.get("constants", {}).items():
            if _CONSTANT_NAME.match(key):
                shared.setdefault(key, set()).add(value)
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    for file, facts in files:
        for chain in facts.get("metrics", []):
            stats["cpp_chains"] += 1
            name_fact = chain.get("name") or {}
            name = name_fact.get("value")
            if name is None and name_fact.get("constant") and len(shared.get(name_fact["constant"], ())) == 1:
                name = next(iter(shared[name_fact["constant"]]))  # a constant from a header
            if name is None:
                diagnostics.append(Diagnostic(
                    file.path, chain["line"], "metric-name-unresolved",
                    f"prometheus-cpp {chain['type']} name {name_fact.get('text', '(no .Name)')!r} is "
                    "not a literal or a constant of the analysed files", Severity.INFO))
                stats["cpp_unresolved"] += 1
                continue
            kind = MetricType(chain["type"])
            help_fact = chain.get("help") or {}
            help_text = help_fact.get("value")
            if help_text is None and help_fact.get("constant") and len(shared.get(help_fact["constant"], ())) == 1:
                help_text = next(iter(shared[help_fact["constant"]]))
            buckets = tuple(chain.get("buckets") or ()) if kind is MetricType.HISTOGRAM else ()
            records.append(MetricDefinition(
                path=file.path, line=chain["line"], name=name, type=kind, help=help_text or "",
                labels=tuple(sorted(set(chain.get("labels", [])) | set(chain.get("add_labels", [])))),
                buckets=buckets, unit="", language=file.language.value, dynamic=False,
                exposed_names=expose_names(kind, name, "prometheus-cpp"),
                lint=lint_name(name, kind, "prometheus-cpp"),
                labels_resolved=True,
                buckets_resolved=kind is not MetricType.HISTOGRAM or chain.get("buckets") is not None,
                library="prometheus-cpp", via="builder",
            ))
    return records, diagnostics, stats


def extract_metrics(ctx: Context) -> Contribution:
    py_records, py_diags, py_stats = _python_records(ctx)
    cpp_records, cpp_diags, cpp_stats = _cpp_records(ctx)
    native, native_diags, native_stats = native_records(ctx)  # Rust and Go
    cpp_records, cpp_diags, cpp_stats = cpp_records + native, cpp_diags + native_diags, cpp_stats + native_stats
    # One record per definition site and name: a construction reached through several subclasses
    # that all resolve to the same prometheus_client class is still one metric.
    records = sorted(set(py_records) | set(cpp_records))
    stats: dict[str, Any] = dict(py_stats + cpp_stats)
    stats["metrics"] = len(records)
    stats["metrics_by_type"] = dict(sorted(Tally(r.type.value for r in records).items()))
    stats["metrics_by_language"] = dict(sorted(Tally(r.language for r in records).items()))
    stats["metrics_dynamic"] = sum(r.dynamic for r in records)
    stats["metrics_with_lint"] = sum(bool(r.lint) for r in records)
    return Contribution(records=tuple(records), diagnostics=tuple(sorted(py_diags + cpp_diags)),
                        stats=stats)


STEP = METRICS_STEP = Step(
    name="metrics",
    extract=extract_metrics,
    scanners={Language.PYTHON: scan_python_metrics, Language.CPP: scan_cpp_metrics,
              Language.CUDA: scan_cpp_metrics, Language.RUST: scan_rust_metrics, Language.GO: scan_go_metrics},
    bundle_key="metrics",
    version="1",
)
