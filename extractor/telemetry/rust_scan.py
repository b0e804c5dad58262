"""Per-file scanner for Prometheus metrics defined in Rust: the ``prometheus`` crate and the
``metrics`` crate here, the ``prometheus-client`` crate in :mod:`.client_rust_scan`.

Most Rust metric definitions sit inside macros (``register_int_counter!(...)``, ``counter!(...)``,
or a ``lazy_static! { ... }`` block around them), whose arguments the grammar keeps as unparsed
token trees. So the scanner reads the file's text, with comments blanked using the syntax tree
(the positions of everything else stay put), and parses each call's arguments with a small
tokenizer that knows Rust string literals and nesting.

Recognised, ``prometheus`` crate: ``register_[int_]{counter,gauge,histogram}[_vec]!`` with literal
name/help (and label list / bucket vector), and ``Opts::new(..)`` / ``HistogramOpts::new(..)`` with
their builder chain (``.namespace(..)``, ``.subsystem(..)``, ``.buckets(..)``, ``.variable_labels``);
the type of a bare ``Opts::new`` comes from the register macro or constructor it is handed to; the
crate's own constructors, ``{Int,}{Counter,Gauge}::new(name, help)`` (no ``Opts``) and
``{Int,}{Counter,Gauge}Vec::new(opts, &["label", ..])`` / ``HistogramVec::new(..)`` /
``X::with_opts(opts)``, where the constructor's type is the file's ``use prometheus::..`` one or is
written ``prometheus::X``: the enclosing constructor types an ``Opts::new`` written inside it and gives
a vector its label names (a label list that is no literal leaves the labels unresolved).
``metrics`` crate (only in files that name the crate): ``counter!``, ``gauge!``, ``histogram!`` and
``describe_*!`` (for help text and unit), and the macros of its releases up to 0.21 (TGI's and
LoRAX's routers): ``increment_counter!``, ``absolute_counter!``, ``increment_gauge!``,
``decrement_gauge!`` and ``register_{counter,gauge,histogram}!`` (written ``metrics::register_...!``,
or bare in a file that uses the metrics crate and not the prometheus one); label keys from
``"key" => value`` pairs, whichever release (0.21's value argument is no pair), and from labels
handed over as one expression (``counter!("name", &labels)``: an array of ``(key, value)`` tuples or
``Label::new``s written in place or bound by a ``let`` of the enclosing function; anything else, a
struct field say, leaves the labels unresolved rather than empty). From 0.22 on the macros return a
handle and take no value, so a macro whose result is used (``counter!(..).increment(1)``, ``let c =
counter!(..)``) has labels from its second argument on. Names held in ``const``/``static`` string
items of the file are resolved; others are left to the extract step (constants of other files) or
reported unresolved. The exporter's bucket matchers are read wherever ``set_buckets_for_metric`` is
called, also in a file of its own that names no metrics macro (TEI's ``router/src/prometheus.rs``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from extractor.model import ParsedFile
from extractor.rust.parse import capture_nodes
from extractor.telemetry.client_rust_scan import scan_client_rust
from extractor.telemetry.libraries import conventions
from extractor.telemetry.native_facts import (FactoryCall, MetricBuckets, MetricText, NativeMetric, NativeMetricFacts,
                                              RustFactory)

_REGISTER = re.compile(rb"(?<!metrics::)\bregister_(int_)?(counter|gauge|histogram)(_vec)?!\s*[(\[{]")
_OPTS = re.compile(rb"\b(Opts|HistogramOpts)::new\s*\(")
_METRICS_MACRO = re.compile(rb"(?<![\w:])(metrics::)?(counter|gauge|histogram|describe_counter|describe_gauge|"
                            rb"describe_histogram|increment_counter|absolute_counter|increment_gauge|decrement_gauge|"
                            rb"register_counter|register_gauge|register_histogram)!\s*[(\[{]")
# the metrics crate's macros up to 0.21 and the kind of metric each names
_METRICS_KIND = {"increment_counter": "counter", "absolute_counter": "counter", "register_counter": "counter",
                 "increment_gauge": "gauge", "decrement_gauge": "gauge", "register_gauge": "gauge",
                 "register_histogram": "histogram"}
_METRICS_CRATE = re.compile(rb"(?<![\w:])metrics::|\buse\s+metrics\b")
_PROMETHEUS_CRATE = re.compile(rb"(?<![\w:])prometheus::|\buse\s+prometheus\b|\bextern\s+crate\s+prometheus\b")
_CONSTRUCTOR = re.compile(rb"\b(Int)?(Counter|Gauge|Histogram)(Vec)?::(?:with_opts|new)\s*\(|"
                          rb"\bregister_(int_)?(counter|gauge|histogram)(_vec)?!")
# the prometheus crate's constructors (src/counter.rs, gauge.rs, histogram.rs): `new(name, help)` for the
# scalar counter and gauge, `new(opts, label_names)` for the vectors, `with_opts(opts)` for all scalars
_NEW = re.compile(rb"(?<![\w:])(prometheus::)?(Int)?(Counter|Gauge|Histogram)(Vec)?::(new|with_opts)\s*\(")
_USE_PROMETHEUS = re.compile(rb"\buse\s+(?:::)?prometheus::([^;]*);")
_LABEL_LIST = re.compile(r'&?\s*(?:vec!\s*)?\[\s*(?:"(?:[^"\\]|\\.)*"\s*,?\s*)*\]')
_CONST = re.compile(rb"\b(?:const|static)\s+([A-Z_][A-Z0-9_]*)\s*:\s*&(?:'static\s+)?str\s*=\s*\"((?:[^\"\\]|\\.)*)\"")
_MOD = re.compile(rb"\bmod\s+([A-Za-z_]\w*)\s*\{")
# a constant named through modules; `crate::`, `self::`, `super::` name no module of their own
_PATH = re.compile(r"(?:[A-Za-z_]\w*::)+[A-Za-z_]\w*")
_ANCHORS = ("crate", "self", "super", "Self", "$crate")
# a file's name helpers: `fn name(suffix: &str) -> String { format!(...) }` and the closure
# `let name = |suffix: &str| format!(...);`, whose result a metric name may be
_HELPER_FN = re.compile(rb"\bfn\s+([a-z_]\w*)\s*\(\s*([a-z_]\w*)\s*:\s*&(?:'static\s+)?str\s*\)\s*->\s*String\s*"
                        rb"\{\s*format!\s*\(")
_HELPER_CLOSURE = re.compile(rb"\blet\s+([a-z_]\w*)\s*=\s*(?:move\s+)?\|\s*([a-z_]\w*)\s*"
                             rb"(?::\s*&(?:'static\s+)?str\s*)?\|\s*format!\s*\(")
# functions of the crate that make a metric: named for its type, returning a prometheus metric type
_MAKER_NAME = rb"[a-z_][a-z0-9_]*(?:counter|gauge|histogram)[a-z0-9_]*"
_FACTORY_CALL = re.compile(rb"(?<![\w!])(" + _MAKER_NAME + rb")\s*(?:::\s*<[^;{}()]*>\s*)?\(")
_FACTORY_DEF = re.compile(rb"\bfn\s+(" + _MAKER_NAME + rb")\s*(?:<[^(]*?>)?\s*\(")
_RETURNS = re.compile(rb"\s*->\s*([^{;]*?)\s*(?:\bwhere\b[^{;]*)?\{")
_METRIC_TYPE = re.compile(r"\b(Int)?(Counter|Gauge|Histogram)(Vec)?\b")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_NAMED_ARG = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)\s*(.*)", re.S)
_MAX_DEPTH = 4  # helpers and format! nested deeper than this are not followed
# metrics-exporter-prometheus bucket configuration: the matchers of a file that calls
# `set_buckets_for_metric` (often built into variables first), or a global `set_buckets`
_MATCHER = re.compile(rb"\bMatcher::(Full|Prefix|Suffix)\s*\(\s*(?:String::from\s*\(\s*)?(?:\"((?:[^\"\\]|\\.)*)\"|"
                      rb"([A-Z_][A-Z0-9_:]*))")
_SET_BUCKETS = re.compile(rb"\bset_buckets\s*\(")
_UNIT = re.compile(r"Unit::(\w+)")
# the metrics crate's macros that take no value up to 0.21, and those that return a handle from 0.22 on
# (`counter!("name").increment(1)`): their arguments after the name are all labels
_NO_VALUE = frozenset({"increment_counter", "register_counter", "register_gauge", "register_histogram"})
_HANDLES = frozenset({"counter", "gauge", "histogram"})
_LABEL_ITEM = re.compile(r"\(|(?:metrics::)?Label::new\s*\(")
_OPEN = {"(": ")", "[": "]", "{": "}"}


@functools.cache  # per process
def _unmodeled_crates() -> re.Pattern[bytes] | None:
    """A path through a crate whose metrics this scanner does not read (libraries.yaml's
    ``unmodeled``)."""
    crates = sorted(conventions().unmodeled_crates)
    return re.compile(rb"\b(" + b"|".join(re.escape(c.encode()) for c in crates) + rb")::") if crates else None


def scan_rust_metrics(parsed: ParsedFile) -> NativeMetricFacts | None:
    data = parsed.data
    uses_metrics_crate = _METRICS_CRATE.search(data) is not None  # not `prometheus_client::metrics::`
    pattern = _unmodeled_crates()
    found = pattern.search(data) if pattern is not None else None
    unmodeled = ((found.group(1).decode(), _line(data, found.start())),) if found is not None else ()
    client = scan_client_rust(parsed.tree, data, read_format)
    # a file that only configures the metrics crate's exporter (`set_buckets_for_metric` in a
    # `prometheus.rs` of its own, naming metrics_exporter_prometheus alone) is read for its matchers
    makers = _FACTORY_CALL.search(data) is not None
    if b"register_" not in data and b"Opts::new" not in data and not uses_metrics_crate and b"set_buckets" not in data:
        # a file of string constants only (metric names a module keeps for the crate) is kept for them,
        # and one calling functions named like metric makers, for the extract step to match to factories
        if client is None and not makers and _CONST.search(data) is None:
            return NativeMetricFacts(unmodeled=unmodeled) if unmodeled else None
        text = _blank_comments(parsed)
        constants = _constants(text)
        factories, calls = _factories(text, constants) if makers else ((), ())
        if not (constants.scoped or client or unmodeled or factories or calls):
            return None
        return NativeMetricFacts(constants=dict(constants), unmodeled=unmodeled, client=client,
                                 scoped_constants=constants.scoped, factories=factories, factory_calls=calls)
    text = _blank_comments(parsed)
    constants = _constants(text)
    factories, calls = _factories(text, constants) if makers else ((), ())
    metrics: list[NativeMetric] = []
    opts_in_macros: set[int] = set()
    # a bare register_counter! is the metrics crate's in a file that uses it and not the prometheus crate
    bare_registers_are_metrics = uses_metrics_crate and _PROMETHEUS_CRATE.search(text) is None
    for m in _REGISTER.finditer(text):
        if bare_registers_are_metrics and not m.group(1) and not m.group(3):
            continue  # read below, with the metrics crate's macros
        args, end = _arguments(text, m.end() - 1)
        kind = m.group(2).decode()
        # keyword arguments of the NativeMetric, gathered from the macro and its Opts chain
        entry: dict[str, Any] = {"library": "prometheus", "type": kind, "line": _line(text, m.start()),
                                 "integer": bool(m.group(1)), "vec": bool(m.group(3)), "register_macro": True}
        first = args[0] if args else ""
        if first.startswith(("Opts::new", "HistogramOpts::new", "prometheus::Opts::new", "prometheus::HistogramOpts::new")):
            inner = _OPTS.search(text, m.end(), end)
            if inner is not None:
                opts_in_macros.add(inner.start())
                entry.update(_opts_chain(text, inner, constants))
                if entry.get("opts") == "histogram":
                    entry["type"] = "histogram"
            if len(args) > 1:
                entry["labels"] = _strings(args[1], constants)
        elif _literal(first, constants) is not None:
            entry["name"] = _value(first, constants)
            if len(args) > 1:
                entry["help"] = _value(args[1], constants)
            rest = args[2:]
            if entry["vec"] and rest:
                entry["labels"] = _strings(rest[0], constants)
                rest = rest[1:]
            if kind == "histogram" and rest:
                entry["buckets"] = _buckets(rest[0])
        else:
            continue  # `register_int_counter!(opts)`: recorded at its `Opts::new`
        metrics.append(NativeMetric(**entry))
    enclosing: dict[int, dict[str, Any]] = {}  # an Opts::new written inside a constructor: what it says
    if _PROMETHEUS_CRATE.search(text) is not None:
        metrics += _constructors(text, constants, enclosing)
    opts_starts = [m.start() for m in _OPTS.finditer(text)]
    for i, m in enumerate(_OPTS.finditer(text)):
        if m.start() in opts_in_macros:
            continue
        entry = {"library": "prometheus", "line": _line(text, m.start())}
        entry.update(_opts_chain(text, m, constants))
        outer = enclosing.get(m.start())
        # a constructor after an Opts built on its own belongs to it only up to the next Opts::new
        limit = min(len(text), m.end() + 600, opts_starts[i + 1] if i + 1 < len(opts_starts) else len(text))
        follow = _CONSTRUCTOR.search(text, m.end(), limit) if outer is None else None
        if entry.get("opts") == "histogram":
            entry["type"] = "histogram"
        elif outer is not None:
            entry["type"] = outer["type"]
            entry["integer"] = outer["integer"]
        elif follow is not None:
            entry["type"] = (follow.group(2) or follow.group(5) or b"").decode().lower()
            entry["integer"] = bool(follow.group(1) or follow.group(4))
            if follow.group(3) and "labels" not in entry:  # `IntGaugeVec::new(opts, &["model"])`
                args, _close = _arguments(text, follow.end() - 1)
                if len(args) > 1 and re.fullmatch(r"&?\s*[a-z_]\w*", args[0]):
                    entry["vec"] = True
                    entry["labels"] = _label_list(args[1])
        else:
            entry["type"] = ""  # the extract step reports it: no constructor names the type
        if outer is not None and outer["vec"]:
            entry["vec"] = True
            if "labels" not in entry:  # `.variable_labels(..)` said them already
                entry["labels"] = outer["labels"]
        metrics.append(NativeMetric(**entry))
    if uses_metrics_crate:
        for m in _METRICS_MACRO.finditer(text):
            args, _end = _arguments(text, m.end() - 1)
            if not args:
                continue
            macro = m.group(2).decode()
            if macro.startswith("register_") and not m.group(1) and not bare_registers_are_metrics:
                continue  # the prometheus crate's, read above
            if macro.startswith("describe_"):
                rest = args[1:]
                unit = _UNIT.search(rest[0]) if rest else None
                if unit is not None:
                    rest = rest[1:]
                metrics.append(NativeMetric("metrics", _line(text, m.start()), macro[len("describe_"):],
                                            _value(args[0], constants),
                                            _value(rest[-1], constants) if rest else None, describe=True,
                                            unit=unit.group(1) if unit is not None else ""))
            else:
                labels = {_value(a.split("=>", 1)[0].strip(), constants).value or ""
                          for a in args[1:] if "=>" in a} - {""}
                # what is neither a `key => value` pair nor the value of a release up to 0.21 is
                # labels handed over as one expression (`counter!("name", &labels)`)
                values = 0 if macro in _NO_VALUE or (macro in _HANDLES and _handle_used(text, m.start(), _end)) else 1
                read: set[str] | None = labels
                for arg in [a for a in args[1:] if "=>" not in a][values:]:
                    keys = _label_expression(text, m.start(), arg, constants)
                    read = None if keys is None or read is None else read | keys
                metrics.append(NativeMetric("metrics", _line(text, m.start()), _METRICS_KIND.get(macro, macro),
                                            _value(args[0], constants),
                                            labels=tuple(sorted(read)) if read is not None else None))
    buckets: list[tuple[str, str | None]] = []
    if b"set_buckets_for_metric" in text:
        for m in _MATCHER.finditer(text):
            name = m.group(2).decode() if m.group(2) is not None else constants.get(m.group(3).decode().rsplit("::", 1)[-1])
            buckets.append((m.group(1).decode().lower(), name))
    if _SET_BUCKETS.search(text):
        buckets.append(("all", ""))
    if not (metrics or constants or buckets or unmodeled or client or factories or calls):
        return None
    return NativeMetricFacts(tuple(metrics), dict(constants), tuple(buckets), unmodeled, client,
                             scoped_constants=constants.scoped, factories=factories, factory_calls=calls)


def _factories(text: bytes,
               constants: dict[str, str]) -> tuple[tuple[RustFactory, ...], tuple[FactoryCall, ...]]:
    """The file's functions named like a metric maker that return a prometheus crate metric type (in
    a file that uses the crate), and its calls of functions so named with their first argument."""
    factories = []
    if _PROMETHEUS_CRATE.search(text) is not None:
        for m in _FACTORY_DEF.finditer(text):
            _params, close = _arguments(text, m.end() - 1)
            returns = _RETURNS.match(text, close + 1)
            kind = _METRIC_TYPE.search(returns.group(1).decode("utf-8", "replace")) if returns else None
            if kind is not None:
                factories.append(RustFactory(m.group(1).decode(), _line(text, m.start()), kind.group(2).lower(),
                                             integer=bool(kind.group(1)), vec=bool(kind.group(3))))
    calls = []
    for m in _FACTORY_CALL.finditer(text):
        if re.search(rb"\bfn\s+$", text[max(0, m.start() - 12):m.start()]):
            continue  # its definition
        args, _close = _arguments(text, m.end() - 1)
        calls.append(FactoryCall(m.group(1).decode(), _line(text, m.start()),
                                 _value(args[0], constants) if args else None))
    return tuple(factories), tuple(calls)


def _constructors(text: bytes, constants: dict[str, str],
                  enclosing: dict[int, dict[str, Any]]) -> list[NativeMetric]:
    """The prometheus crate's constructors of the file (module docstring). A scalar counter or gauge
    made by ``new(name, help)`` is a metric here; a constructor handed an ``Opts::new`` written in
    its first argument types that Opts (recorded in ``enclosing`` by its position); one handed an
    Opts variable is left to that variable's ``Opts::new``."""
    imported = _prometheus_imports(text)
    out = []
    for m in _NEW.finditer(text):
        if m.group(1) is None and imported is not None and \
                m.group(0).split(b"::")[0].decode() not in imported:
            continue  # a Counter of another crate, or of the file's own
        args, end = _arguments(text, m.end() - 1)
        if not args:
            continue
        vec, integer, kind = bool(m.group(4)), bool(m.group(2)), m.group(3).decode().lower()
        if args[0].lstrip("&").startswith(("Opts::new", "HistogramOpts::new", "prometheus::Opts::new",
                                           "prometheus::HistogramOpts::new")):
            inner = _OPTS.search(text, m.end(), end)
            if inner is not None:
                labels = _label_list(args[1]) if vec and len(args) > 1 else ()
                enclosing[inner.start()] = {"type": kind, "integer": integer, "vec": vec, "labels": labels}
        elif m.group(5) == b"new" and not vec and kind != "histogram" and len(args) == 2:
            out.append(NativeMetric("prometheus", _line(text, m.start()), kind, _value(args[0], constants),
                                    _value(args[1], constants), integer=integer))
    return out


