"""Per-file scanner for Prometheus metrics defined with Go's ``prometheus/client_golang`` (or Kubernetes'
``k8s.io/component-base/metrics`` wrappers of it, whose help carries the stability level), and for
OpenTelemetry instruments (``go.opentelemetry.io/otel/metric``) that a Prometheus exporter writes.

Read from the syntax tree: calls of ``New{Counter,Gauge,Histogram,Summary}[Vec|Func]`` on the
``prometheus`` package, on ``promauto``, or on a factory (``promauto.With(reg).NewCounterVec(...)``,
``f := promauto.With(reg); f.NewGauge(...)``), whose first argument is an options literal
(``prometheus.CounterOpts{Namespace: ..., Subsystem: ..., Name: ..., Help: ..., Buckets: ...}``)
and, for vectors, a ``[]string{...}`` of label names. The packages are recognised by import path
(whatever the local alias). Option values may be string literals, constants of the file (kept in
``constants`` for the extract step, which also resolves constants of other files of the package)
or ``prometheus.DefBuckets``/``LinearBuckets``/``ExponentialBuckets`` for buckets.

A label list may also be a local of the function (``labelNames := []string{...}`` before the call).
A function of the package whose metric takes its name, help, namespace, subsystem or label list from
its own parameters (Seldon Core's ``createCounterVec(counterName, helperName string, labelNames
[]string)``) is a factory: the file's calls of plain function names are kept with their arguments
(:class:`GoCall`), and the extract step makes one metric at each call of a factory of the same
package, its arguments in place of the parameters. Package-level variables of bucket numbers are
kept for the histograms of the package's other files.

OpenTelemetry (otel/metric 1.x ``meter.go``): a Meter's ``{Int64,Float64}{Counter,UpDownCounter,
Histogram,Gauge}`` and their ``Observable`` forms, in a file that imports an ``go.opentelemetry.io/otel``
package (the Meter may come from anywhere: ``otel.Meter(..)``, a provider, a struct field); the name is
the first argument, the options ``metric.WithDescription``, ``metric.WithUnit`` and
``metric.WithExplicitBucketBoundaries``. Attributes come with each measurement, so labels are not read.
"""

from __future__ import annotations

import re
from typing import Any

from extractor.go.parse import capture_nodes, descendants
from extractor.model import ParsedFile
from extractor.telemetry.libraries import conventions
from extractor.telemetry.native_facts import (GoArgument, GoCall, LabelSet, MetricBuckets, MetricText, NativeMetric,
                                              NativeMetricFacts)

PROMETHEUS = "github.com/prometheus/client_golang/prometheus"
PROMAUTO = "github.com/prometheus/client_golang/prometheus/promauto"
# Kubernetes' wrappers over client_golang (k8s.io/component-base/metrics opts.go): the same options and
# constructors, the options passed by pointer, a StabilityLevel written into the help (below)
COMPONENT_BASE = "k8s.io/component-base/metrics"
_CONSTRUCTOR = re.compile(r"New(Counter|Gauge|Histogram|Summary)(Vec|Func)?")
# a custom collector's metrics (prometheus/value.go, histogram.go, summary.go): the type is the
# value type argument of a const metric, or the function's own
_CONST_METRIC = {"NewConstMetric": "", "MustNewConstMetric": "", "NewConstMetricWithCreatedTimestamp": "",
                 "MustNewConstMetricWithCreatedTimestamp": "", "NewConstHistogram": "histogram",
                 "MustNewConstHistogram": "histogram", "NewConstHistogramWithCreatedTimestamp": "histogram",
                 "MustNewConstHistogramWithCreatedTimestamp": "histogram", "NewConstSummary": "summary",
                 "MustNewConstSummary": "summary", "NewConstSummaryWithCreatedTimestamp": "summary",
                 "MustNewConstSummaryWithCreatedTimestamp": "summary"}
