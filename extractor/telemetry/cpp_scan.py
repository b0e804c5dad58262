"""Per-file scanner for prometheus-cpp builder chains (tree-sitter syntax trees), and for the
metric families a Triton backend makes through Triton's C API (``TRITONSERVER_MetricFamilyNew``).

Only chains that start at ``BuildCounter()``/``BuildGauge()``/``BuildHistogram()``/``BuildSummary()``
(qualified ``prometheus::`` or bare where the file names prometheus, e.g. after
``using namespace prometheus``) are read: ``.Name(...)`` on any other builder (a protobuf message
builder, a model config) is not a metric. Names may be string literals, literal concatenations,
or constants defined in the file (``constexpr char kX[] = "..."``, ``const std::string kX("...")``,
``#define X "..."``); a constant from another file is left for the extract step to resolve.

A chain whose ``.Name(...)``/``.Help(...)``/``.Labels(...)`` reads a parameter of the function it
sits in makes that function a *helper* (a metric factory): the helper's parameter positions are
recorded, and so are the calls of this file that pass a name-like string literal, so the extract
step can bind any helper's call sites, whichever file they are in. Labels may be a map variable
(``std::map<std::string, std::string> labels = {{"k", "v"}}; ... .Labels(labels)``).

Prometheus text written by hand (a server's ``/metrics`` handler streaming string literals, with no
client library): every ``# TYPE <name> <type>`` line in a string literal (adjacent literals joined,
as the compiler joins them) is a metric family; its help is the ``# HELP <name> ...`` literal and
its label keys those of the literal that starts a sample of it (``name{key="``; ``name `` alone: no
labels; no sample written as a literal: the labels are unknown). A ``# TYPE`` literal that does not
hold both the name and the type (``"# TYPE prefix:" << item.name << " " << type``, ``"# TYPE %s
counter"``) is kept with what it says, so the run reports it unresolved rather than dropping it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import msgspec

from extractor.cpp.parse import file_nodes
from extractor.model import Language, ParsedFile
from extractor.native.macros import MacroDefinition, MacroUse
from extractor.telemetry.cpp_macros import macro_definitions, macro_uses
from extractor.telemetry.exposition import ExpositionLine
from extractor.telemetry.libraries import conventions

BUILDERS = {
    "BuildCounter": "counter",
    "BuildGauge": "gauge",
    "BuildHistogram": "histogram",
    "BuildSummary": "summary",
}

# Triton's C API (core's tritonserver.h): `TRITONSERVER_MetricFamilyNew(&family, kind, name,
# description)`, a backend's custom metrics; core registers the family with prometheus-cpp
TRITON_FAMILY_NEW = "TRITONSERVER_MetricFamilyNew"
TRITON_KINDS = {
    "TRITONSERVER_METRIC_KIND_COUNTER": "counter",
    "TRITONSERVER_METRIC_KIND_GAUGE": "gauge",
    "TRITONSERVER_METRIC_KIND_HISTOGRAM": "histogram",
}

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0", "r": "\r"}


# -- facts ---------------------------------------------------------------------------------------

class ArgumentValue(msgspec.Struct, frozen=True, omit_defaults=True):
    """The first argument of a chain's `.Name(...)` or `.Help(...)`."""

    value: str | None = None  # a literal, or a constant of this file; None when neither
    text: str = ""  # as written
    constant: str | None = None  # the identifier, when the argument is one (a constant or a parameter)
    # a concatenation with a constant of another file (`std::string(METRIC_PREFIX) + "_nodes"`,
    # `PREFIX "_nodes"`): its parts in order, ("lit", text) or ("const", identifier); a TensorFlow
    # metric's `absl::StrCat(...)` also ("expr", text), a value computed at run time
    parts: tuple[tuple[str, str], ...] = ()


class BuilderChain(msgspec.Struct, frozen=True, omit_defaults=True):
    """One `BuildX()...Register(...)` chain."""

    type: str  # "counter", "gauge", "histogram", "summary"
    line: int
    name: ArgumentValue | None = None  # None when the chain has no `.Name`
    help: ArgumentValue | None = None
    labels: tuple[str, ...] = ()  # `.Labels({{"k", "v"}})` keys, or those of a map variable of the file
    labels_variable: str = ""  # `.Labels(x)` with x no map of this file (a parameter, a member)
    registered: bool = False
    holder: str = ""  # the variable or member the family is stored in
    add_labels: tuple[str, ...] = ()  # label keys of `holder.Add({...})` calls
    buckets: tuple[float, ...] | None = None  # numbers of the first `holder.Add(labels, buckets)`


class HelperPositions(msgspec.Struct, frozen=True, omit_defaults=True):
    """Which parameters of a helper carry the metric's name, help and labels."""

    name: int
    help: int | None = None
    labels: int | None = None


class MetricHelper(msgspec.Struct, frozen=True):
    """A function whose chain takes the metric's name from one of its parameters."""

    function: str  # unqualified name
    params: int  # how many parameters it has
    positions: HelperPositions
    chain: BuilderChain


class LiteralCall(msgspec.Struct, frozen=True, array_like=True):
    """A call passing a name-like string literal: a possible call site of some file's helper."""

    callee: str  # unqualified
    line: int
    args: tuple[str | None, ...]  # each argument's literal value, None when it is no literal
    labels: tuple[tuple[str, ...] | None, ...]  # each argument's label keys, when it has some
    # label keys of `.Add({...})` on what the call returns (a helper's family), chained on it or
    # on the variable it is stored in, and the numbers of the first such `.Add(labels, buckets)`
    add_labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] | None = None


class TritonFamily(msgspec.Struct, frozen=True, omit_defaults=True):
    """A `TRITONSERVER_MetricFamilyNew(&family, kind, name, description)` call."""

    line: int
    kind_text: str  # the kind argument as written
    name: ArgumentValue
    help: ArgumentValue
    type: str = ""  # "counter", "gauge", "histogram"; "" when the kind is no TRITONSERVER_METRIC_KIND_*


class BvarVariable(msgspec.Struct, frozen=True, omit_defaults=True):
    """A brpc bvar given a name (``bvar::Adder<int> g_requests("requests")``, ``.expose("name")``)."""

    kind: str  # "Adder", "LatencyRecorder", ...; a MultiDimension's is its inner kind
    line: int
    name: ArgumentValue
    prefix: ArgumentValue | None = None  # `(prefix, name)`: exposed as prefix_name
    labels: tuple[str, ...] | None = None  # a MultiDimension's label names; None when not literals
    multi: bool = False  # a bvar::MultiDimension<...>