def _prometheus_imports(text: bytes) -> set[str] | None:
    """The names a file takes from the prometheus crate with ``use``; None when it takes them all
    (``use prometheus::*``)."""
    names: set[str] = set()
    for m in _USE_PROMETHEUS.finditer(text):
        body = m.group(1).decode("utf-8", "replace")
        if "*" in body.split("::")[0] or body.strip() == "*" or "{*" in body.replace(" ", ""):
            return None
        names.update(re.findall(r"\b[A-Z]\w*", body))
    return names


def _label_list(arg: str) -> tuple[str, ...] | None:
    """The label names of a literal list (``&["a", "b"]``, ``vec!["a"]``); None for anything else
    (a variable, a constant array): those labels are not read."""
    return _strings(arg, {}) if _LABEL_LIST.fullmatch(arg.strip()) else None


class _Names(dict):
    """The file's string constants by name (a name given two values in different modules of the
    file is left out: which one a bare use means is the `use` items' to say), with ``scoped``,
    every one by its path of inline modules, and the file's name ``helpers``: name -> (parameter,
    the arguments of the ``format!`` it returns)."""

    def __init__(self) -> None:
        super().__init__()
        self.scoped: dict[str, str] = {}
        self.helpers: dict[str, tuple[str, list[str]]] = {}


