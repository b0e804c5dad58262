"""Python metric definitions: every recorded call expanded through factories (:mod:`.factories`)
down to a library constructor, and read into :class:`MetricDefinition` records at the outermost
call site that gives the values.
"""

from __future__ import annotations

import re
from collections import Counter as Tally
from typing import Any

import msgspec

from extractor.context import Context
from extractor.model import Diagnostic, Language, Severity
from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.exposition import exposition_record
from extractor.telemetry.factories import MAX_DEPTH, Call, FactoryExpander, Outcome
from extractor.telemetry.libraries import Conventions, conventions
from extractor.telemetry.provided import provided_records
from extractor.telemetry.python_facts import MetricFacts
from extractor.telemetry.python_resolve import Module, PythonResolver
from extractor.telemetry.python_values import ValueReader
from extractor.telemetry.records import (MetricDefinition, MetricType, build_otel_name, build_python_name,
                                         expose_names, lint_name, prometheus_default_buckets, unmodeled_library)


def load_modules(ctx: Context) -> tuple[dict[str, Module], list[Call], dict[str, MetricFacts]]:
    modules: dict[str, Module] = {}
    calls: list[Call] = []
    by_module: dict[str, MetricFacts] = {}
    for file, facts in ctx.facts("metrics", Language.PYTHON):
        name = file.module  # one naming for every step (extractor.naming)
        by_module[name] = facts
        module = Module(name, file.path, file.rel.endswith("__init__.py"), facts.imports,
                        {c.name: c for c in facts.classes}, facts.functions, facts.makers, facts.stars)
        modules[name] = module
        calls.extend(Call(module, fact) for fact in facts.calls)
    return modules, calls, by_module


def read_values(modules: dict[str, Module], calls: list[Call], facts: dict[str, MetricFacts]) -> tuple[list[Call], int]:
    """The calls (and the factories' defaults and made callables) with the constants their files
    import and the values of the functions they call read (:mod:`.python_values`); how many."""
    reader = ValueReader(modules, facts, PythonResolver(modules))
    for module in modules.values():
        module.functions = {q: msgspec.structs.replace(s, defaults=reader.defaults(s.defaults, module))
                            for q, s in module.functions.items()}
        module.makers = {q: msgspec.structs.replace(m, call=reader.call_facts(m.call, module))
                         for q, m in module.makers.items()}
    return [Call(call.module, reader.call_facts(call.fact, call.module)) for call in calls], reader.read


def python_records(ctx: Context, conventions: Conventions) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    modules, calls, facts = load_modules(ctx)
    calls, values_read = read_values(modules, calls, facts)
    resolver = PythonResolver(modules)
    otel = any(entry.module.startswith("opentelemetry") for m in modules.values() for entry in m.imports.values())
    expander = FactoryExpander(resolver, conventions, calls, otel)
    outcomes = [outcome for call in calls for outcome in expander.expand(call)]
    entered = {key for outcome in outcomes for key in outcome.entered}
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    if values_read:
        stats["python_values_from_other_definitions"] = values_read
    with_exemplars = _exemplar_objects(modules, facts, resolver)
    for outcome in outcomes:
        roles = {role: outcome.values.get(param) for role, param in outcome.constructor.roles.items()}
        # A name that reads a parameter of the function it sits in is the callers' to give: when
        # call sites reach that factory, they are the records. A name given here stays here,
        # even when the labels or buckets come from the caller.
        opened = pysym.refs(roles["name"]) if roles.get("name") is not None else set()
        fact = outcome.root.fact
        for value in [a[1] for a in fact.args if a[:1] == ["star"]] + list(fact.dstar):
            opened |= pysym.refs(value)  # *args / **kwargs forwarded: the callers give the name
        if opened and _reached(outcome.root, opened, entered):
            continue
        stats["python_constructions"] += 1
        if outcome.via and any(step.startswith("factory:") for step in outcome.via):
            stats["python_via_factory"] += 1
        built, problems = _definitions(outcome, roles, _kept_in(outcome.root) in with_exemplars)
        records.extend(built)
        diagnostics.extend(problems)
    stats["python_factories_used"] = len(entered)
    silent = _silent_files(modules, facts, resolver, conventions, entered,
                           {r.path for r in records} | {d.path for d in diagnostics})
    stats["python_files_metric_classes_without_records"] = len(silent)
    diagnostics.extend(silent)
    unmodeled = _unmodeled_libraries(modules, facts, conventions)
    if unmodeled:
        stats["python_files_unmodeled_metric_libraries"] = len({d.path for d in unmodeled})
    diagnostics.extend(unmodeled)
    for path, line, key in sorted(expander.cut):
        diagnostics.append(Diagnostic(path, line, "metric-factory-too-deep",
                                      f"not followed past {key}: factories more than {MAX_DEPTH} deep",
                                      Severity.INFO))
    by_path = {module.path: (module, facts[name]) for name, module in modules.items()}
    for path, (_module, module_facts) in sorted(by_path.items()):
        if module_facts.exposition_compared:
            stats["python_exposition_lines_compared"] += module_facts.exposition_compared
        for text in module_facts.exposition:
            stats["python_exposition_lines"] += 1
            if text.name:
                records.append(exposition_record(path, Language.PYTHON.value, text))
                continue
            stats["python_exposition_unresolved"] += 1
            diagnostics.append(Diagnostic(
                path, text.line, "metric-name-unresolved",
                f"hand-written Prometheus text: the # TYPE line is computed ({text.written!r} in the f-string), "
                "its name and type are not read", Severity.INFO))
    library_records, library_stats = provided_records(modules, facts, resolver, conventions)
    records.extend(library_records)
    stats.update(library_stats)
    stats["library_metrics"] = len(library_records)
    return records, diagnostics, stats