class YltArgument(msgspec.Struct, frozen=True, omit_defaults=True):
    """An argument after a yalantinglibs metric's name and help, as far as the file says what it holds."""

    text: str  # as written
    numbers: tuple[float, ...] | None = None  # `{100, 500}`, or a constant of the file holding them: bounds
    strings: tuple[str, ...] | None = None  # `{"transport"}`, or such a constant: label names
    keys: tuple[str, ...] | None = None  # `{{"role", "master"}}`: a static label map's names


class YltMetric(msgspec.Struct, frozen=True, omit_defaults=True):
    """A yalantinglibs metric object (``ylt::metric::counter_t c("name", "help")``, a member's braced
    arguments, ``std::make_shared<ylt::metric::histogram_t>(...)``); a class member declared with a
    ylt metric type and no arguments (``member``, no ``name``), which a constructor names; or a
    constructor's initializer of a member (``member``, ``kind`` ""), whose type the class declares,
    maybe in another file."""

    kind: str  # the type's own name as written: "counter_t", "basic_dynamic_histogram", "hybrid_counter_1t"
    line: int
    member: str = ""  # "Class::member"
    name: ArgumentValue | None = None
    help: ArgumentValue | None = None
    rest: tuple[YltArgument, ...] = ()


class TfMonitoringMetric(msgspec.Struct, frozen=True, omit_defaults=True):
    """A TensorFlow monitoring metric (``monitoring::Counter<1>::New("/a/b", "help", "label")``,
    ``Sampler<1>::New({"/a/b", "help", "label"}, monitoring::Buckets::Exponential(1, 2, 14))``)."""

    kind: str  # "Counter", "Gauge", "Sampler", "PercentileSampler"
    line: int
    name: ArgumentValue
    help: ArgumentValue | None = None
    labels: tuple[ArgumentValue, ...] = ()
    buckets: tuple[float, ...] | None = None  # a Sampler's bounds as TensorFlow computes them, DBL_MAX left out
    buckets_text: str = ""  # a Sampler's buckets argument as written


class CppMetricFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one C/C++/CUDA file says about prometheus-cpp metrics."""

    metrics: tuple[BuilderChain, ...] = ()
    helpers: tuple[MetricHelper, ...] = ()
    calls: tuple[LiteralCall, ...] = ()
    constants: dict[str, str] = {}  # string constants of the file by unqualified name, sorted
    # includes of libraries whose metrics archdiff does not read: (include prefix, line of the first)
    unmodeled: tuple[tuple[str, int], ...] = ()
    # the file's `#include "..."` paths, when a chain's name or help names a constant it does not
    # define (its includes may: extractor.telemetry.cpp_records)
    includes: tuple[str, ...] = ()
    exposition: tuple[ExpositionLine, ...] = ()  # hand-written Prometheus text
    triton: tuple[TritonFamily, ...] = ()  # metric families made through Triton's C API
    # function-like macros the file defines, and calls at line starts at namespace scope (uses of
    # some file's macros): extractor.telemetry.cpp_macros
    macros: tuple[MacroDefinition, ...] = ()
    macro_uses: tuple[MacroUse, ...] = ()
    bvars: tuple[BvarVariable, ...] = ()  # brpc's bvar variables (exposed through brpc's /brpc_metrics)
    ylt: tuple[YltMetric, ...] = ()  # yalantinglibs metrics, members and their initializers
    tf: tuple[TfMonitoringMetric, ...] = ()  # TensorFlow monitoring metrics (tensorflow/core/lib/monitoring)


_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


# -- scanning ------------------------------------------------------------------------------------


@functools.cache  # per process
def _unmodeled_includes() -> re.Pattern[bytes] | None:
    """An #include of a library whose metrics this scanner does not read (libraries.yaml's ``unmodeled``)."""
    prefixes = sorted(conventions().unmodeled_includes)
    if not prefixes:
        return None
    return re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"](' + b"|".join(re.escape(p.encode()) for p in prefixes) + rb")",
                      re.M)


def _unmodeled(data: bytes) -> tuple[tuple[str, int], ...]:
    pattern = _unmodeled_includes()
    found = pattern.search(data) if pattern is not None and b"include" in data else None
    return ((found.group(1).decode(), data.count(b"\n", 0, found.start(1)) + 1),) if found is not None else ()


def scan_cpp_metrics(parsed: ParsedFile) -> CppMetricFacts | None:
    data = parsed.data
    exposition = _exposition(data) if b"# TYPE " in data else ()
    facts = _scan_builders(parsed)
    if not exposition:
        return facts
    return msgspec.structs.replace(facts if facts is not None else CppMetricFacts(), exposition=exposition)


def scan_expansion(text: str, language: Language) -> CppMetricFacts | None:
    """What macros' uses written out (:mod:`.cpp_macros`) define: the builder chains and helper
    calls of ``text``, one use a line."""
    data = text.encode()
    return _scan_builders(ParsedFile(language, data, None), expansion=True)


_LINE_START_CALL = re.compile(rb"^[ \t]*[A-Z]\w*[ \t]*\(", re.M)
_FUNCTION_MACRO = re.compile(rb"#[ \t]*define[ \t]+\w+\(")