def _constants(text: bytes) -> _Names:
    """The file's `const`/`static` string items (metric names and help texts) and its name helpers."""
    names = _Names()
    modules = []
    for m in _MOD.finditer(text):
        _args, end = _arguments(text, m.end() - 1)
        modules.append((m.start(), end, m.group(1).decode()))
    values: dict[str, set[str]] = {}
    for m in _CONST.finditer(text):
        name, value = m.group(1).decode(), _unescape(m.group(2).decode("utf-8", "replace"))
        inside = [module for start, end, module in modules if start < m.start() < end]
        names.scoped["::".join((*inside, name))] = value
        values.setdefault(name, set()).add(value)
    names.update((name, next(iter(found))) for name, found in values.items() if len(found) == 1)
    seen: dict[str, tuple[str, list[str]] | None] = {}
    for pattern, closing in ((_HELPER_FN, rb"\s*\}"), (_HELPER_CLOSURE, rb"\s*;")):
        for m in pattern.finditer(text):
            args, end = _arguments(text, m.end() - 1)
            if not args or re.compile(closing).match(text, end + 1) is None:
                continue  # more than the one format! in the body
            helper = (m.group(2).decode(), args)
            name = m.group(1).decode()
            seen[name] = helper if seen.get(name, helper) == helper else None  # two different: neither
    names.helpers = {name: helper for name, helper in seen.items() if helper is not None}
    return names