def _silent_files(modules: dict[str, Module], facts: dict[str, MetricFacts], resolver: PythonResolver,
                  conventions: Conventions, entered: set[str], said: set[str]) -> list[Diagnostic]:
    """No silent zero: a file that calls a metric class or passes one on, yet has no metric
    record, no diagnostic, and no factory a call site reached, is said, with what it used.

    Only calls and arguments count (``Counter(...)``, ``make(Gauge)``): a file that imports
    ``prometheus_client`` for ``start_http_server`` or ``REGISTRY``, re-exports a class, or names
    one in an annotation defines no metric and is not reported."""
    out: list[Diagnostic] = []
    # a factory reached from call sites: its file's constructors are recorded at those call sites
    reached = {owner[0].name for key in entered
               for owner in (resolver.signatures[key] if key in resolver.signatures else resolver.classes[key],)}
    for name, module in sorted(modules.items(), key=lambda item: item[1].path):
        if module.path in said or name in reached:
            continue
        library: list[tuple[str, int]] = []  # (constructor, line)
        unresolved: list[tuple[str, int]] = []  # constructor-shaped calls on an unknown object
        for use in facts[name].class_uses:
            target = resolver.resolve(use.name, module)
            if target in conventions.constructors:
                library.append((target, use.line))
            elif use.shaped and target not in resolver.classes and target not in resolver.signatures:
                unresolved.append((use.name, use.line))
        if not (library or unresolved):
            continue
        parts = []
        if library:
            parts.append(f"uses {_listed(library)}")
        if unresolved:
            parts.append(f"calls {_listed(unresolved)} like constructors, on an object not resolved to a metric library")
        line = min(line for _, line in library + unresolved)
        out.append(Diagnostic(module.path, line, "metric-classes-without-records",
                              f"{'; '.join(parts)}; but no metric definition came out of this file: no call "
                              "gives them a name through a shape archdiff follows", Severity.WARNING))
    return out


def _unmodeled_libraries(modules: dict[str, Module], facts: dict[str, MetricFacts],
                         conventions: Conventions) -> list[Diagnostic]:
    """A file that imports a library exposing metrics archdiff does not model (libraries.yaml's
    ``unmodeled``: starlette_exporter's middleware, py-grpc-prometheus's interceptors): said once
    per file and library, at its first import there, so that the evidence's missing series are
    said, not silent. A file of the library itself (a copy kept in the system's tree, a module path
    with the library's module among its parts) does not use it."""
    out = []
    for name, module in modules.items():
        own = set(name.split("."))
        for found in facts[name].unmodeled:
            if found.module in own:
                continue
            out.append(unmodeled_library(module.path, found.line, *conventions.unmodeled[found.module]))
    return sorted(out)


def _listed(uses: list[tuple[str, int]]) -> str:
    shown = ", ".join(f"{name} (line {line})" for name, line in uses[:5])
    return shown + (f" and {len(uses) - 5} more" if len(uses) > 5 else "")


