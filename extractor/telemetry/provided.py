"""Series a library exposes for the code without the code defining them (``provided`` and
``builders`` in ``libraries.yaml``), each record marked with that library in ``origin``.

- prometheus_client's default collectors (``process_*``, ``python_gc_*``, ``python_info``) where
  the code serves the default registry: an exposition call without a registry, or ``REGISTRY``
  handed on as a value (vLLM's ``get_prometheus_registry`` returns it).
- prometheus-fastapi-instrumentator: the metrics its middleware makes, as the code configures
  them (``Instrumentator(...)`` options, ``.add(metrics.<fn>(...))``, ``.instrument(app, ...)``).
- OpenTelemetry's Prometheus reader: ``target_info``.
"""

from __future__ import annotations

from collections import Counter as Tally
from typing import Any

from extractor.model import Language
from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.libraries import Conventions
from extractor.telemetry.python_facts import BuilderChain, MetricFacts
from extractor.telemetry.python_resolve import Module, PythonResolver
from extractor.telemetry.records import (MetricDefinition, MetricType, build_python_name, expose_names, lint_name,
                                         prometheus_default_buckets)

_DEFAULT_REGISTRY = frozenset({"prometheus_client.REGISTRY", "prometheus_client.registry.REGISTRY",
                               "prometheus_client.core.REGISTRY"})


def provided_records(modules: dict[str, Module], facts: dict[str, MetricFacts], resolver: PythonResolver,
                     conventions: Conventions) -> tuple[list[MetricDefinition], Tally]:
    """``facts`` is each module's scanner facts by module name."""
    records: list[MetricDefinition] = []
    stats: Tally = Tally()
    sites = _default_registry_sites(modules, facts, resolver) + _builder_registry_sites(
        modules, facts, resolver, conventions)
    sites.sort()
    for entry in conventions.provided:
        if entry["trigger"] == "default-registry" and sites:
            path, line = sites[0]
            records.extend(_fixed(entry, path, line, "default-registry"))
            stats["default_registry_sites"] = len(sites)
    for name, module in sorted(modules.items()):
        for reader in facts[name].readers:
            target = resolver.resolve(reader.callee, module)
            for entry in conventions.provided:
                if entry["trigger"] != target:
                    continue
                if entry.get("unless") and pysym.truth(reader.kwargs.get(entry["unless"])):
                    continue
                records.extend(_fixed(entry, module.path, reader.line, f"reader:{target.rsplit('.', 1)[-1]}"))
        for chain in facts[name].builders:
            builder = conventions.builder_for(resolver.resolve(chain.callee, module))
            if builder is not None:
                made = _builder_records(builder, chain, module, resolver)
                records.extend(made)
                stats["builder_metrics"] += len(made)
    return records, stats


def _default_registry_sites(modules: dict[str, Module], facts: dict[str, MetricFacts],
                            resolver: PythonResolver) -> list[tuple[str, int]]:
    sites: list[tuple[str, int]] = []
    for name, module in sorted(modules.items()):
        for use in facts[name].registry_uses:
            if use.kind == "expose":
                target = resolver.resolve(use.callee, module)
                if not target.startswith("prometheus_client."):
                    continue
                if use.registry and resolver.resolve(use.registry, module) not in _DEFAULT_REGISTRY:
                    continue
            elif resolver.resolve(use.registry, module) not in _DEFAULT_REGISTRY:
                continue
            sites.append((module.path, use.line))
    return sorted(sites)


def _builder_registry_sites(modules: dict[str, Module], facts: dict[str, MetricFacts],
                            resolver: PythonResolver, conventions: Conventions) -> list[tuple[str, int]]:
    """Builders that serve their registry (``.expose(app)``) without being given one."""
    sites: list[tuple[str, int]] = []
    for name, module in sorted(modules.items()):
        for chain in facts[name].builders:
            builder = conventions.builder_for(resolver.resolve(chain.callee, module))
            if builder is None:
                continue
            exposes = [m for m in chain.methods if m.name == builder["expose"]]
            registry = chain.kwargs.get(builder["registry_option"])
            given = pysym.unwrap(registry) if registry is not None else None
            if exposes and (given is None or given[:2] == ["lit", None]):
                sites.append((module.path, exposes[0].line))
    return sites