def _blank_comments(parsed: ParsedFile) -> bytes:
    """The file's bytes with its comments turned into spaces (newlines kept); the comments found
    by a query (a walk in Python over every node of the tree cost more than the parse)."""
    if parsed.tree is None:
        return parsed.data
    data = bytearray(parsed.data)
    for node in capture_nodes(parsed.tree.root_node, "[(line_comment) (block_comment)] @comment").get("comment", ()):
        data[node.start_byte:node.end_byte] = re.sub(rb"[^\n]", b" ", parsed.data[node.start_byte:node.end_byte])
    return bytes(data)


def _line(text: bytes, pos: int) -> int:
    return text.count(b"\n", 0, pos) + 1


def _arguments(text: bytes, open_at: int) -> tuple[list[str], int]:
    """Top-level comma-separated arguments of the bracket at ``open_at`` (strings respected)."""
    closer = _OPEN.get(chr(text[open_at]), ")")
    depth, i, start, args = 0, open_at, open_at + 1, []
    n = len(text)
    while i < n:
        c = chr(text[i])
        if c == '"':
            i += 1
            while i < n and text[i] != ord('"'):
                i += 2 if text[i] == ord("\\") else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                if c == closer:
                    last = text[start:i].decode("utf-8", "replace").strip()
                    if last:
                        args.append(last)
                    return [re.sub(r"\s+", " ", a) for a in args], i
        elif c == "," and depth == 1:
            args.append(text[start:i].decode("utf-8", "replace").strip())
            start = i + 1
        i += 1
    return [], n