def _scan_builders(parsed: ParsedFile, expansion: bool = False) -> CppMetricFacts | None:
    data = parsed.data
    builds = b"Build" in data  # no builder chain without it: `BuildCounter`, `prometheus::BuildGauge`
    names_prometheus = b"prometheus" in data
    names_metric = b"metric" in data.lower()
    names_bvar = b"bvar" in data
    names_tf = b"monitoring" in data
    if not (builds or names_prometheus or names_metric or names_bvar or names_tf or expansion):
        return None
    unmodeled = _unmodeled(data) if names_metric and not expansion else ()
    macros: tuple[MacroDefinition, ...] = ()
    uses: tuple[MacroUse, ...] = ()
    if not expansion:
        text = parsed.text
        macros = macro_definitions(text) if _FUNCTION_MACRO.search(data) else ()
        uses = macro_uses(text) if _LINE_START_CALL.search(data) else ()
    tree = parsed.tree
    if tree is None:
        from extractor.cpp.parse import parse_source

        tree = parse_source(data, parsed.language)
    # The nodes come from the query every C/C++ scanner shares (extractor.cpp.parse.file_nodes):
    # six walks in Python over every node of the tree, one per kind read here, cost twice the
    # parse on Triton's core.
    found = file_nodes(tree, parsed.language)
    inits = _in_tree_order(found.get("init", ()))
    constants = _read_constants(_in_tree_order(found.get("define", ())), inits)
    maps = _read_label_maps(inits)
    metrics: list[BuilderChain] = []
    helpers: list[MetricHelper] = []
    # the calls that name a function (all a builder or an `.Add` can be), for builder chains and
    # their `.Add` calls: only in files that name a builder
    literal_calls = _in_tree_order(found.get("literal_call", ()))
    all_calls = _in_tree_order(fn.parent for fn in found.get("callee", ())) if builds or literal_calls else []
    chains = [(call, builder) for call in all_calls if (builder := _builder_kind(call, names_prometheus))]
    adds = _read_adds(all_calls) if chains or literal_calls else {}
    if chains:
        for call, builder in chains:
            chain = _read_chain(call, builder, constants, adds, maps)
            helper = _helper(call, chain)
            if helper is not None:
                helpers.append(helper)
            else:
                metrics.append(chain)
    calls = _literal_calls(literal_calls, maps, adds)
    triton = _triton_families(found, constants) if TRITON_FAMILY_NEW.encode() in data else ()
    bvars = _bvar_variables(found, constants, b"using namespace bvar" in data) if names_bvar else ()
    ylt = _ylt_metrics(found, constants, inits, b"using namespace ylt::metric" in data) \
        if names_metric and not expansion else ()
    tf = _tf_monitoring(found, constants, _TF_MONITORING_INCLUDE.search(data) is not None) \
        if names_tf and not expansion else ()
    kept = constants if constants and (names_prometheus or names_metric or bvars or tf) else {}
    if not (metrics or helpers or calls or kept or unmodeled or triton or macros or uses or bvars or ylt or tf):
        return None
    elsewhere = any(a is not None and a.value is None and (a.parts or a.constant)
                    for a in [a for chain in metrics for a in (chain.name, chain.help)]
                    + [a for family in triton for a in (family.name, family.help)]
                    + [a for b in bvars for a in (b.name, b.prefix)] + [a for m in ylt for a in (m.name, m.help)]
                    + [a for m in tf for a in (m.name, m.help, *m.labels)])
    # a macro the system defines in several ways: the one an include gives (cpp_records)
    includes = tuple(m.group(1).decode("utf-8", "replace") for m in _QUOTED_INCLUDE.finditer(data)) \
        if elsewhere or uses else ()
    return CppMetricFacts(tuple(metrics), tuple(helpers), tuple(calls), kept, unmodeled, includes, triton=triton,
                          macros=macros, macro_uses=uses, bvars=bvars, ylt=ylt, tf=tf)


# -- TensorFlow monitoring (tensorflow/core/lib/monitoring, tsl/lib/monitoring) ----------------------

# `monitoring::Counter<1>::New`, `tensorflow::monitoring::Gauge<std::string, 2>::New`, `tsl::monitoring::...`;
# bare (`Counter<1>::New`) only in a file that includes one of the library's headers
_TF_METRIC = re.compile(r"^(?:::)?(?:(?:tensorflow|tsl|xla)::)?(monitoring::)?(Counter|Gauge|Sampler|PercentileSampler)"
                        r"<.*>::New$")
_TF_MONITORING_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"][^>"\n]*/monitoring/'
                                    rb'(?:counter|gauge|sampler|percentile_sampler)\.h[>"]', re.M)


def _tf_monitoring(found: dict[str, list[Any]], constants: dict[str, str],
                   includes_library: bool) -> tuple[TfMonitoringMetric, ...]:
    """The file's ``monitoring::<Kind><...>::New(...)`` calls: the metric definition's name, help and
    label names come as the first arguments (a Counter, a Gauge) or as a braced list first (a Sampler,
    whose buckets come next)."""
    out: list[TfMonitoringMetric] = []
    for callee in _in_tree_order(found.get("callee", ())):
        if callee.type != "qualified_identifier":
            continue
        match = _TF_METRIC.match(_text(callee).replace(" ", "").replace("\n", ""))
        if match is None or not (match.group(1) or includes_library):
            continue
        arguments = callee.parent.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]
        rest: list[Any] = []
        if args and args[0].type == "initializer_list":
            rest = args[1:]
            args = [a for a in args[0].named_children if a.type != "comment"]
        if not args:
            continue
        kind = match.group(2)
        buckets: tuple[float, ...] | None = None
        buckets_text = ""
        if kind == "Sampler" and rest:
            buckets_text = _text(rest[0])
            buckets = _tf_buckets(rest[0])
        out.append(TfMonitoringMetric(kind, callee.start_point[0] + 1, _tf_name(args[0], constants),
                                      _value(args[1], constants) if len(args) > 1 else None,
                                      tuple(_value(a, constants) for a in args[2:]), buckets, buckets_text))
    return tuple(out)


def _tf_name(node, constants: dict[str, str]) -> ArgumentValue:
    """A metric's name: a literal or constant; a concatenation; or ``absl::StrCat(...)`` of pieces,
    each a literal, a constant ("const") or an expression the file computes ("expr")."""
    value = _value(node, constants)
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    if value.value is not None or value.parts or function is None \
            or _text(function).replace(" ", "").rpartition("::")[2] != "StrCat":
        return value
    arguments = node.child_by_field_name("arguments")
    parts: list[tuple[str, str]] = []
    for arg in (arguments.named_children if arguments is not None else []):
        if arg.type == "comment":
            continue
        literal = _literal(arg)
        if literal is not None:
            parts.append(("lit", literal))
        elif arg.type in ("identifier", "qualified_identifier"):
            identifier = _text(arg).split("::")[-1].strip()
            known = constants.get(identifier)
            parts.append(("lit", known) if known is not None else ("const", identifier))
        else:
            parts.append(("expr", " ".join(_text(arg).split())))
    return ArgumentValue(None, value.text, parts=tuple(parts))


def _tf_buckets(node) -> tuple[float, ...] | None:
    """A Sampler's bucket limits as ``monitoring::Buckets`` computes them (tensorflow/core/lib/monitoring/
    sampler.cc): ``Exponential(scale, growth, count)`` is ``scale * growth**i`` for i below count, each
    multiplied in turn as the library does; ``Explicit({...})`` the numbers given. The library appends
    DBL_MAX, the exporter's ``+Inf``, left out here as every bucket list of the evidence leaves it."""
    if node.type != "call_expression":
        return None
    function = _text(node.child_by_field_name("function")).replace(" ", "").rpartition("::")[2]
    arguments = node.child_by_field_name("arguments")
    args = [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]
    if function == "Explicit" and len(args) == 1:
        numbers = _numbers(args[0])
        return tuple(n for n in numbers if n < 1.7976931348623157e308) if numbers is not None else None
    if function != "Exponential" or len(args) != 3:
        return None
    try:
        scale, growth = (float(_text(a).replace("'", "").rstrip("fFlL")) for a in args[:2])
        count = int(_text(args[2]).replace("'", "").rstrip("uUlL"))
    except ValueError:
        return None
    if count <= 0 or count > 1000:
        return None
    bounds: list[float] = []
    bound = scale
    for _ in range(count):
        bounds.append(bound)
        bound *= growth
    return tuple(bounds)