def _exemplar_objects(modules: dict[str, Module], facts: dict[str, MetricFacts],
                      resolver: PythonResolver) -> set[str]:
    """Qualified names of the metric objects the code observes with exemplars."""
    found: set[str] = set()
    for name, module in modules.items():
        for use in facts[name].exemplars:
            text = use.object
            if text.startswith("self.") and use.class_name:
                found.add(f"{name}.{use.class_name}.{text[5:]}")
            else:
                found.add(resolver.resolve(text, module) or f"{name}.{text}")
    return found


def _kept_in(root: Call) -> str:
    """Where the call's result is kept: ``module.NAME`` or ``module.Class.attr``."""
    target = root.fact.target
    if not target:
        return ""
    if target.startswith("self."):
        return f"{root.module.name}.{root.fact.class_name}.{target[5:]}"
    return f"{root.module.name}.{target}"


def _reached(root: Call, opened: set[tuple[str, str]], entered: set[str]) -> bool:
    """Whether the factory ``root`` sits in (its function, or its class for ``self`` values and
    ``__init__``) is reached from some call site."""
    module, cls, function = root.module.name, root.fact.class_name, root.fact.function
    keys = set()
    if any(tag == "param" for tag, _ in opened) and function:
        keys.add(f"{module}.{function}")
        if cls and function == f"{cls}.__init__":
            keys.add(f"{module}.{cls}")
    if any(tag == "attr" for tag, _ in opened) and cls:
        keys.add(f"{module}.{cls}")
    return bool(keys & entered)


def _first(sym: Any) -> tuple[str, bool]:
    values = pysym.strings(sym) if sym is not None else []
    if not values:
        return "", False
    text, dynamic, _ = values[0]
    return text, dynamic


def _definitions(outcome: Outcome, roles: dict[str, Any],
                 exemplars: bool) -> tuple[list[MetricDefinition], list[Diagnostic]]:
    constructor = outcome.constructor
    root = outcome.root
    path, line = root.module.path, root.line
    via = " > ".join(outcome.via)
    written = _written(roles.get("kind"))
    kind = constructor.type_of(written)
    if kind is None:
        given = " | ".join(written) or "no kind argument"
        known = "/".join(name for name, _ in constructor.kinds)
        return [], [Diagnostic(path, line, "metric-type-unresolved",
                               f"{constructor.library} metric's kind is none of {known} as written: "
                               f"the code gives {given}", Severity.INFO)]
    names = pysym.strings(roles["name"]) if roles.get("name") is not None else []
    usable = [(t, d, w) for t, d, w in names if _literal_part(t)]
    if not usable:
        why = "; ".join(sorted({w for _, _, w in names if w})) or "no name argument"
        chain = f" (via {via})" if "factory:" in via else ""
        return [], [Diagnostic(path, line, "metric-name-unresolved",
                               f"{kind.value} name is not a string the code gives{chain}: {why}", Severity.INFO)]
    helps = [t for t, d, _ in pysym.strings(roles["help"])] if roles.get("help") is not None else []
    labels, labels_resolved, labels_why = _labels(roles.get("labels"))
    if constructor.labels_at_use:
        labels_resolved, labels_why = False, f"labels: {constructor.labels_at_use}"
    buckets, buckets_resolved, buckets_why = _buckets(kind, roles.get("buckets"), constructor)
    if constructor.buckets_at_use and kind is MetricType.HISTOGRAM:
        buckets, buckets_resolved, buckets_why = (), False, f"buckets: {constructor.buckets_at_use}"
    namespace, ns_dynamic = _first(roles.get("namespace"))
    subsystem, sub_dynamic = _first(roles.get("subsystem"))
    unit, _ = _first(roles.get("unit"))
    out: list[MetricDefinition] = []
    for index, (raw_name, dynamic, why) in enumerate(usable):
        if constructor.naming == "opentelemetry":
            unit_word = conventions().otel_unit(unit) if unit else ""
            full = build_otel_name(kind, raw_name, unit_word)
        elif constructor.naming in ("prometheus_client", "collector"):
            # a metric family strips a counter's _total and appends its unit as a metric does
            full = build_python_name(kind, raw_name, namespace, subsystem, unit)
        else:
            full = raw_name
        help_text = helps[index] if len(helps) == len(usable) else (helps[0] if helps else "")
        reasons = [r for r in (why, labels_why, buckets_why) if r]
        out.append(MetricDefinition(
            path=path, line=line, name=full, type=kind, help=help_text,
            labels=tuple(labels), buckets=buckets, unit=unit,
            language=Language.PYTHON.value, dynamic=dynamic or ns_dynamic or sub_dynamic,
            exposed_names=expose_names(kind, full, constructor.naming),
            lint=lint_name(full, kind, constructor.naming, unit),
            labels_resolved=labels_resolved, buckets_resolved=buckets_resolved,
            library=constructor.library, via=via, unresolved="; ".join(reasons), exemplars=exemplars,
        ))
    return out, []