def _handle_used(text: bytes, start: int, close: int) -> bool:
    """A macro whose result is used: a method called on it or a name bound to it, which only the
    handles of the metrics crate 0.22 and later allow (its macros up to 0.21 return nothing)."""
    after = re.compile(rb"\s*\.").match(text, close + 1) is not None
    return after or re.search(rb"=\s*(?:metrics::)?$", text[max(0, start - 40):start]) is not None


def _label_expression(text: bytes, at: int, arg: str, constants: dict[str, str]) -> set[str] | None:
    """The label keys of labels handed to a metrics macro as one expression: an array or ``vec!``
    of ``(key, value)`` tuples or ``Label::new(key, value)`` written in place, or a local of the
    enclosing function bound to one (``let labels = [("model", m)]; counter!("x", &labels)``).
    None when the keys cannot be read (a field, a parameter, a computed list)."""
    expr = arg.strip().lstrip("&").strip()
    local = re.fullmatch(r"([a-z_]\w*)(?:\.clone\(\)|\.to_vec\(\)|\.iter\(\)\.cloned\(\))?", expr)
    if local is not None:
        head = text[:at]
        fn = max(head.rfind(b"fn "), 0)  # the enclosing function's `let`s only
        bound = None
        for bound in re.finditer(rb"\blet\s+(?:mut\s+)?" + local.group(1).encode() + rb"\b[^=;]*=", head[fn:]):
            pass
        if bound is None:
            return None
        value = head[fn + bound.end():].split(b";", 1)[0]
        expr = value.decode("utf-8", "replace").strip().lstrip("&").strip()
    array = re.fullmatch(r"(?:vec!\s*)?\[(.*)\]", expr, re.S)
    if array is None:
        return None
    items, _close = _arguments(("[" + array.group(1) + "]").encode(), 0)
    keys: set[str] = set()
    for item in items:
        opened = _LABEL_ITEM.match(item)
        parts = _arguments(item.encode(), opened.end() - 1)[0] if opened is not None else []
        key = _literal(parts[0], constants) if len(parts) == 2 else None
        if key is None:
            return None
        keys.add(key)
    return keys