# -- yalantinglibs metrics (ylt/metric/*.hpp) --------------------------------------------------------

# a ylt metric type as written: `ylt::metric::counter_t`, `ylt::metric::basic_dynamic_histogram<int64_t, 1>`,
# a system's own in that namespace (Mooncake's `hybrid_counter_1t`); bare after `using namespace ylt::metric`
_YLT_TYPE = re.compile(r"^(?:::)?(ylt::metric::)?(\w*(?:counter|gauge|histogram|summary)\w*)\s*(?:<.*>)?$", re.S)
_YLT_MAKERS = frozenset({"make_shared", "make_unique", "create_metric_static", "create_metric_dynamic"})


def _ylt_kind(written: str, bare: bool) -> str | None:
    m = _YLT_TYPE.match(written.strip())
    return m.group(2) if m is not None and (m.group(1) or bare) else None


def _ylt_metrics(found: dict[str, list[Any]], constants: dict[str, str], inits: list[Any],
                 bare: bool) -> tuple[YltMetric, ...]:
    """The file's yalantinglibs metrics: declarations and class members of a ylt metric type (with
    their arguments when they have some), ``make_shared<T>(...)`` of one, and the initializers of
    constructors that give a member a name-like literal (a member some class declares with such a
    type, here or in another file, is a metric)."""
    lists = _brace_lists(inits, found.get("type", ()))
    out: list[YltMetric] = []
    declared: dict[str, str] = {}  # "Class::member": kind, of this file's classes
    for declaration in _in_tree_order(found.get("local", ())):
        type_node = declaration.child_by_field_name("type")
        kind = _ylt_kind(_text(type_node), bare) if type_node is not None else None
        for declarator in declaration.children_by_field_name("declarator") if kind is not None else ():
            value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
            if kind is not None and value is not None and value.type in ("argument_list", "initializer_list"):
                out.append(_ylt_metric(kind, declarator.start_point[0] + 1, "", value, constants, lists))
    for type_node in _in_tree_order(found.get("type", ())):
        name_node = type_node.child_by_field_name("name")
        body = type_node.child_by_field_name("body")
        for member in _members(body) if body is not None and name_node is not None else ():
            member_type = member.child_by_field_name("type") if member.type == "field_declaration" else None
            kind = _ylt_kind(_text(member_type), bare) if member_type is not None else None
            declarator = member.child_by_field_name("declarator") if kind is not None else None
            if kind is None or declarator is None or declarator.type != "field_identifier":
                continue
            key = f"{_text(name_node).split('::')[-1]}::{_text(declarator)}"
            value = member.child_by_field_name("default_value")
            if value is not None and value.type in ("argument_list", "initializer_list"):
                out.append(_ylt_metric(kind, member.start_point[0] + 1, key, value, constants, lists))
            else:
                declared[key] = kind
                out.append(YltMetric(kind, member.start_point[0] + 1, key))
    for callee in _in_tree_order(found.get("callee", ())):  # std::make_shared<ylt::metric::counter_t>(...)
        if callee.type not in ("template_function", "qualified_identifier"):
            continue
        template = callee if callee.type == "template_function" else callee.child_by_field_name("name")
        if template is None or template.type != "template_function":
            continue
        function, arguments = template.child_by_field_name("name"), template.child_by_field_name("arguments")
        if function is None or arguments is None or _text(function) not in _YLT_MAKERS or not arguments.named_children:
            continue
        kind = _ylt_kind(_text(arguments.named_children[0]), bare)
        call_arguments = callee.parent.child_by_field_name("arguments")
        if kind is not None and call_arguments is not None:
            out.append(_ylt_metric(kind, callee.start_point[0] + 1, "", call_arguments, constants, lists))
    for initializers in _in_tree_order(found.get("member_inits", ())):
        owner = _constructor_class(initializers.parent)
        for initializer in initializers.named_children if owner else ():
            children = initializer.named_children
            if len(children) != 2 or children[0].type != "field_identifier" \
                    or children[1].type not in ("argument_list", "initializer_list") \
                    or not children[1].named_children or _literal(children[1].named_children[0]) is None:
                continue
            key = f"{owner}::{_text(children[0])}"
            out.append(_ylt_metric(declared.get(key, ""), initializer.start_point[0] + 1, key, children[1],
                                   constants, lists))
    return tuple(out)


_CONDITIONAL = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})


def _members(body) -> list[Any]:
    """A class body's members, those in its `#if` groups too (every group: no configuration is chosen)."""
    out: list[Any] = []
    for child in body.named_children:
        out.extend(_members(child) if child.type in _CONDITIONAL else (child,))
    return out


def _constructor_class(function) -> str:
    """The class a constructor with an initializer list belongs to: the scope of ``A::A()``, or the
    class whose body holds it; "" when neither is known."""
    declarator = function.child_by_field_name("declarator") if function is not None else None
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    if name is not None and name.type == "qualified_identifier":
        parts = _text(name).replace(" ", "").split("::")
        return parts[-2].split("<")[0] if len(parts) >= 2 else ""
    parent = function.parent if function is not None else None
    while parent is not None and parent.type not in ("class_specifier", "struct_specifier"):
        parent = parent.parent
    owner = parent.child_by_field_name("name") if parent is not None else None
    return _text(owner).split("::")[-1] if owner is not None else ""


def _ylt_metric(kind: str, line: int, member: str, arguments, constants: dict[str, str],
                lists: dict[str, YltArgument]) -> YltMetric:
    args = list(arguments.named_children)
    name = _value(args[0], constants) if args else None
    help_text = _value(args[1], constants) if len(args) > 1 else None
    return YltMetric(kind, line, member, name, help_text, tuple(_ylt_argument(a, lists) for a in args[2:]))


def _ylt_argument(node, lists: dict[str, YltArgument]) -> YltArgument:
    text = _text(node)
    if node.type in ("identifier", "qualified_identifier"):
        known = lists.get(text.split("::")[-1].strip())
        return msgspec.structs.replace(known, text=text) if known is not None else YltArgument(text)
    return _brace_list(node) or YltArgument(text)


def _brace_list(node) -> YltArgument | None:
    """What a brace list holds: numbers, strings, or pairs whose first items are strings."""
    if node.type == "compound_literal_expression":  # std::vector<double>{...}
        node = node.child_by_field_name("value") or node.named_children[-1]
    if node.type != "initializer_list":
        return None
    text = _text(node)
    items = [i for i in node.named_children if i.type != "comment"]
    if items and all(i.type == "initializer_list" for i in items):
        keys = _label_keys(node)
        return YltArgument(text, keys=tuple(keys)) if len(keys) == len(items) else None
    strings = [_literal(i) for i in items]
    if all(s is not None for s in strings):
        return YltArgument(text, strings=tuple(s for s in strings if s is not None))
    numbers = _numbers(node)
    return YltArgument(text, numbers=tuple(numbers)) if numbers is not None else None