def _written(sym: Any) -> list[str]:
    """The values ``sym`` can be, each as the code writes it (`pb_utils.MetricFamily.COUNTER`)."""
    sym = pysym.unwrap(sym)
    if not isinstance(sym, list) or not sym:
        return []
    if sym[0] == "alt":
        return sorted({text for value in sym[1] for text in _written(value)})
    if sym[0] in ("lit", "unk") and isinstance(sym[1], str):
        return [sym[1]]
    return [pysym.describe(sym)]


def _literal_part(text: str) -> bool:
    return bool(re.sub(r"\{[^}]*\}", "", text))


def _labels(sym: Any) -> tuple[list[str], bool, str]:
    if sym is None:
        return [], True, ""
    elements = pysym.items(sym)
    if elements is None:
        # `universal_labels + ["idx"]` (JetStream): the names of the parts that are known, and the rest said
        known = _known_items(sym)
        return _labels(["seq", known])[0] if known else [], False, f"labels: {pysym.describe(sym)}"
    labels: list[str] = []
    resolved = True
    for element in elements:
        values = pysym.strings(element)
        if len(values) == 1 and not values[0][1]:
            labels.append(values[0][0])
        else:
            resolved = False
    return labels, resolved, "" if resolved else "labels: some label names are computed"


def _known_items(sym: Any) -> list[Any]:
    """The elements of the parts of a sum of sequences that can be known (``a + ["idx"]``: ``"idx"``)."""
    sym = pysym.unwrap(sym)
    if isinstance(sym, list) and sym[:1] == ["add"]:
        return [item for part in sym[1:] for item in (pysym.items(part) or _known_items(part))]
    return []


def _buckets(kind: MetricType, sym: Any, constructor) -> tuple[tuple[float, ...], bool, str]:
    if kind is not MetricType.HISTOGRAM:
        return (), True, ""
    if sym is None or (isinstance(sym, list) and sym[:2] == ["lit", None]):
        default = constructor.default_buckets
        values = prometheus_default_buckets() if default is None else default
        # +Inf is implicit (the libraries always add it) and JSON cannot hold it: left out.
        return tuple(b for b in values if b != float("inf")), True, ""
    elements = pysym.items(sym)
    numbers = [pysym.number(e) for e in elements] if elements is not None else None
    known = [n for n in numbers if n is not None] if numbers is not None else []
    if numbers is None or len(known) < len(numbers):
        return (), False, f"buckets: {pysym.describe(sym)}"
    values = tuple(n for n in known if n != float("inf"))
    if _chosen_at_run_time(sym):
        # `custom if custom is not None else DEFAULT`: the last known alternative's values, and the choice said
        return values, False, f"buckets: one of {_alternatives(sym)}, chosen at run time (the last known shown)"
    return values, True, ""


def _alternatives(sym: Any) -> str:
    """The values an alternative ``sym`` can be, as a user reads them: numbers where known."""
    texts = []
    for value in pysym.unwrap(sym)[1]:
        elements = pysym.items(value)
        numbers = [pysym.number(e) for e in elements] if elements else None
        texts.append(f"[{', '.join('+Inf' if n == float('inf') else str(n) for n in numbers)}]"
                     if numbers and None not in numbers
                     else pysym.describe(value))
    return " | ".join(dict.fromkeys(texts))


def _chosen_at_run_time(sym: Any) -> bool:
    """Whether ``sym`` is one of several values (a conditional expression, `a or b`, assignments in
    branches) that differ or cannot all be known: the run decides which one the metric gets."""
    sym = pysym.unwrap(sym)
    if not (isinstance(sym, list) and sym[:1] == ["alt"]):
        return False
    values = [pysym.items(value) for value in sym[1] if pysym.unwrap(value) != ["lit", None]]
    return any(v is None for v in values) or len({repr(v) for v in values if v}) > 1