def _literal(arg: str, constants: dict[str, str]) -> str | None:
    arg = arg.strip().lstrip("&")
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"(?:\.to_string\(\)|\.into\(\)|\.to_owned\(\))?', arg)
    if m:
        return _unescape(m.group(1))
    path = _module_path(arg)
    if path is not None:  # `names::frontend::X`: this file's constant of that module, else the extract step's
        return getattr(constants, "scoped", {}).get(path)
    name = arg.rsplit("::", 1)[-1]
    return constants.get(name)


def _module_path(arg: str) -> str | None:
    """``a::b::NAME`` without the anchors that name no module (``crate::``, ``self::``); None when
    no module is left to name (a bare name, ``crate::NAME``) or ``arg`` is no path."""
    if not _PATH.fullmatch(arg):
        return None
    segments = arg.split("::")
    while segments and segments[0] in _ANCHORS:
        segments = segments[1:]
    return "::".join(segments) if len(segments) > 1 else None


def _value(arg: str, constants: dict[str, str], depth: int = 0) -> MetricText:
    """The value of a literal or file constant; for a ``format!`` (also one a file's name helper
    returns) the pieces it joins; the text as written otherwise."""
    value = _literal(arg, constants)
    if value is not None:
        return MetricText(value)
    written = arg.strip()
    if depth < _MAX_DEPTH:
        fmt = re.match(r"format!\s*\(", written)
        if fmt is not None:
            args, end = _arguments(written.encode(), fmt.end() - 1)
            made = _format(args, constants, {}, depth) if end == len(written.encode()) - 1 else None
            if made is not None:
                return made
        call = re.fullmatch(r"([a-z_]\w*)\s*\((.*)\)", written, re.S)
        helper = getattr(constants, "helpers", {}).get(call.group(1)) if call is not None else None
        if helper is not None and call is not None:
            param, args = helper
            made = _format(args, constants, {param: _value(call.group(2), constants, depth + 1)}, depth)
            if made is not None:
                return made
    bare = written.lstrip("&").strip()
    return MetricText(text=written[:120], constant=bare.rsplit("::", 1)[-1], path=_module_path(bare) or "")