def _brace_lists(inits: list[Any], types: Any) -> dict[str, YltArgument]:
    """The file's variables and static members initialized with a brace list (label names, bounds)."""
    lists: dict[str, YltArgument] = {}
    for declarator in inits:
        target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
        if target is not None and value is not None and target.type == "identifier":
            found = _brace_list(value)
            if found is not None:
                lists[_text(target)] = found
    for type_node in types:
        body = type_node.child_by_field_name("body")
        for member in _members(body) if body is not None else ():
            declarator = member.child_by_field_name("declarator") if member.type == "field_declaration" else None
            value = member.child_by_field_name("default_value") if declarator is not None else None
            if declarator is not None and value is not None and declarator.type == "field_identifier":
                found = _brace_list(value)
                if found is not None:
                    lists[_text(declarator)] = found
    return lists


# brpc's bvar classes that hold a number (bvar/bvar.h); a Status or PassiveStatus of a string is
# no number, and brpc's Prometheus dump leaves it out
BVAR_KINDS = frozenset({"Adder", "Maxer", "Miner", "IntRecorder", "Status", "PassiveStatus", "Window", "PerSecond",
                        "WindowEx", "PerSecondEx", "LatencyRecorder", "GFlag"})
_BVAR_TYPE = re.compile(r"^(?:::)?(bvar::)?(\w+)\s*(?:<(.*)>)?$", re.S)


def _bvar_kind(written: str, bare: bool) -> tuple[str, bool] | None:
    """(kind, multi) of a declared type that is a bvar, or None."""
    m = _BVAR_TYPE.match(written.strip())
    if m is None or not (m.group(1) or bare):
        return None
    kind, inner = m.group(2), (m.group(3) or "")
    if kind == "MultiDimension":
        found = _bvar_kind(split_template(inner)[0], bare) if inner else None
        return (found[0], True) if found is not None and not found[1] else None
    if kind not in BVAR_KINDS or "string" in inner:
        return None
    return kind, False


def split_template(inner: str) -> list[str]:
    """Template arguments at the top level: ``A<B, C>, D`` -> [``A<B, C>``, ``D``]."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(inner[start:i].strip())
            start = i + 1
    out.append(inner[start:].strip())
    return out


def _bvar_variables(found: dict[str, list[Any]], constants: dict[str, str], bare: bool) -> tuple[BvarVariable, ...]:
    """The bvars the file's declarations name, and those it names later with ``x.expose("name")``."""
    out: list[BvarVariable] = []
    unnamed: dict[str, tuple[str, bool]] = {}  # declared without a name: exposed later, if at all
    for declaration in _in_tree_order(found.get("local", ())):
        type_node = declaration.child_by_field_name("type")
        kind = _bvar_kind(_text(type_node), bare) if type_node is not None else None
        if kind is None:
            continue
        for declarator in declaration.children_by_field_name("declarator"):
            if declarator.type == "function_declarator":  # `Maxer<int> peak(kName);` reads as a function
                found_var = _bvar_read_as_function(kind, declarator, constants)
                if found_var is not None:
                    out.append(found_var)
                continue
            value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
            if value is None or value.type not in ("argument_list", "initializer_list"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "identifier":
                    unnamed[_text(target)] = kind
                continue
            found_var = _bvar_named(kind, list(value.named_children), declarator.start_point[0] + 1, constants)
            if found_var is not None:
                out.append(found_var)
    for type_node in _in_tree_order(found.get("type", ())):  # class members, exposed in a constructor
        body = type_node.child_by_field_name("body")
        for member in body.named_children if body is not None else ():
            member_type = member.child_by_field_name("type") if member.type == "field_declaration" else None
            kind = _bvar_kind(_text(member_type), bare) if member_type is not None else None
            if kind is not None:
                for declarator in member.children_by_field_name("declarator"):
                    if declarator.type == "field_identifier":
                        unnamed[_text(declarator)] = kind
    if unnamed:
        for callee in _in_tree_order(found.get("callee", ())):
            if callee.type != "field_expression":
                continue
            field, target = callee.child_by_field_name("field"), callee.child_by_field_name("argument")
            held = _text(target).replace("->", ".").split(".")[-1].strip() if target is not None else ""
            if field is None or _text(field) not in ("expose", "expose_as") or held not in unnamed:
                continue
            arguments = callee.parent.child_by_field_name("arguments")
            found_var = _bvar_named(unnamed[held], list(arguments.named_children) if arguments else [],
                                    callee.start_point[0] + 1, constants)
            if found_var is not None:
                out.append(found_var)
    return tuple(out)


def _bvar_named(kind: tuple[str, bool], args: list[Any], line: int, constants: dict[str, str]) -> BvarVariable | None:
    """The bvar a constructor's (or ``expose``'s) arguments name: ``(name, ...)`` or ``(prefix, name,
    ...)``; None when the first argument is no name (a hidden bvar: ``Window(&adder, 60)``)."""
    args = [_unparenthesized(a) for a in args]
    if not args:
        return None
    if not _names_something(args[0]):
        if kind[0] in _NAMED_ONLY and args[0].type in _COMPUTED:
            return BvarVariable(kind[0], line, ArgumentValue(None, _text(args[0])), multi=kind[1])  # said unresolved
        return None
    name, prefix = _value(args[0], constants), None
    if len(args) > 1 and _names_something(args[1]):
        prefix, name = name, _value(args[1], constants)
    labels = None
    rest = args[2 if prefix is not None else 1:]
    if kind[1] and rest and rest[0].type == "initializer_list":
        values = [_literal(_unparenthesized(c)) for c in rest[0].named_children]
        labels = tuple(v for v in values if v is not None) if all(v is not None for v in values) else None
    return BvarVariable(kind[0], line, name, prefix, labels, kind[1])


def _bvar_read_as_function(kind: tuple[str, bool], declarator, constants: dict[str, str]) -> BvarVariable | None:
    """A bvar whose arguments the grammar read as a function's parameters (C++'s most vexing parse:
    ``Maxer<int> peak(kPeakName)``, ``IntRecorder r(make_name())``); no function returns a bvar,
    which cannot be copied. The first parameter's type is the name argument."""
    parameters = declarator.child_by_field_name("parameters")
    first = parameters.named_children[0] if parameters is not None and parameters.named_children else None
    if first is None or first.type != "parameter_declaration":
        return None
    type_node, inner = first.child_by_field_name("type"), first.child_by_field_name("declarator")
    if type_node is None or type_node.type not in ("type_identifier", "qualified_identifier"):
        return None
    line = declarator.start_point[0] + 1
    written = _text(first)
    identifier = _text(type_node).split("::")[-1].strip()
    if inner is None and _CONSTANT_LIKE.match(identifier):
        return BvarVariable(kind[0], line, ArgumentValue(constants.get(identifier), written, identifier), multi=kind[1])
    if kind[0] in _NAMED_ONLY:
        return BvarVariable(kind[0], line, ArgumentValue(None, written), multi=kind[1])  # said unresolved
    return None


def _names_something(node) -> bool:
    """A string literal, or a name that looks like a constant's (``kName``, ``NAME``): a variable
    of any other name may be what the bvar reads (``Adder<int> a(&other)``, ``PassiveStatus(fn)``)."""
    if node.type in ("string_literal", "concatenated_string", "raw_string_literal"):
        return True
    return node.type in ("identifier", "qualified_identifier") and bool(
        _CONSTANT_LIKE.match(_text(node).split("::")[-1].strip()))


_CONSTANT_LIKE = re.compile(r"^(k[A-Z0-9]\w*|[A-Z][A-Z0-9_]+)$")
# bvars whose constructors take nothing but names: a first argument computed at run time is one
_NAMED_ONLY = frozenset({"Adder", "Maxer", "Miner", "IntRecorder", "LatencyRecorder"})
_COMPUTED = frozenset({"identifier", "qualified_identifier", "call_expression", "binary_expression",
                       "field_expression", "subscript_expression"})


def _unparenthesized(node):
    while node.type == "parenthesized_expression" and len(node.named_children) == 1:
        node = node.named_children[0]
    return node


def _triton_families(found: dict[str, list[Any]], constants: dict[str, str]) -> tuple[TritonFamily, ...]:
    """The file's `TRITONSERVER_MetricFamilyNew(&family, kind, name, description)` calls."""
    out = []
    for callee in _in_tree_order(found.get("callee", ())):
        if _text(callee).replace(" ", "").lstrip(":") != TRITON_FAMILY_NEW:
            continue
        args = callee.parent.child_by_field_name("arguments")
        values = args.named_children if args is not None else []
        if len(values) != 4:
            continue
        kind_text = _text(values[1]).replace(" ", "")
        out.append(TritonFamily(callee.start_point[0] + 1, kind_text, _value(values[2], constants),
                                _value(values[3], constants), TRITON_KINDS.get(kind_text.rpartition("::")[2], "")))
    return tuple(out)


# a string literal, or a comment or character literal, matched first so that a quote in them is skipped
_STRING = re.compile(rb'//[^\n]*|/\*.*?\*/|\'(?:[^\'\\\n]|\\.)*\'|"((?:[^"\\\n]|\\.)*)"', re.S)
_TYPE_LINE = re.compile(r"# TYPE ([^\n]*)")
_FAMILY = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary)[ \t]*")
_SAMPLE_KEY = re.compile(r'[{,]\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*="')