_VALUE_TYPE = {"CounterValue": "counter", "GaugeValue": "gauge"}
_MAX_TEXT = 120
OTEL = b"go.opentelemetry.io/otel"
OTEL_METRIC = "go.opentelemetry.io/otel/metric"
# otel/metric 1.x Meter methods and the type the Prometheus exporter writes for each (a monotonic
# sum is a counter, an up-down one a gauge)
_INSTRUMENT = re.compile(r"(?:Int64|Float64)(Observable)?(Counter|UpDownCounter|Histogram|Gauge)")
_INSTRUMENT_TYPE = {"Counter": "counter", "UpDownCounter": "gauge", "Histogram": "histogram", "Gauge": "gauge"}
_OTEL_OPTIONS = {"WithDescription": "help", "WithUnit": "unit", "WithExplicitBucketBoundaries": "buckets"}


def scan_go_metrics(parsed: ParsedFile) -> NativeMetricFacts | None:
    data = parsed.data
    otel = OTEL in data
    unmodeled_paths = conventions().unmodeled_go
    if b"client_golang" not in data and b"component-base/metrics" not in data and b"const" not in data and not otel \
            and b"[]string{" not in data and not any(path.encode() in data for path in unmodeled_paths):
        return None
    root = parsed.tree.root_node
    aliases: dict[str, str] = {}
    imports: dict[str, str] = {}  # every import's local name -> import path (qualified constants)
    constants: dict[str, str] = {}
    variables: dict[str, str] = {}  # package-level `var`s set to a string literal
    slices: dict[str, Any] = {}  # package-level `var`s set to a slice literal or a buckets call (label sets, buckets)
    unmodeled: list[tuple[str, int]] = []  # imports of libraries whose series are not modeled, with their lines
    for node in root.named_children:
        if node.type == "import_declaration":
            for spec in descendants(node, "import_spec"):
                path = spec.child_by_field_name("path")
                name = spec.child_by_field_name("name")
                target = _text(path).strip('"`') if path is not None else ""
                local_name = _text(name) if name is not None else target.rsplit("/", 1)[-1]
                imports[local_name] = target
                if target in unmodeled_paths:
                    unmodeled.append((target, spec.start_point[0] + 1))
                if target in (PROMETHEUS, PROMAUTO, OTEL_METRIC, COMPONENT_BASE):
                    aliases[local_name] = target
        elif node.type in ("const_declaration", "var_declaration"):
            kept = constants if node.type == "const_declaration" else variables
            for spec in descendants(node, "const_spec" if node.type == "const_declaration" else "var_spec"):
                names = spec.children_by_field_name("name")
                value = spec.child_by_field_name("value")
                values = value.named_children if value is not None else []
                for n, v in zip(names, values):
                    if v.type in ("interpreted_string_literal", "raw_string_literal"):
                        kept[_text(n)] = _string(v)
                    elif node.type == "var_declaration" and v.type in ("composite_literal", "call_expression",
                                                                        "selector_expression"):
                        slices[_text(n)] = v
    # bucket numbers a package-level `var` holds, for a histogram of another file of the package
    bucket_vars = _bucket_vars(root, slices) if slices else {}
    if (variables and (aliases or otel)) or slices:
        # in a file that defines metrics, a package-level variable stands for its literal when the
        # file never assigns it (kubeai's `InferenceRequestsActiveMetricName = "kubeai.inference..."`,
        # llm-d's `modelLabels = []string{...}` and `tpotBuckets = []float64{...}`); a label set, for
        # the package's other files too
        assigned = {_text(n) for n in capture_nodes(root, "(assignment_statement left: (expression_list "
                                                          "[(identifier) @assigned (index_expression operand: "
                                                          "(identifier) @assigned)]))").get("assigned", ())}
        if aliases or otel:
            constants.update((name, value) for name, value in variables.items() if name not in assigned)
        slices = {name: value for name, value in slices.items() if name not in assigned}
    label_sets = _label_sets(slices, constants)
    if not aliases and not otel:
        if not (constants or unmodeled or label_sets or bucket_vars):
            return None
        return NativeMetricFacts(constants=constants, unmodeled=tuple(unmodeled), label_sets=label_sets,
                                 bucket_vars=bucket_vars)
    prometheus = {a: t for a, t in aliases.items() if t != OTEL_METRIC}
    otel_metric = {a for a, t in aliases.items() if t == OTEL_METRIC}
    metrics = []
    descs: list[tuple[Any, list[Any]]] = []  # prometheus.NewDesc calls, with their arguments
    const_uses: list[tuple[str, list[Any]]] = []  # const metrics made from a Desc
    # the calls of a method or a package's function, in source order (a query, not a walk in Python)
    found = capture_nodes(root, "(call_expression function: (selector_expression)) @call").get("call", ())
    for call in sorted(found, key=lambda n: (n.start_byte, -n.end_byte)):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "selector_expression":
            continue
        field = fn.child_by_field_name("field")
        args = call.child_by_field_name("arguments")
        arg_nodes = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        instrument = _INSTRUMENT.fullmatch(_text(field)) if otel and field is not None else None
        if instrument is not None and arg_nodes:
            metrics.append(_instrument(call, instrument, arg_nodes, otel_metric, constants))
            continue
        if field is not None and _text(field) == "NewDesc" and len(arg_nodes) >= 2 \
                and _is_prometheus(fn.child_by_field_name("operand"), prometheus, call):
            descs.append((call, arg_nodes))
            continue
        if field is not None and arg_nodes and _text(field) in _CONST_METRIC:
            const_uses.append((_text(field), arg_nodes))
            continue
        m = _CONSTRUCTOR.fullmatch(_text(field)) if field is not None else None
        if m is None or not _is_prometheus(fn.child_by_field_name("operand"), prometheus, call):
            continue
        if not arg_nodes:
            continue
        # keyword arguments of the NativeMetric: the options literal's fields, then the label list
        operand = fn.child_by_field_name("operand")
        kube = operand is not None and prometheus.get(_text(operand)) == COMPONENT_BASE
        entry: dict[str, Any] = {"library": "component-base" if kube else "client_golang", "type": m.group(1).lower(),
                                 "line": call.start_point[0] + 1, "func": m.group(2) == "Func"}
        entry.update(_opts(arg_nodes[0], constants, slices))
        if kube:
            entry["help"] = _stability_help(entry.get("help"), entry.pop("stability", None))
        if m.group(2) == "Vec" and len(arg_nodes) > 1:
            entry.update(_labels(arg_nodes[1], constants, {**slices, **_local_slices(call)}))
        metrics.append(NativeMetric(**entry, **_factory_of(call, entry)))
    if descs:
        metrics.extend(_descs(descs, _value_types(const_uses), constants, slices))
        metrics.sort(key=lambda metric: metric.line)
    calls = _plain_calls(root, constants, slices) if prometheus else ()
    if not (metrics or constants or unmodeled or label_sets or bucket_vars):
        return None
    # the imports only matter where a metric may name another package's constant (`constants.Subsystem`)
    return NativeMetricFacts(tuple(metrics), constants, imports=imports if metrics else {}, unmodeled=tuple(unmodeled),
                             label_sets=label_sets, go_calls=calls, bucket_vars=bucket_vars)