def read_format(written: str) -> MetricText:
    """A ``format!(...)`` as written: its value when every piece is a literal, else its pieces
    (constants of the crate left to the extract step)."""
    return _value(written, {})


def _format(args: list[str], constants: dict[str, str], bound: dict[str, MetricText],
            depth: int) -> MetricText | None:
    """The pieces ``format!(args)`` joins: literal text, and for each ``{}``, ``{0}``, ``{name}`` the
    argument's value or how it is written (a formatting spec such as ``{:x}`` is not applied: that
    piece stays unknown). None when the template is no string literal."""
    template = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', args[0].strip()) if args else None
    if template is None:
        return None
    positional = [a for a in args[1:] if _NAMED_ARG.fullmatch(a) is None]
    named = {m.group(1): m.group(2) for a in args[1:] if (m := _NAMED_ARG.fullmatch(a)) is not None}
    parts: list[MetricText] = []
    text, at, index = _unescape(template.group(1)), 0, 0
    literal = ""
    for m in _PLACEHOLDER.finditer(text):
        literal += text[at:m.start()]
        at = m.end()
        if m.group(1) is None:  # `{{` or `}}`
            literal += m.group(0)[0]
            continue
        if literal:
            parts.append(MetricText(literal))
            literal = ""
        key, _colon, spec = m.group(1).partition(":")
        key = key.strip()
        expression: str | None
        if key.isdigit():
            expression = positional[int(key)] if int(key) < len(positional) else None
        elif key:
            expression = named.get(key, key)  # `{NAME}` captures the name in scope
        else:
            expression = positional[index] if index < len(positional) else None
            index += 1
        if expression is None or spec:
            parts.append(MetricText(text=m.group(0)))
            continue
        local = expression.strip().lstrip("&").strip()
        piece = bound[local] if local in bound else _value(expression, constants, depth + 1)
        parts.extend(piece.parts or (piece,))
    literal += text[at:]
    if literal:
        parts.append(MetricText(literal))
    if all(part.value is not None for part in parts):
        return MetricText("".join(part.value or "" for part in parts))
    return MetricText(text=("format!(" + ", ".join(args) + ")")[:120], parts=tuple(parts))