def _exposition(data: bytes) -> tuple[ExpositionLine, ...]:
    """The ``# TYPE`` lines of the file's string literals (module docstring)."""
    # (start, end, text) of each run of adjacent literals: `"a" "b"` is one string to the compiler;
    # and where each literal of a run starts, in the text and in the file
    runs: list[tuple[int, int, str]] = []
    pieces: list[list[tuple[int, int]]] = []
    for m in _STRING.finditer(data):
        if m.group(1) is None:
            continue  # a comment or a character literal
        text = _unescape_c(m.group(1).decode("utf-8", "replace"))
        if runs and not data[runs[-1][1]:m.start()].strip():
            start, _end, before = runs[-1]
            runs[-1] = (start, m.end(), before + text)
            pieces[-1].append((len(before), m.start()))
        else:
            runs.append((m.start(), m.end(), text))
            pieces.append([(0, m.start())])
    out = []
    for (_start, _end, text), starts in zip(runs, pieces):
        for found in _TYPE_LINE.finditer(text):
            at = max(pos for offset, pos in starts if offset <= found.start())
            line = data.count(b"\n", 0, at) + 1
            family = _FAMILY.fullmatch(found.group(1))
            if family is None:
                out.append(ExpositionLine(line, written=found.group(1).strip()[:80]))
                continue
            name = family.group(1)
            out.append(ExpositionLine(line, name, family.group(2), help=_help_of(runs, name),
                                      labels=_sample_keys(data, runs, name)))
    return tuple(out)


def _help_of(runs: list[tuple[int, int, str]], name: str) -> str | None:
    for _start, _end, text in runs:
        m = re.search(r"# HELP " + re.escape(name) + r"(?: ([^\n]*))?(?:\n|$)", text)
        if m is not None:
            return m.group(1) or ""
    return None


def _sample_keys(data: bytes, runs: list[tuple[int, int, str]], name: str) -> tuple[str, ...] | None:
    """Label keys of the first sample of ``name`` written as a literal: those of its own literal
    and of the literals after it in the same statement (``"\",stage=\""``)."""
    for i, (_start, end, text) in enumerate(runs):
        m = re.search(r"(?:^|\n)" + re.escape(name) + r"([{ ])", text)
        if m is None:
            continue
        if m.group(1) == " ":
            return ()
        keys = _SAMPLE_KEY.findall(text, m.end(1) - 1)
        stop = data.find(b";", end)
        for _s, later_end, later in runs[i + 1:]:
            if stop != -1 and later_end > stop:
                break
            keys += _SAMPLE_KEY.findall(later)
        return tuple(sorted(set(keys)))
    return None