def _record(entry_library: str, naming: str, path: str, line: int, name: str, kind: MetricType,
            help_text: str, labels: tuple[str, ...], buckets: tuple[float, ...], via: str) -> MetricDefinition:
    return MetricDefinition(
        path=path, line=line, name=name, type=kind, help=help_text, labels=labels, buckets=buckets, unit="",
        language=Language.PYTHON.value, dynamic="{" in name, exposed_names=expose_names(kind, name, naming),
        lint=lint_name(name, kind, naming), library="prometheus_client" if naming == "collector" else naming,
        via=via, origin=entry_library)


def _fixed(entry: dict[str, Any], path: str, line: int, via: str) -> list[MetricDefinition]:
    return [_record(entry["library"], entry["naming"], path, line, m["name"], MetricType(m["type"]),
                    m.get("help", ""), tuple(m.get("labels", ())), (), via)
            for m in entry["metrics"]]


def _builder_records(builder: dict[str, Any], chain: BuilderChain, module: Module,
                     resolver: PythonResolver) -> list[MetricDefinition]:
    methods = chain.methods
    activations = [m for m in methods if m.name == builder["activate"]]
    if not activations:
        return []  # never instrumented: the middleware that makes the metrics is not added
    line = activations[0].line
    options: dict[str, Any] = {}
    for option, spec in builder["options"].items():
        given = chain.kwargs if not spec["call"] else next(
            (m.kwargs for m in methods if m.name == spec["call"]), {})
        options[option] = _option_value(given.get(option), spec["default"])
    via = f"builder:{chain.callee.rsplit('.', 1)[-1]}.{builder['activate']}"
    library, naming = builder["library"], builder["naming"]
    added = [arg for m in methods if m.name == builder["add"] for arg in m.args if arg.callee is not None]
    out: list[MetricDefinition] = []
    functions = {resolver.resolve(arg.callee, module): arg for arg in added if arg.callee is not None}
    explicit = [(target, arg) for target, arg in functions.items() if target in builder["functions"]]
    use_default = not explicit or any(t.endswith(".default") for t in functions)
    namespace, subsystem = str(options["metric_namespace"]), str(options["metric_subsystem"])
    if use_default:
        for metric in builder["default_metrics"]:
            kind = MetricType(metric["type"])
            buckets = _buckets(options.get(metric["buckets"])) if metric.get("buckets") else ()
            out.append(_record(library, naming, module.path, line,
                               build_python_name(kind, metric["name"], namespace, subsystem),
                               kind, metric.get("help", ""), tuple(metric.get("labels", ())), buckets, via))
    for target, arg in sorted(explicit):
        spec = builder["functions"][target]
        kwargs = arg.kwargs
        kind = MetricType(spec["type"])
        name = _option_value(kwargs.get("metric_name"), spec["name"])
        flagged_labels = tuple(label for flag, label in builder["function_labels"].items()
                               if _option_value(kwargs.get(flag), True))
        buckets = ()
        if kind is MetricType.HISTOGRAM:  # metrics.latency's default is prometheus_client's own
            buckets = _buckets(_option_value(kwargs.get("buckets"), None) or prometheus_default_buckets())
        full = build_python_name(kind, str(name), str(_option_value(kwargs.get("metric_namespace"), "")),
                                 str(_option_value(kwargs.get("metric_subsystem"), "")))
        out.append(_record(library, naming, module.path, line, full, kind, "", flagged_labels, buckets,
                           f"{via} > {target.rsplit('.', 1)[-1]}"))
    for metric in builder["optional_metrics"]:
        if not options.get(metric["when"]):
            continue
        name = metric["name"].format(**{k: v for k, v in options.items() if isinstance(v, str)})
        labels: tuple[str, ...] = ()
        for flag, flagged in metric.get("labels_when", {}).items():
            if options.get(flag):
                labels = tuple(flagged)
        kind = MetricType(metric["type"])
        out.append(_record(library, naming, module.path, line, name, kind, metric.get("help", ""), labels, (), via))
    return out


def _option_value(sym: Any, default: Any) -> Any:
    """A literal option as the code gives it; the library's default when not given; the default
    too when not a literal (recorded as what the library does unless told otherwise)."""
    if sym is None:
        return default
    strings = pysym.strings(sym)
    if isinstance(default, bool):
        truth = pysym.truth(sym)
        return default if truth is None else truth
    if isinstance(default, list) or default is None:
        elements = pysym.items(sym)
        numbers = [pysym.number(e) for e in elements] if elements is not None else None
        return numbers if numbers and all(n is not None for n in numbers) else default
    if len(strings) == 1 and not strings[0][1]:
        return strings[0][0]
    return default


def _buckets(values: Any) -> tuple[float, ...]:
    if not values:
        return ()
    return tuple(float(v) for v in values if float(v) != float("inf"))