def _strings(arg: str, constants: dict[str, str]) -> tuple[str, ...]:
    return tuple(_unescape(s) for s in re.findall(r'"((?:[^"\\]|\\.)*)"', arg))


def _buckets(arg: str) -> MetricBuckets | None:
    """The numbers of a bucket vector; None when they are computed (``exponential_buckets(...)``)."""
    values = _numbers(arg)
    return MetricBuckets(values=tuple(values)) if values is not None else None


def _numbers(arg: str) -> list[float] | None:
    m = re.search(r"vec!\s*\[([^\]]*)\]|\[([^\]]*)\]", arg)
    if not m:
        return None  # computed (exponential_buckets(...), a variable): not readable statically
    body = m.group(1) if m.group(1) is not None else m.group(2)
    try:
        return [float(x.strip().rstrip("f64").rstrip("_").replace("_", "")) for x in body.split(",") if x.strip()]
    except ValueError:
        return None


def _opts_chain(text: bytes, m: re.Match[bytes], constants: dict[str, str]) -> dict[str, Any]:
    args, end = _arguments(text, m.end() - 1)
    out: dict[str, Any] = {"opts": "histogram" if m.group(1) == b"HistogramOpts" else "counter-or-gauge"}
    if args:
        out["name"] = _value(args[0], constants)
    if len(args) > 1:
        out["help"] = _value(args[1], constants)
    # the builder chain after `)`: `.namespace("x").subsystem("y").buckets(vec![...])`
    i = end + 1
    while True:
        cm = re.compile(rb"\s*\.\s*(\w+)\s*\(").match(text, i)
        if cm is None:
            break
        call_args, close = _arguments(text, cm.end() - 1)
        method = cm.group(1).decode()
        if method in ("namespace", "subsystem") and call_args:
            out[method] = _value(call_args[0], constants)
        elif method == "buckets" and call_args:
            out["buckets"] = _buckets(call_args[0])
        elif method == "variable_labels" and call_args:
            out["labels"] = _strings(call_args[0], constants)
        i = close + 1
    return out


def _unescape(s: str) -> str:
    return s.replace('\\"', '"').replace("\\\\", "\\").replace("\\n", "\n")