def _label_sets(slices: dict[str, Any], constants: dict[str, str]) -> dict[str, LabelSet]:
    """The file's package-level `[]string{...}` variables whose names it reads (strings, constants,
    or names kept for the extract step): a metric of another file of the package may take one as its
    labels (`prometheus.NewCounterVec(opts, commonLabels)`)."""
    sets = {}
    for name, node in slices.items():
        kind = node.child_by_field_name("type") if node.type == "composite_literal" else None
        if kind is None or _text(kind) != "[]string":
            continue
        found = _labels(node, constants, slices)
        if found["labels"] is not None:
            sets[name] = LabelSet(found["labels"], found.get("label_refs", ()))
    return sets


# Go's builtin functions and conversions: never a metric factory of the package
_BUILTINS = frozenset({"append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
                       "min", "new", "panic", "print", "println", "real", "recover", "string", "float64", "int"})


def _bucket_vars(root: Any, slices: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    """Package-level `var`s of numbers (``DefaultHistogramBuckets = []float64{...}``) the file never assigns."""
    assigned = {_text(n) for n in capture_nodes(root, "(assignment_statement left: (expression_list "
                                                      "(identifier) @assigned))").get("assigned", ())}
    out = {}
    for name, node in slices.items():
        values = _buckets(node).values if name not in assigned else None
        if values is not None:
            out[name] = values
    return dict(sorted(out.items()))


def _enclosing_function(node: Any) -> Any:
    while node is not None and node.type not in ("function_declaration", "method_declaration", "func_literal",
                                                 "source_file"):
        node = node.parent
    return node if node is not None and node.type != "source_file" else None


def _local_slices(call: Any) -> dict[str, Any]:
    """Label lists the call's function holds in locals before it (``labelNames := []string{...}``,
    ``var labels = append(base, "code")``): the last declaration of each name before the call."""
    function = _enclosing_function(call)
    body = function.child_by_field_name("body") if function is not None else None
    if body is None:
        return {}
    out: dict[str, Any] = {}
    found = capture_nodes(body, "(short_var_declaration) @decl (var_spec) @decl").get("decl", ())
    for decl in sorted(found, key=lambda n: n.start_byte):
        if decl.start_byte >= call.start_byte:
            break
        left = decl.child_by_field_name("left") or decl.child_by_field_name("name")
        right = decl.child_by_field_name("right") or decl.child_by_field_name("value")
        names = [n for n in left.named_children] if left is not None and left.type == "expression_list" else [left]
        values = right.named_children if right is not None and right.type == "expression_list" else [right]
        for n, v in zip(names, values):
            if n is not None and v is not None and n.type == "identifier" and v.type in ("composite_literal",
                                                                                           "call_expression"):
                out[_text(n)] = v
    return out


def _parameters(function: Any) -> tuple[str, ...]:
    params = function.child_by_field_name("parameters")
    return tuple(_text(n) for p in (params.named_children if params is not None else ())
                 if p.type in ("parameter_declaration", "variadic_parameter_declaration")
                 for n in p.children_by_field_name("name"))


def _factory_of(call: Any, entry: dict[str, Any]) -> dict[str, Any]:
    """``factory`` and ``parameters`` when the metric's options read parameters of the plain function
    it is made in (``func createCounterVec(counterName, helperName string, labelNames []string)``):
    each call of that function makes one, with its arguments."""
    function = _enclosing_function(call)
    if function is None or function.type != "function_declaration" or function.child_by_field_name("name") is None:
        return {}
    params = _parameters(function)
    texts = [entry[k] for k in ("name", "help", "namespace", "subsystem") if isinstance(entry.get(k), MetricText)]
    if not any(t.value is None and t.constant in params for t in texts) and \
            not (entry.get("labels", ()) is None and entry.get("labels_text") in params):
        return {}
    return {"factory": _text(function.child_by_field_name("name")), "parameters": params}


def _is_label_list(node: Any, held: dict[str, Any], depth: int = 0) -> bool:
    """A `[]string{...}` literal, an `append` to one, or a variable holding either."""
    if node.type == "identifier":
        return _text(node) in held and depth < 4 and _is_label_list(held[_text(node)], held, depth + 1)
    if node.type == "composite_literal":
        kind = node.child_by_field_name("type")
        return kind is not None and re.sub(r"\s+", "", _text(kind)) == "[]string"
    if node.type == "call_expression" and _text(node.child_by_field_name("function")) == "append":
        args = node.child_by_field_name("arguments")
        first = next((a for a in args.named_children if a.type != "comment"), None) if args is not None else None
        return first is not None and depth < 4 and _is_label_list(first, held, depth + 1)
    return False


def _plain_calls(root: Any, constants: dict[str, str], slices: dict[str, Any]) -> tuple[GoCall, ...]:
    """Calls of plain function names with arguments (a factory of the package, perhaps), each argument
    read as a name and, when it is one, as a label list."""
    out = []
    found = capture_nodes(root, "(call_expression function: (identifier)) @call").get("call", ())
    for call in sorted(found, key=lambda n: n.start_byte):
        callee = _text(call.child_by_field_name("function"))
        args = call.child_by_field_name("arguments")
        arg_nodes = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if callee in _BUILTINS or not arg_nodes:
            continue
        local: dict[str, Any] | None = None
        arguments = []
        for arg in arg_nodes:
            read: dict[str, Any] = {}
            if arg.type in ("identifier", "composite_literal", "call_expression"):
                local = _local_slices(call) if local is None else local
                held = {**slices, **local}
                read = _labels(arg, constants, held) if _is_label_list(arg, held) else {}
                if read.get("labels") is None:
                    read = {}
            arguments.append(GoArgument(_value(arg, constants), **read))
        out.append(GoCall(callee, call.start_point[0] + 1, tuple(arguments)))
    return tuple(out)


def _labels(node: Any, constants: dict[str, str], slices: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The label names of a `[]string{"model", LabelPod, consts.Phase}` literal: strings and the
    constants of this file as values, other names kept (``label_refs``) for the extract step, which
    knows the package's and the imported packages' constants. A package-level variable of the file
    holding such a literal (``slices``) is read as it; ``append(modelLabels, "error_code")`` as the
    sum of its parts. Anything else: None (unread), with the list as written (``labels_text``)."""
    unread: dict[str, Any] = {"labels": None, "labels_text": _text(node)[:_MAX_TEXT]}
    if node.type == "identifier" and _text(node) in slices and depth < 4:
        found = _labels(slices[_text(node)], constants, slices, depth + 1)
        return found if found["labels"] is not None else unread
    if node.type == "call_expression" and _text(node.child_by_field_name("function")) == "append" and depth < 4:
        args = node.child_by_field_name("arguments")
        parts = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if not parts:
            return unread
        first = _labels(parts[0], constants, slices, depth + 1)
        if first["labels"] is None:
            return unread
        labels, refs = list(first["labels"]), list(first.get("label_refs", ()))
        for part in parts[1:]:
            if part.type == "variadic_argument":  # append(a, b...)
                inner: dict[str, Any] = _labels(part.named_children[0], constants, slices, depth + 1) \
                    if part.named_child_count else {"labels": None}
                if inner["labels"] is None:
                    return unread
                labels.extend(inner["labels"])
                refs.extend(inner.get("label_refs", ()))
                continue
            _read_label(part, constants, labels, refs)
        return {"labels": tuple(labels), "label_refs": tuple(refs)}
    if node.type != "composite_literal":
        return unread
    body = node.child_by_field_name("body")
    labels = []
    refs = []
    for elem in body.named_children if body is not None else ():
        value = elem.named_children[0] if elem.type == "literal_element" and elem.named_child_count else elem
        if value.type == "comment":
            continue
        _read_label(value, constants, labels, refs)
    return {"labels": tuple(labels), "label_refs": tuple(refs)}


def _read_label(node: Any, constants: dict[str, str], labels: list[str], refs: list[str]) -> None:
    """A label name's value into ``labels``, or what it is written as into ``refs`` when unknown."""
    text = _value(node, constants)
    if text.value is not None:
        labels.append(text.value)
    else:
        refs.append(text.constant or text.text or _text(node)[:_MAX_TEXT])


def _value_types(uses: list[tuple[str, list[Any]]]) -> dict[str, set[str]]:
    """The types each held Desc (by the last name of what holds it: ``c.desc`` -> ``desc``) is
    given by the file's ``NewConstMetric(desc, prometheus.GaugeValue, ...)``-style calls ("" for
    an UntypedValue or a value type that is not written as one)."""
    found: dict[str, set[str]] = {}
    for function, args in uses:
        kind = _CONST_METRIC[function]
        if not kind and len(args) > 1:
            kind = _VALUE_TYPE.get(_text(args[1]).rsplit(".", 1)[-1], "")
        found.setdefault(_text(args[0]).rsplit(".", 1)[-1], set()).add(kind)
    return found


def _descs(descs: list[tuple[Any, list[Any]]], types: dict[str, set[str]],
           constants: dict[str, str], slices: dict[str, Any]) -> list[NativeMetric]:
    """``prometheus.NewDesc(fqName, help, variableLabels, constLabels)`` of a custom collector, its
    type from the const metrics the file makes with it (:func:`_value_types`); a name built by
    ``prometheus.BuildFQName(namespace, subsystem, name)`` read as its three parts."""
    out = []
    for call, args in descs:
        entry: dict[str, Any] = {"library": "client_golang", "line": call.start_point[0] + 1, "opts": "Desc",
                                 "help": _value(args[1], constants)}
        kinds = types.get(_holder(call), set())
        entry["type"] = next(iter(kinds)) if len(kinds) == 1 else ""
        name = args[0]
        inner = name.child_by_field_name("function") if name.type == "call_expression" else None
        parts = name.child_by_field_name("arguments") if inner is not None else None
        values = [a for a in parts.named_children if a.type != "comment"] if parts is not None else []
        if inner is not None and _text(inner).endswith("BuildFQName") and len(values) == 3:
            entry.update(namespace=_value(values[0], constants), subsystem=_value(values[1], constants),
                         name=_value(values[2], constants))
        else:
            entry["name"] = _value(name, constants)
        if len(args) > 2:
            if _text(args[2]) == "nil":
                entry["labels"] = ()
            else:
                entry.update(_labels(args[2], constants, slices))
        if len(args) > 3 and args[3].type == "composite_literal":
            entry["const_labels"] = tuple(sorted(
                [_string(x) for x in descendants(args[3], "interpreted_string_literal")][::2]))
        out.append(NativeMetric(**entry))
    return out


def _holder(call: Any) -> str:
    """The last name of what keeps the call's value: a struct literal's key, a variable."""
    node = call.parent
    if node is not None and node.type == "literal_element":
        node = node.parent
    if node is not None and node.type == "keyed_element" and node.named_child_count:
        return _text(node.named_children[0]).strip().rsplit(".", 1)[-1]
    if node is not None and node.type == "expression_list":
        node = node.parent
    if node is not None and node.type in ("short_var_declaration", "assignment_statement", "var_spec"):
        left = node.child_by_field_name("left") or node.child_by_field_name("name")
        if left is not None:
            return _text(left).split(",")[0].strip().rsplit(".", 1)[-1]
    return ""


def _instrument(call: Any, m: re.Match[str], args: list[Any], options_package: set[str],
                constants: dict[str, str]) -> NativeMetric:
    """An OpenTelemetry instrument: ``meter.Float64Histogram("name", metric.WithUnit("s"), ...)``."""
    entry: dict[str, Any] = {"library": "otel-go", "type": _INSTRUMENT_TYPE[m.group(2)],
                             "line": call.start_point[0] + 1, "func": bool(m.group(1)), "labels": None,
                             "opts": m.group(2),  # the instrument: a Gauge of unit "1" is named a ratio
                             "name": _value(args[0], constants)}
    for option in args[1:]:
        fn = option.child_by_field_name("function") if option.type == "call_expression" else None
        if fn is None or fn.type != "selector_expression":
            continue
        package, name = _text(fn.child_by_field_name("operand")), _text(fn.child_by_field_name("field"))
        role = _OTEL_OPTIONS.get(name) if package in options_package else None
        inner = option.child_by_field_name("arguments")
        values = [a for a in inner.named_children if a.type != "comment"] if inner is not None else []
        if role == "buckets":
            entry["buckets"] = _buckets_of(values)
        elif role is not None and values:
            value = _value(values[0], constants)
            entry[role] = value if role == "help" else value.value if value.value is not None else value.text
    return NativeMetric(**entry)


def _buckets_of(values: list[Any]) -> MetricBuckets:
    """``WithExplicitBucketBoundaries(1, 2.5, 5)``: the numbers when every one is a literal."""
    try:
        return MetricBuckets(values=tuple(float(_text(v)) for v in values))
    except ValueError:
        return MetricBuckets(text=", ".join(_text(v) for v in values)[:_MAX_TEXT])


def _is_prometheus(operand: Any, aliases: dict[str, str], call: Any) -> bool:
    """`prometheus.`, `promauto.`, `promauto.With(reg).`, or a variable set from `promauto.With(...)`."""
    if operand is None:
        return False
    if operand.type == "identifier":
        name = _text(operand)
        if name in aliases:
            return True
        # a factory variable: `f := promauto.With(reg)` somewhere before in the same function
        body = call
        while body is not None and body.type not in ("function_declaration", "method_declaration", "source_file"):
            body = body.parent
        text = _text(body) if body is not None else ""
        return any(re.search(rf"\b{re.escape(name)}\s*:?=\s*{re.escape(a)}\.With\(", text) for a in aliases)
    if operand.type == "call_expression":
        inner = operand.child_by_field_name("function")
        return inner is not None and re.fullmatch(r"(\w+)\.With", _text(inner)) is not None and \
            _text(inner).split(".", 1)[0] in aliases
    return False


def _opts(node: Any, constants: dict[str, str], slices: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node.type == "unary_expression":  # &prometheus.CounterOpts{...}
        node = node.named_children[-1] if node.named_child_count else node
    if node.type != "composite_literal":
        out["opts_text"] = _text(node)[:_MAX_TEXT]
        return out
    body = node.child_by_field_name("body")
    for elem in body.named_children if body is not None else ():
        if elem.type != "keyed_element" or elem.named_child_count < 2:
            continue
        key = _text(elem.named_children[0]).strip()
        value = elem.named_children[1]
        if value.type == "literal_element" and value.named_child_count:
            value = value.named_children[0]
        if key in ("Namespace", "Subsystem", "Name", "Help"):
            out[key.lower()] = _value(value, constants)
        elif key == "Buckets":
            held = slices.get(_text(value)) if value.type == "identifier" else None
            buckets = _buckets(held) if held is not None else None
            read = buckets is not None and (buckets.values is not None or buckets.default)
            out["buckets"] = buckets if read else _buckets(value)
        elif key == "StabilityLevel":
            out["stability"] = _text(value)
        elif key == "ConstLabels":
            # `prometheus.Labels{"k": "v", ...}`: keys and values alternate in source order
            out["const_labels"] = tuple(sorted([_string(s) for s in descendants(value, "interpreted_string_literal")][::2]))
    return out


def _stability_help(help_text: MetricText | None, level: str | None) -> MetricText | None:
    """component-base writes the metric's stability into its help (``annotateStabilityLevel``: "[%v] %v"),
    ALPHA when the options give none (``StabilityLevel.setDefaults``)."""
    level = (level or "ALPHA").rsplit(".", 1)[-1]
    if not re.fullmatch(r"[A-Z]+", level):
        return help_text  # a level the code computes: the help as written
    if help_text is None:
        return MetricText(f"[{level}] ")
    if help_text.value is None:
        return help_text
    return MetricText(f"[{level}] {help_text.value}")


def _value(node: Any, constants: dict[str, str]) -> MetricText:
    if node.type in ("interpreted_string_literal", "raw_string_literal"):
        return MetricText(_string(node))
    text = _text(node)
    if node.type == "identifier" and text in constants:
        return MetricText(constants[text])
    if node.type == "binary_expression":  # "prefix_" + name
        parts = [_value(c, constants).value for c in node.named_children]
        if all(p is not None for p in parts):
            return MetricText("".join(p for p in parts if p is not None))
    # `Name` or `pkg.Name` (another package's, resolved through the file's imports): kept as written, as
    # a field's `s.name` must not take the value of a constant `name` of the package
    return MetricText(text=text[:_MAX_TEXT], constant=text if re.fullmatch(r"\w+(?:\.\w+)?", text) else "")


def _buckets(node: Any) -> MetricBuckets:
    if node.type == "composite_literal":  # read element by element: a comment may sit between the numbers
        body = node.child_by_field_name("body")
        elements = [e.named_children[0] if e.type == "literal_element" and e.named_child_count else e
                    for e in (body.named_children if body is not None else ()) if e.type != "comment"]
        try:
            return MetricBuckets(values=tuple(float(_text(e)) for e in elements))
        except ValueError:
            pass
    text = re.sub(r"\s+", "", _text(node))
    if text.endswith("DefBuckets"):
        return MetricBuckets(default=True)
    m = re.fullmatch(r"(?:\w+\.)?(Linear|Exponential)Buckets\(([-\d.e]+),([-\d.e]+),(\d+)\)", text)
    if m:
        start, factor, count = float(m.group(2)), float(m.group(3)), int(m.group(4))
        if m.group(1) == "Linear":
            return MetricBuckets(values=tuple(start + i * factor for i in range(count)))
        return MetricBuckets(values=tuple(start * factor ** i for i in range(count)))
    m = re.fullmatch(r"\[\]float64\{([^{}]*)\}", text)
    if m:
        try:
            return MetricBuckets(values=tuple(float(x) for x in m.group(1).split(",") if x))
        except ValueError:
            pass
    return MetricBuckets(text=text[:_MAX_TEXT])


def _string(node: Any) -> str:
    text = _text(node)
    if text.startswith("`"):
        return text.strip("`")
    return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")