def _unescape_c(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _in_tree_order(nodes: Any) -> list[Any]:
    """Captured nodes once each, in the order of a depth-first walk (an enclosing node before the
    nodes inside it): later definitions of a constant win, as they did when the tree was walked."""
    unique = {(n.start_byte, -n.end_byte): n for n in nodes}
    return [unique[key] for key in sorted(unique)]


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _builder_kind(call, names_prometheus: bool) -> str | None:
    function = call.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "qualified_identifier":
        text = _text(function).replace(" ", "")
        head, _, last = text.rpartition("::")
        if last in BUILDERS and head.lstrip(":") in ("prometheus", ""):
            return BUILDERS[last]
        return None
    if function.type == "identifier" and names_prometheus:
        return BUILDERS.get(_text(function))
    return None


def _literal(node) -> str | None:
    """The value of a string literal or adjacent-literal concatenation; None for anything else."""
    if node.type == "string_literal":
        out = []
        for child in node.named_children:
            if child.type == "string_content":
                out.append(_text(child))
            elif child.type == "escape_sequence":
                seq = _text(child)[1:]
                out.append(_ESCAPES.get(seq, seq))
        return "".join(out)
    if node.type == "raw_string_literal":
        match = re.match(r'R"([^(]*)\((.*)\)\1"$', _text(node), re.S)
        return match.group(2) if match else None
    if node.type == "concatenated_string":
        parts = [_literal(c) for c in node.named_children]
        return "".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    return None


def _read_constants(defines: list[Any], inits: list[Any]) -> dict[str, str]:
    """File-level (and namespace-level) string constants by their unqualified name."""
    constants: dict[str, str] = {}
    for define in defines:
        name, value = define.child_by_field_name("name"), define.child_by_field_name("value")
        if name is not None and value is not None:
            match = re.fullmatch(r'\s*"((?:[^"\\]|\\.)*)"\s*', _text(value))
            if match:
                constants[_text(name)] = match.group(1)
    for declarator in inits:
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if target is None or value is None or _inside_function(declarator):
            continue  # a local in some function body is not a constant other code can name
        while target is not None and target.type in ("array_declarator", "pointer_declarator",
                                                     "reference_declarator"):
            target = target.child_by_field_name("declarator") or (
                target.named_children[0] if target.named_children else None)
        if target is None or target.type != "identifier":
            continue
        if value.type in ("argument_list", "initializer_list") and len(value.named_children) == 1:
            value = value.named_children[0]
        literal = _literal(value)
        if literal is not None:
            constants[_text(target)] = literal
    return dict(sorted(constants.items()))


def _inside_function(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "lambda_expression"):
            return True
        parent = parent.parent
    return False


def _chain_methods(call) -> tuple[list[tuple[str, Any]], Any]:
    """``[(method, argument_list), ...]`` following the builder call, and the outermost call."""
    methods: list[tuple[str, Any]] = []
    current = call
    while True:
        parent = current.parent
        if parent is None or parent.type != "field_expression":
            break
        field = parent.child_by_field_name("field")
        outer = parent.parent
        if field is None or outer is None or outer.type != "call_expression":
            break
        methods.append((_text(field), outer.child_by_field_name("arguments")))
        current = outer
    return methods, current


def _holder(outer) -> str:
    """The variable or member the registered family is stored in, for later ``.Add`` calls."""
    node = outer.parent
    while node is not None and node.type in ("pointer_expression", "parenthesized_expression",
                                             "cast_expression", "call_expression", "argument_list"):
        if node.type == "argument_list" and node.parent is not None and node.parent.type == "field_initializer":
            node = node.parent
            break
        node = node.parent
    if node is None:
        return ""
    if node.type == "field_initializer":
        for child in node.named_children:
            if child.type == "field_identifier":
                return _text(child)
    if node.type == "init_declarator":
        target = node.child_by_field_name("declarator")
        while target is not None and target.type != "identifier" and target.named_children:
            target = target.named_children[0]
        return _text(target) if target is not None else ""
    if node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        return _text(left).split("->")[-1].split(".")[-1] if left is not None else ""
    return ""


class _Add(msgspec.Struct):
    """A ``family.Add({labels}, buckets)`` call (read here, folded into its chain's facts)."""

    labels: list[str]
    labels_var: str = ""  # the labels argument, when it is a variable
    buckets: list[float] | None = None


def _read_adds(calls: list[Any]) -> dict[str, list[_Add]]:
    """``family.Add({labels}, BucketBoundaries{...})`` calls by the family's variable name."""
    adds: dict[str, list[_Add]] = {}
    for call in calls:
        function = call.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            continue
        field = function.child_by_field_name("field")
        if field is None or _text(field) != "Add":
            continue
        target = function.child_by_field_name("argument")
        if target is None:
            continue
        name = _text(target).split("->")[-1].split(".")[-1]
        adds.setdefault(name, []).append(_add_of(call.child_by_field_name("arguments")))
    return adds


def _label_keys(node) -> list[str]:
    keys: list[str] = []
    if node.type == "initializer_list":
        for pair in node.named_children:
            if pair.type == "initializer_list" and pair.named_children:
                key = _literal(pair.named_children[0])
                if key is not None:
                    keys.append(key)
    return keys


def _numbers(node) -> list[float] | None:
    """Numbers of ``BucketBoundaries{...}``, ``std::vector<double>{...}`` or a bare ``{...}``."""
    if node.type == "compound_literal_expression":
        node = node.child_by_field_name("value") or node.named_children[-1]
    elif node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        node = arguments.named_children[0] if arguments is not None and len(arguments.named_children) == 1 else node
    if node.type != "initializer_list":
        return None
    values: list[float] = []
    for child in node.named_children:
        if child.type == "comment":  # `{// sub-ms\n 50, 75, ...}`
            continue
        text = _text(child).replace("'", "")
        try:
            values.append(float(text.rstrip("fFlLuU") if not text.lower().startswith("0x") else int(text, 16)))
        except ValueError:
            if child.type == "initializer_list":  # Summary::Quantiles{{0.5, 0.05}, ...}
                inner = _numbers(child)
                if inner:
                    values.append(inner[0])
                    continue
            return None
    return values


def _read_label_maps(inits: list[Any]) -> dict[str, list[str]]:
    """Label keys of map variables initialised with ``{{"key", "value"}, ...}`` in the file."""
    maps: dict[str, list[str]] = {}
    for declarator in inits:
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if target is None or value is None or target.type != "identifier":
            continue
        if value.type == "argument_list" and len(value.named_children) == 1:
            value = value.named_children[0]
        if value.type == "initializer_list" and value.named_children \
                and all(c.type == "initializer_list" for c in value.named_children):
            keys = _label_keys(value)
            if keys:
                maps[_text(target)] = keys
    return maps


def _enclosing_function(node):
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        parent = parent.parent
    return parent


def _function_signature(function) -> tuple[str, list[str]] | None:
    """(unqualified name, parameter names) of a function definition."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None)
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters")
    if name_node is None or parameters is None:
        return None
    names: list[str] = []
    for parameter in parameters.named_children:
        target = parameter.child_by_field_name("declarator")
        while target is not None and target.type != "identifier" and target.named_children:
            target = target.child_by_field_name("declarator") or target.named_children[-1]
        names.append(_text(target) if target is not None and target.type == "identifier" else "")
    return _text(name_node).split("::")[-1].strip(), names


def _helper(call, chain: BuilderChain) -> MetricHelper | None:
    """The chain as a helper's template when its name is one of the function's parameters."""
    name_fact = chain.name
    if name_fact is None or name_fact.value is not None or not name_fact.constant:
        return None
    function = _enclosing_function(call)
    if function is None:
        return None
    signature = _function_signature(function)
    if signature is None or name_fact.constant not in signature[1]:
        return None
    helper_name, params = signature
    help_fact = chain.help
    help_at = params.index(help_fact.constant) if help_fact is not None and help_fact.value is None and \
        help_fact.constant is not None and help_fact.constant in params else None
    labels_at = params.index(chain.labels_variable) if chain.labels_variable and chain.labels_variable in params \
        else None
    return MetricHelper(helper_name, len(params), HelperPositions(params.index(name_fact.constant), help_at, labels_at),
                        chain)


_NAME_LIKE = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:]*$")


def _literal_calls(candidates: list[Any], maps: dict[str, list[str]], adds: dict[str, list[_Add]]
                   ) -> list[LiteralCall]:
    """Calls passing a name-like string literal: the call sites a helper may have, with the
    `.Add` calls on what they return (chained, or on the variable that holds it)."""
    calls: list[LiteralCall] = []
    for call in candidates:
        function = call.child_by_field_name("function")
        arguments = call.child_by_field_name("arguments")
        if function is None or arguments is None or function.type not in (
                "identifier", "qualified_identifier", "field_expression", "template_function"):
            continue
        args = tuple(_literal(a) for a in arguments.named_children)
        if not any(a is not None and _NAME_LIKE.match(a) for a in args):
            continue
        name = _text(function).replace("->", ".").split(".")[-1].split("::")[-1].split("<")[0].strip()
        labels = tuple(_optional_tuple(_label_keys(a) if a.type == "initializer_list" else maps.get(_text(a))
                                       if a.type == "identifier" else None) for a in arguments.named_children)
        found_adds = _chained_adds(call)
        _methods, outer = _chain_methods(call)
        holder = _holder(outer)
        found_adds += adds.get(holder, []) if holder else []
        add_labels = sorted({k for add in found_adds for k in (add.labels or maps.get(add.labels_var, []))})
        buckets = next((add.buckets for add in found_adds if add.buckets is not None), None)
        calls.append(LiteralCall(name, call.start_point[0] + 1, args, labels, tuple(add_labels),
                                 tuple(buckets) if buckets is not None else None))
    return calls


def _chained_adds(call) -> list[_Add]:
    """`.Add(...)` chained on the call's result: `Helper("name", "help").Add({}, buckets)`."""
    return [_add_of(arguments) for method, arguments in _chain_methods(call)[0] if method == "Add"]


def _add_of(arguments) -> _Add:
    args = arguments.named_children if arguments is not None else []
    return _Add(_label_keys(args[0]) if args else [], _text(args[0]) if args and args[0].type == "identifier" else "",
                _numbers(args[1]) if len(args) > 1 else None)


def _optional_tuple(items: list[str] | None) -> tuple[str, ...] | None:
    return tuple(items) if items is not None else None


def _argument_value(arguments, constants: dict[str, str]) -> ArgumentValue:
    args = arguments.named_children if arguments is not None else []
    if not args:
        return ArgumentValue()
    return _value(args[0], constants)


def _value(node, constants: dict[str, str]) -> ArgumentValue:
    literal = _literal(node)
    if literal is not None:
        return ArgumentValue(literal, _text(node))
    text = _text(node)
    identifier = text.split("::")[-1].strip()
    if node.type in ("identifier", "qualified_identifier"):
        return ArgumentValue(constants.get(identifier), text, identifier)
    parts = _concatenation(node)
    if parts is None:
        return ArgumentValue(None, text)
    known = [value if kind == "lit" else constants.get(value) for kind, value in parts]
    if all(k is not None for k in known):
        return ArgumentValue("".join(k for k in known if k is not None), text)
    return ArgumentValue(None, text, parts=tuple(parts))


_STRING_TYPES = frozenset({"std::string", "string", "std::string_view", "string_view"})


def _concatenation(node) -> list[tuple[str, str]] | None:
    """The parts of a name built from literals and constants: ``a + b``, ``std::string(X)``,
    ``std::string{X}``, ``(X)``, adjacent ``X "_y"``; None for anything else."""
    kind = node.type
    if kind in ("string_literal", "raw_string_literal"):
        literal = _literal(node)
        return [("lit", literal)] if literal is not None else None
    if kind in ("identifier", "qualified_identifier"):
        return [("const", _text(node).split("::")[-1].strip())]
    inner: list[Any]
    if kind == "binary_expression":
        operator = node.child_by_field_name("operator")
        if operator is None or _text(operator) != "+":
            return None
        inner = [node.child_by_field_name("left"), node.child_by_field_name("right")]
    elif kind in ("concatenated_string", "parenthesized_expression"):
        inner = list(node.named_children)
    elif kind == "call_expression" and _text(node.child_by_field_name("function")).replace(" ", "") in _STRING_TYPES:
        arguments = node.child_by_field_name("arguments")
        inner = list(arguments.named_children) if arguments is not None else []
    elif kind == "compound_literal_expression" and \
            _text(node.child_by_field_name("type")).replace(" ", "") in _STRING_TYPES:
        value = node.child_by_field_name("value")
        inner = list(value.named_children) if value is not None else []
    else:
        return None
    if kind not in ("binary_expression", "concatenated_string") and len(inner) != 1:
        return None  # a wrapper holds one value
    out: list[tuple[str, str]] = []
    for child in inner:
        part = _concatenation(child) if child is not None else None
        if part is None:
            return None
        out.extend(part)
    return out


def _read_chain(call, builder: str, constants: dict[str, str],
                adds: dict[str, list[_Add]], maps: dict[str, list[str]]) -> BuilderChain:
    methods, outer = _chain_methods(call)
    name = help_value = None
    labels: list[str] = []
    labels_variable = ""
    registered = False
    for method, arguments in methods:
        if method == "Name":
            name = _argument_value(arguments, constants)
        elif method == "Help":
            help_value = _argument_value(arguments, constants)
        elif method == "Labels" and arguments is not None and arguments.named_children:
            argument = arguments.named_children[0]
            if argument.type == "identifier" and _text(argument) in maps:
                labels = maps[_text(argument)]  # a map variable of this file
            elif argument.type == "identifier":
                labels_variable = _text(argument)
            else:
                labels = _label_keys(argument)
        elif method == "Register":
            registered = True
    holder = _holder(outer)
    extra_labels: list[str] = []
    buckets: list[float] | None = None
    for add in adds.get(holder, []) if holder else []:
        extra_labels.extend(add.labels or maps.get(add.labels_var, []))
        if add.buckets is not None and buckets is None:
            buckets = add.buckets
    return BuilderChain(builder, call.start_point[0] + 1, name, help_value, tuple(labels), labels_variable,
                        registered, holder, tuple(sorted(set(extra_labels))),
                        tuple(buckets) if buckets is not None else None)
