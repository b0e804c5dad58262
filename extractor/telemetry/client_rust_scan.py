"""Per-file reader of the Rust ``prometheus-client`` crate (prometheus/client_rust) metrics.

client_rust registers a metric by value: ``registry.register(name, help, metric)`` (or
``register_with_unit(name, help, Unit::Seconds, metric)``), and the metric's kind, labels and
buckets come from the value's *type* (``Family<EngineLabels, Counter<u64, AtomicU64>>``), usually
written once in a type alias of another file, or from the struct field the value ends up in
(``let x = Family::default(); ... Self { x }``). So this scanner reads what one function and one
file say (the syntax tree, not macros' token trees) and leaves the crate-wide part to the driver
(:mod:`.client_rust_records`): every type is kept as written, spaces removed, with names imported
from ``prometheus_client`` written ``prometheus_client::Name`` and the crate's own names bare, so
that the driver can expand aliases and label structs of any file of the crate.

Registrations are read in files that name ``prometheus_client``; aliases, label structs, constant
bucket arrays, free functions and the crate's own ``EncodeMetric`` types in any file that names a
client_rust type (the pre-check below). Registrations under ``#[cfg(test)]`` or ``#[test]`` are
counted, not read: test code is not in the product's exposition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from extractor.rust.parse import capture_nodes
from extractor.rust.scan import use_paths
from extractor.telemetry.native_facts import (ClientBuckets, ClientCall, ClientFunction, ClientLabel,
                                               ClientRegistration, ClientRegistry, ClientRustFacts, ClientValue,
                                               MetricText)

MARKER = re.compile(rb"prometheus_client|EncodeLabelSet|EncodeMetric|\b(?:Family|Histogram|Counter|Gauge)\b")
_CRATE = "prometheus_client"
_PATH = re.compile(r"(?:r#)?[A-Za-z_]\w*(?:::(?:r#)?[A-Za-z_]\w*)*")
_MAKERS = frozenset({"default", "new", "new_with_constructor"})
_PASS_THROUGH = frozenset({"iter", "copied", "cloned", "into_iter", "to_vec", "to_owned"})  # on a bucket array
_UNITS = {"Amperes": "amperes", "Bytes": "bytes", "Celsius": "celsius", "Grams": "grams", "Joules": "joules",
          "Meters": "meters", "Ratios": "ratios", "Seconds": "seconds", "Volts": "volts"}  # registry.rs Unit::as_str
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
_MAX_DEPTH = 4
_QUERY = ("(call_expression function: (field_expression)) @call "
          "(use_declaration) @use (function_item) @function")
_REGISTRY_TYPE = re.compile(r"&?(?:mut)?(?:prometheus_client::)?Registry")


def scan_client_rust(tree: Any, data: bytes,
                     read_format: Callable[[str], MetricText] | None = None) -> ClientRustFacts | None:
    """The file's client_rust facts (module docstring); None when it has none. ``read_format``: how a
    ``format!(...)`` name is read (the prometheus crate's reader, :mod:`.rust_scan`, which imports this
    module), its pieces kept; without it the name is kept as written."""
    if tree is None or MARKER.search(data) is None:
        return None
    found = capture_nodes(tree.root_node, _QUERY)
    imports = _imports(found.get("use", ()))
    scanner = _FileScanner(imports, read_format)
    scanner.visit_items(tree.root_node)
    if _CRATE.encode() in data:
        for call in found.get("call", ()):
            scanner.visit_method_call(call, _text(call.child_by_field_name("function").child_by_field_name("field")))
        scanner.gather_calls(found.get("function", ()))
    return scanner.finish()


def _imports(uses: Any) -> dict[str, str]:
    """Local name -> full path of the file's `use` declarations (`as` renames kept)."""
    out: dict[str, str] = {}
    for use in uses:
        argument = use.child_by_field_name("argument")
        for path, alias in use_paths(argument) if argument is not None else ():
            local = alias or path.rsplit("::", 1)[-1]
            if local not in ("*", "self"):
                out[local] = path
    return out


@dataclass
class _Function:
    """The function a registration sits in: what a name in it was bound to."""

    node: Any
    qualname: str  # `S::f` in `impl S`, `f` otherwise
    owner: str  # the impl's type, "" for a free function
    params: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (position, type)
    lets: dict[str, list[Any]] = field(default_factory=dict)  # name -> its let_declarations, in order


class _FileScanner:
    def __init__(self, imports: dict[str, str], read_format: Callable[[str], MetricText] | None = None) -> None:
        self.imports = imports
        self.read_format = read_format
        self.registrations: list[ClientRegistration] = []
        self.calls: list[ClientCall] = []
        self.aliases: dict[str, str] = {}
        self.label_sets: dict[str, tuple[ClientLabel, ...]] = {}
        self.functions: dict[str, ClientFunction] = {}
        self.bucket_constants: dict[str, tuple[float, ...]] = {}
        self.struct_fields: dict[str, dict[str, str]] = {}
        # `impl S { fn new(..) -> Self }`: (S, new) of the file's inherent methods that return their type
        self.makers: set[tuple[str, str]] = set()
        self.typed_consts: dict[str, str] = {}  # `impl TypedMetric for X { const TYPE ... }`: X -> kind
        self.encode_impls: list[tuple[str, Any]] = []  # (type, impl node) of `impl EncodeMetric for X`
        self.in_tests = 0
        self.collectors: list[int] = []
        self.scopes: dict[int, _Function] = {}

    # -- items: the definitions other files of the crate may need --------------------------------

    def visit_items(self, node: Any) -> None:
        attrs: list[str] = []
        for child in node.named_children:
            kind = child.type
            if kind == "attribute_item":
                attrs.append(_squash(child))
                continue
            if kind in ("line_comment", "block_comment"):
                continue
            kept, attrs = attrs, []
            if kind == "mod_item" and not _is_test(kept):
                body = child.child_by_field_name("body")
                if body is not None:
                    self.visit_items(body)
            elif kind == "type_item":
                self.visit_alias(child)
            elif kind == "use_declaration":
                self.visit_reexport(child)
            elif kind == "struct_item":
                self.visit_struct(child, kept)
            elif kind in ("const_item", "static_item"):
                self.visit_constant(child)
            elif kind == "function_item":
                self.visit_free_function(child)
            elif kind == "impl_item":
                self.visit_impl(child)

    def visit_alias(self, node: Any) -> None:
        name, value = node.child_by_field_name("name"), node.child_by_field_name("type")
        if name is not None and value is not None and node.child_by_field_name("type_parameters") is None:
            self.aliases[_text(name)] = self.normal(value)

    def visit_reexport(self, node: Any) -> None:
        """`pub use prometheus_client::metrics::family::Family;`: the crate's other files may use
        `crate::Family`, which is client_rust's."""
        if node.child(0) is None or node.child(0).type != "visibility_modifier":
            return
        argument = node.child_by_field_name("argument")
        for path, alias in use_paths(argument) if argument is not None else ():
            last = path.rsplit("::", 1)[-1]
            if path.startswith(_CRATE + "::") and last not in ("*", "self"):
                self.aliases[alias or last] = f"{_CRATE}::{last}"

    def visit_struct(self, node: Any, attrs: list[str]) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None or body.type != "field_declaration_list":
            return
        fields: list[tuple[str, str, bool]] = []
        flatten = False
        for child in body.named_children:
            if child.type == "attribute_item":
                flatten = flatten or _squash(child) == "#[prometheus(flatten)]"
            elif child.type == "field_declaration":
                fname, ftype = child.child_by_field_name("name"), child.child_by_field_name("type")
                if fname is not None and ftype is not None:
                    fields.append((_text(fname).removeprefix("r#"), self.normal(ftype), flatten))
                flatten = False
        self.struct_fields[_text(name)] = {fname: ftype for fname, ftype, _flat in fields}
        if any(re.search(r"derive\(.*\bEncodeLabelSet\b", a) for a in attrs):
            # a label's type does not matter, a flattened label set's does
            self.label_sets[_text(name)] = tuple(ClientLabel(f, t if flat else "", flat) for f, t, flat in fields)

    def visit_constant(self, node: Any) -> None:
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None:
            return
        if value.type == "reference_expression":  # `const B: &[f64] = &[...]`
            value = value.child_by_field_name("value") or value
        if value.type == "array_expression":
            numbers = _numbers(value.named_children)
            if numbers is not None:
                self.bucket_constants[_text(name)] = numbers

    def visit_free_function(self, node: Any) -> None:
        name, returns = node.child_by_field_name("name"), node.child_by_field_name("return_type")
        if name is None or returns is None:
            return
        tail = _tail(node.child_by_field_name("body"))
        buckets = None
        if tail is not None and tail.type == "call_expression":
            maker = _maker(tail)
            if maker is not None and maker[1] == "new":
                args = _args(tail)
                buckets = self.buckets(args[0], None) if args else None
        self.functions[_text(name)] = ClientFunction(self.normal(returns), buckets)

    def visit_impl(self, node: Any) -> None:
        trait, target, body = (node.child_by_field_name(f) for f in ("trait", "type", "body"))
        if target is not None and body is not None and trait is None:
            target_name = _type_base(_squash(target))
            for item in body.named_children:
                returns = item.child_by_field_name("return_type") if item.type == "function_item" else None
                if returns is not None and _type_base(_squash(returns)) in ("Self", target_name):
                    self.makers.add((target_name, _text(item.child_by_field_name("name"))))
        if trait is None or target is None or body is None:
            return
        trait_name = _squash(trait).rsplit("::", 1)[-1]
        target_name = _type_base(_squash(target))
        if trait_name == "TypedMetric":
            for item in body.named_children:
                if item.type == "const_item" and _text(item.child_by_field_name("name")) == "TYPE":
                    kind = re.search(r"=(?:\w+::)*MetricType::(\w+);", _squash(item))
                    self.typed_consts[target_name] = kind.group(1).lower() if kind else ""
        elif trait_name == "EncodeMetric":
            self.encode_impls.append((target_name, node))

    def own_metric_types(self) -> dict[str, tuple[str, int]]:
        """`impl EncodeMetric for X`: X's kind from its `metric_type()` (`MetricType::Histogram`, or
        `Self::TYPE` of its `impl TypedMetric`), "" when that does not say."""
        out: dict[str, tuple[str, int]] = {}
        for target, node in self.encode_impls:
            kind = ""
            for item in node.child_by_field_name("body").named_children:
                if item.type == "function_item" and _text(item.child_by_field_name("name")) == "metric_type":
                    body = _squash(item.child_by_field_name("body") or item)  # one answer, or none is read
                    named = re.fullmatch(r"\{(?:\w+::)*MetricType::(\w+)\}", body)
                    if named is not None:
                        kind = named.group(1).lower()
                    elif re.fullmatch(r"\{(?:Self|<Selfas(?:\w+::)*TypedMetric>)::TYPE\}", body):
                        kind = self.typed_consts.get(target, "")
            out[target] = (kind, _line(node))
        return out

    # -- registrations --------------------------------------------------------------------------

    def visit_method_call(self, call: Any, method: str) -> None:
        if method not in ("register", "register_with_unit", "register_collector"):
            return
        function = _enclosing_function(call)
        if _in_test(call):
            self.in_tests += method != "register_collector"
            return
        if method == "register_collector":
            self.collectors.append(_line(call))
            return
        args = _args(call)
        if len(args) != (3 if method == "register" else 4) or function is None:
            return
        scope = self.scope(function)
        receiver = call.child_by_field_name("function").child_by_field_name("value")
        unit = self.unit(args[2]) if method == "register_with_unit" else None
        self.registrations.append(ClientRegistration(
            _line(call), self.string(args[0]), self.string(args[1]), unit, self.value(args[-1], scope, call.start_byte),
            self.registry(receiver, scope, call.start_byte)))

    def scope(self, function: Any) -> _Function:
        known = self.scopes.get(function.start_byte)
        if known is not None:
            return known
        impl = _enclosing(function, "impl_item")
        owner = _type_base(_squash(impl.child_by_field_name("type"))) if impl is not None else ""
        name = _text(function.child_by_field_name("name"))
        scope = _Function(function, f"{owner}::{name}" if owner else name, owner)
        position = 0
        for param in function.child_by_field_name("parameters").named_children:
            if param.type == "parameter":
                pattern, ptype = param.child_by_field_name("pattern"), param.child_by_field_name("type")
                if pattern is not None and pattern.type == "identifier" and ptype is not None:
                    scope.params[_text(pattern)] = (position, self.normal(ptype))
                position += 1
        body = function.child_by_field_name("body")
        for let in capture_nodes(body, "(let_declaration) @let").get("let", ()) if body is not None else ():
            pattern = let.child_by_field_name("pattern")
            if pattern is not None and pattern.type == "identifier":
                scope.lets.setdefault(_text(pattern), []).append(let)
        self.scopes[function.start_byte] = scope
        return scope

    def let_before(self, scope: _Function, name: str, position: int) -> Any:
        found = None
        for let in scope.lets.get(name, ()):
            if let.start_byte < position:
                found = let
        return found

    # -- the registry's origin ------------------------------------------------------------------

    def registry(self, node: Any, scope: _Function, position: int, depth: int = 0) -> ClientRegistry:
        node = _strip(node)
        if depth > _MAX_DEPTH:
            return ClientRegistry(unknown=f"registry {_clip(_squash(node))}: followed too far")
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            args = _args(node)
            if function.type == "field_expression":
                method = _text(function.child_by_field_name("field"))
                inner = function.child_by_field_name("value")
                if method == "sub_registry_with_prefix":
                    base = self.registry(inner, scope, position, depth + 1)
                    prefix = _literal(args[0]) if args else None
                    if prefix is None:
                        return ClientRegistry(unknown=f"prefix {_clip(_squash(node))} is not a literal")
                    return _joined(base, prefix, ())
                if method == "sub_registry_with_label":
                    base = self.registry(inner, scope, position, depth + 1)
                    key = _first_string(args[0]) if args else None
                    if key is None:
                        return ClientRegistry(unknown=f"label of {_clip(_squash(node))} is not a literal")
                    return _joined(base, "", (key,))
                return ClientRegistry(unknown=f"registry {_clip(_squash(node))}")
            maker = _maker(node)
            if maker is not None and _type_base(maker[0]) == "Registry":
                if maker[1] == "default":
                    return ClientRegistry()
                if maker[1] == "with_prefix" and args and _literal(args[0]) is not None:
                    return ClientRegistry(prefix=_literal(args[0]) or "")
            return ClientRegistry(unknown=f"registry {_clip(_squash(node))}")
        if node.type == "identifier":
            name = _text(node)
            let = self.let_before(scope, name, position)
            if let is not None and let.child_by_field_name("value") is not None:
                return self.registry(let.child_by_field_name("value"), scope, let.start_byte, depth + 1)
            if name in scope.params:
                return ClientRegistry(function=scope.qualname, index=scope.params[name][0])
        return ClientRegistry(unknown=f"registry {_clip(_squash(node))} comes from outside the function")

    def registry_argument(self, node: Any, scope: _Function, position: int) -> ClientRegistry | None:
        """The origin of a call argument that is a registry (a `Registry` made or sub-registered
        here, or a registry parameter handed on); None for any other argument."""
        bare = _strip(node)
        if bare.type == "identifier":
            name = _text(bare)
            let = self.let_before(scope, name, position)
            if let is not None:
                value = _squash(let.child_by_field_name("value"))
                if "Registry" not in value and "sub_registry" not in value:
                    return None
            elif name not in scope.params or not _REGISTRY_TYPE.fullmatch(scope.params[name][1]):
                return None
        elif "sub_registry_with" not in _squash(bare):
            return None
        origin = self.registry(bare, scope, position)
        return None if origin.unknown else origin

    def gather_calls(self, functions: Any) -> None:
        """Calls handing a registry to a function of the crate, in the functions that hold one
        (lib.rs's `Metrics::new` making a `Registry` and handing it to each `register`)."""
        for function in functions:
            if b"egistry" not in function.text or function.child_by_field_name("body") is None or _in_test(function):
                continue
            scope = self.scope(function)
            for call in capture_nodes(function.child_by_field_name("body"), "(call_expression) @c").get("c", ()):
                if _enclosing_function(call) != function:
                    continue
                callee = self.callee(call, scope)
                for index, arg in enumerate(_args(call)) if callee else ():
                    origin = self.registry_argument(arg, scope, call.start_byte)
                    if origin is not None:
                        self.calls.append(ClientCall(callee, index, origin, _line(call)))

    def callee(self, call: Any, scope: _Function) -> str:
        """The called function as the driver names functions: `S::f` (`Self::f`, `self.f` in
        `impl S`, `crate::m::S::f`) or `f`; "" for other method calls and closures."""
        function = call.child_by_field_name("function")
        if function.type == "generic_function":
            function = function.child_by_field_name("function")
        if function.type == "identifier":
            return _text(function)
        if function.type == "scoped_identifier":
            parts = re.sub(r"<.*?>", "", _squash(function)).split("::")
            if parts[0] == "Self":
                parts[0] = scope.owner
            return "::".join(parts[-2:]) if len(parts) > 1 and parts[-2][:1].isupper() else parts[-1]
        if function.type == "field_expression" and function.child_by_field_name("value").type == "self":
            return f"{scope.owner}::{_text(function.child_by_field_name('field'))}" if scope.owner else ""
        return ""

    # -- the metric handed to register ----------------------------------------------------------

    def string(self, node: Any) -> MetricText:
        return _string(node, self.read_format)

    def value(self, arg: Any, scope: _Function, position: int) -> ClientValue:
        node = _strip(arg)
        text = _clip(_squash(arg))
        if node.type == "identifier":
            name = _text(node)
            let = self.let_before(scope, name, position)
            declared = ""
            made = ClientValue()
            if let is not None:
                ltype, lvalue = let.child_by_field_name("type"), let.child_by_field_name("value")
                declared = self.normal(ltype) if ltype is not None else ""
                if lvalue is not None:
                    made = self.made(lvalue, scope, 0)
            elif name in scope.params:
                declared = scope.params[name][1]
            return ClientValue(declared=declared, expression=made.expression, call=made.call,
                               field=self.stored_field(scope, name), buckets=made.buckets,
                               info_labels=made.info_labels, text=text)
        holder = self.holder(node.child_by_field_name("value"), scope, position) \
            if node.type == "field_expression" else None
        if holder is not None:
            fields = self.struct_fields.get(holder, {})
            field_name = _text(node.child_by_field_name("field"))
            return ClientValue(field=fields.get(field_name, ""), buckets=self.field_buckets(holder, field_name, node),
                               text=text)
        made = self.made(node, scope, 0)
        return ClientValue(expression=made.expression, call=made.call, buckets=made.buckets,
                           info_labels=made.info_labels, text=text)

    def holder(self, node: Any, scope: _Function, position: int) -> str | None:
        """The struct of this file whose field ``node.field`` reads: ``self``'s, a parameter's or a
        ``let``'s declared type, or what ``let x = S::new(..)`` makes when S's method returns Self."""
        node = _strip(node)
        if node.type == "self":
            return scope.owner
        if node.type != "identifier":
            return None
        name = _text(node)
        let = self.let_before(scope, name, position)
        written = ""
        if let is not None:
            ltype, lvalue = let.child_by_field_name("type"), let.child_by_field_name("value")
            if ltype is not None:
                written = _squash(ltype)
            elif lvalue is not None and _strip(lvalue).type == "call_expression":
                function = _strip(lvalue).child_by_field_name("function")
                if function.type == "scoped_identifier" and function.child_by_field_name("path") is not None:
                    owner = _type_base(_squash(function.child_by_field_name("path")))
                    owner = scope.owner if owner == "Self" else owner
                    if (owner, _text(function.child_by_field_name("name"))) in self.makers:
                        written = owner
        elif name in scope.params:
            written = scope.params[name][1]
        base = _type_base(written.lstrip("&").removeprefix("mut").strip()) if written else ""
        return base if base in self.struct_fields else None

    def made(self, node: Any, scope: _Function, depth: int) -> ClientValue:
        """What the expression that makes a metric says: the type it names, the crate fn it calls,
        the buckets it gives."""
        node = _strip(node)
        if node.type != "call_expression" or depth > _MAX_DEPTH:
            return ClientValue()
        function = node.child_by_field_name("function")
        args = _args(node)
        maker = _maker(node)
        if maker is not None and maker[1] in _MAKERS:
            written, method = maker[0].replace("::<", "<"), maker[1]  # `Family::<L, M>` is the type `Family<L, M>`
            base = _type_base(self.normal_text(written))
            buckets = None
            labels = None
            if method == "new_with_constructor" and args:
                buckets = self.constructor_buckets(args[0], scope, depth)
            elif method == "new" and base.endswith("Histogram") and args:
                buckets = self.buckets(args[0], scope)
            elif method == "new" and base.endswith("Info") and args:
                labels = _label_keys(args[0])
            return ClientValue(expression=self.normal_text(written), buckets=buckets, info_labels=labels)
        if function.type == "identifier":
            name = _text(function)
            let = self.let_before(scope, name, node.start_byte)
            closure = let.child_by_field_name("value") if let is not None else None
            if closure is not None and closure.type == "closure_expression":
                body = closure.child_by_field_name("body")
                return self.made(_tail(body) if body.type == "block" else body, scope, depth + 1)
            return ClientValue(call=name)
        if function.type == "scoped_identifier":
            path = function.child_by_field_name("path")
            if path is not None and not _type_base(_squash(path))[:1].isupper():
                return ClientValue(call=_text(function.child_by_field_name("name")))  # `helpers::make()`
        return ClientValue()

    def constructor_buckets(self, arg: Any, scope: _Function, depth: int) -> ClientBuckets:
        """The buckets of `Family::new_with_constructor(c)`: c a crate fn (`f as fn() -> Histogram`,
        `f`) or a closure making the histogram; anything else (a MetricConstructor) as written."""
        node = _strip(arg)
        if node.type == "type_cast_expression":
            node = node.child_by_field_name("value")
        if node.type == "identifier" and self.let_before(scope, _text(node), arg.start_byte) is None:
            return ClientBuckets(function=_text(node))
        if node.type == "closure_expression":
            body = node.child_by_field_name("body")
            made = self.made(_tail(body) if body.type == "block" else body, scope, depth + 1)
            if made.buckets is not None:
                return made.buckets
            if made.call:
                return ClientBuckets(function=made.call)
        return ClientBuckets(text=f"constructor {_clip(_squash(arg))}")

    def buckets(self, arg: Any, scope: _Function | None) -> ClientBuckets:
        """`Histogram::new(ITER)`'s ITER: an array, a constant array (through `.iter().copied()`,
        `.into_iter()`), `exponential_buckets` / `linear_buckets` / `exponential_buckets_range`."""
        node = _strip(arg)
        while node.type == "call_expression" and node.child_by_field_name("function").type == "field_expression":
            function = node.child_by_field_name("function")
            if _text(function.child_by_field_name("field")) not in _PASS_THROUGH:
                break
            node = _strip(function.child_by_field_name("value"))
        if node.type == "array_expression":
            numbers = _numbers(node.named_children)
            if numbers is not None:
                return ClientBuckets(values=numbers)
        elif node.type == "macro_invocation" and _squash(node).startswith("vec!"):
            numbers = _numbers_text(_squash(node)[5:-1])
            if numbers is not None:
                return ClientBuckets(values=numbers)
        elif node.type in ("identifier", "scoped_identifier"):
            name = _squash(node).rsplit("::", 1)[-1]
            if name.isupper() or "_" in name and name.upper() == name:
                return ClientBuckets(constant=name)
        elif node.type == "call_expression":
            computed = _computed_buckets(node)
            if computed is not None:
                return ClientBuckets(values=computed)
        return ClientBuckets(text=_clip(_squash(arg)))

    def field_buckets(self, holder: str, field_name: str, node: Any) -> ClientBuckets | None:
        """The buckets of the histogram the file's struct literals store in ``holder.field_name``
        (``Self { f: Family::new_with_constructor(|| Histogram::new(...)) }`` in ``impl S``), when
        they all give the same; None when none shows them."""
        root = node
        while root.parent is not None:
            root = root.parent
        found: set[ClientBuckets] = set()
        for struct in capture_nodes(root, "(struct_expression) @s").get("s", ()):
            function = _enclosing_function(struct)
            if function is None or struct.child_by_field_name("body") is None:
                continue
            scope = self.scope(function)
            if _squash(struct.child_by_field_name("name")) not in (holder, "Self" if scope.owner == holder else holder):
                continue
            for init in struct.child_by_field_name("body").named_children:
                if init.type == "field_initializer" and _text(init.child_by_field_name("field")) == field_name:
                    made = self.made(init.child_by_field_name("value"), scope, 0)
                    found.add(made.buckets if made.buckets is not None else ClientBuckets(text=_clip(_squash(init))))
        return next(iter(found)) if len(found) == 1 else None

    def stored_field(self, scope: _Function, name: str) -> str:
        """The type of the field of the struct the function builds (`Self { name, .. }` or
        `Self { f: name.clone() }` in `impl S`) that the metric is stored in."""
        fields = self.struct_fields.get(scope.owner)
        body = scope.node.child_by_field_name("body")
        if not fields or body is None:
            return ""
        for struct in capture_nodes(body, "(struct_expression) @s").get("s", ()):
            written = _squash(struct.child_by_field_name("name"))
            if written not in ("Self", scope.owner):
                continue
            for init in struct.child_by_field_name("body").named_children:
                if init.type == "shorthand_field_initializer" and _text(init) == name:
                    return fields.get(name, "")
                if init.type == "field_initializer":
                    value = init.child_by_field_name("value")
                    if value is not None and _strip(value).type == "identifier" and _text(_strip(value)) == name:
                        return fields.get(_text(init.child_by_field_name("field")), "")
        return ""

    def unit(self, arg: Any) -> MetricText:
        text = _squash(arg)
        named = re.fullmatch(r"(?:\w+::)*Unit::(\w+)", text)
        if named is not None and named.group(1) in _UNITS:
            return MetricText(_UNITS[named.group(1)])
        other = re.fullmatch(r'(?:\w+::)*Unit::Other\((?:String::from\()?("(?:[^"\\]|\\.)*")\)?(?:\.\w+\(\))*\)', text)
        if other is not None:
            return MetricText(_unescape(other.group(1)[1:-1]))
        return MetricText(text=_clip(text))

    # -- types ----------------------------------------------------------------------------------

    def normal(self, node: Any) -> str:
        return self.normal_text(_squash(node))

    def normal_text(self, text: str) -> str:
        """The type without spaces, each path as the driver reads it (module docstring)."""
        return _PATH.sub(lambda m: self.normal_path(m.group(0)), text.replace(" ", ""))

    def normal_path(self, path: str) -> str:
        parts = path.split("::")
        head = self.imports.get(parts[0], "")
        if parts[0] == _CRATE or (head == _CRATE or head.startswith(_CRATE + "::")):
            return f"{_CRATE}::{parts[-1] if len(parts) > 1 else head.rsplit('::', 1)[-1]}"
        if len(parts) == 1 and head:
            return head.rsplit("::", 1)[-1]  # `use crate::x::Y as Z;`: Z is the crate's Y
        return parts[-1]

    def finish(self) -> ClientRustFacts | None:
        facts = ClientRustFacts(
            tuple(sorted(self.registrations, key=lambda r: r.line)),
            tuple(sorted(set(self.calls), key=lambda c: (c.line, c.callee, c.index))),
            self.aliases, self.label_sets, self.own_metric_types(), self.functions, self.bucket_constants,
            self.in_tests, tuple(self.collectors))
        return facts if facts != ClientRustFacts() else None


# -- small readers ---------------------------------------------------------------------------------

def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _squash(node: Any) -> str:
    return re.sub(r"\s+", "", _text(node)) if node is not None else ""


def _clip(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _line(node: Any) -> int:
    return node.start_point[0] + 1


def _args(call: Any) -> list[Any]:
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type not in ("line_comment", "block_comment")] \
        if arguments is not None else []


def _strip(node: Any) -> Any:
    """`&mut x`, `*x`, `(x)`, `x.clone()` -> `x`: the same metric or registry."""
    while True:
        if node.type in ("reference_expression", "parenthesized_expression") and node.named_child_count:
            node = node.child_by_field_name("value") or node.named_children[-1]
        elif node.type == "unary_expression" and _text(node).startswith("*"):
            node = node.named_children[0]
        elif (node.type == "call_expression" and not _args(node)
              and node.child_by_field_name("function").type == "field_expression"
              and _text(node.child_by_field_name("function").child_by_field_name("field")) in ("clone", "as_mut")):
            node = node.child_by_field_name("function").child_by_field_name("value")
        else:
            return node


def _maker(call: Any) -> tuple[str, str] | None:
    """`T::m(...)` / `T::<A, B>::m(...)` / `<T>::m(...)` / `<T as Tr>::m(...)` -> (T as written, m)."""
    function = call.child_by_field_name("function")
    if function.type == "generic_function":
        function = function.child_by_field_name("function")
    if function.type != "scoped_identifier":
        return None
    path, name = function.child_by_field_name("path"), function.child_by_field_name("name")
    if path is None or name is None:
        return None
    if path.type == "bracketed_type" and path.named_children:  # `<Registry>::default()`: the type inside
        path = path.named_children[0]
        if path.type == "qualified_type" and path.named_children:  # `<Registry as Default>`
            path = path.named_children[0]
    return _squash(path), _text(name)


def _type_base(text: str) -> str:
    """`a::B<C>` -> `B`."""
    return text.split("<", 1)[0].rsplit("::", 1)[-1]


def _tail(block: Any) -> Any:
    """The value of a block: its last expression when no `;` follows it, or a `return x;`."""
    if block is None:
        return None
    children = [c for c in block.named_children if c.type not in ("line_comment", "block_comment")]
    if not children:
        return None
    last = children[-1]
    if last.type == "expression_statement":
        inner = last.named_children[0] if last.named_child_count else None
        if inner is not None and inner.type == "return_expression" and inner.named_child_count:
            return inner.named_children[0]
        return None
    return last


def _enclosing(node: Any, kind: str) -> Any:
    parent = node.parent
    while parent is not None and parent.type != kind:
        parent = parent.parent
    return parent


def _enclosing_function(node: Any) -> Any:
    return _enclosing(node, "function_item")


def _is_test(attrs: list[str]) -> bool:
    return any(a in ("#[test]", "#[cfg(test)]") or a.startswith("#[tokio::test") for a in attrs)


def _in_test(node: Any) -> bool:
    """Under a `#[cfg(test)]` module or a `#[test]` function."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("mod_item", "function_item"):
            attrs = []
            prev = parent.prev_named_sibling
            while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
                if prev.type == "attribute_item":
                    attrs.append(_squash(prev))
                prev = prev.prev_named_sibling
            if _is_test(attrs):
                return True
        parent = parent.parent
    return False


def _joined(base: ClientRegistry, prefix: str, labels: tuple[str, ...]) -> ClientRegistry:
    """registry.rs ``sub_registry_with_prefix``: the parent's prefix, `_`, the new one."""
    joined = f"{base.prefix}_{prefix}" if base.prefix and prefix else base.prefix or prefix
    return ClientRegistry(prefix=joined, labels=base.labels + labels, function=base.function, index=base.index,
                          unknown=base.unknown)


def _literal(node: Any) -> str | None:
    node = _strip(node)
    if node.type in ("string_literal", "raw_string_literal"):
        return _string_value(node)
    if node.type == "call_expression":  # "x".to_string(), "x".into(), String::from("x")
        function = node.child_by_field_name("function")
        args = _args(node)
        if function.type == "field_expression" and not args:
            return _literal(function.child_by_field_name("value"))
        if _squash(function) == "String::from" and len(args) == 1:
            return _literal(args[0])
    return None


def _string(node: Any, read_format: Callable[[str], MetricText] | None = None) -> MetricText:
    """A name or help argument: its value when a literal, a ``format!``'s pieces (``read_format``),
    else how it is written and the name a constant of the crate would have."""
    value = _literal(node)
    if value is not None:
        return MetricText(value)
    text = _squash(node)
    if read_format is not None and node.type == "macro_invocation" and text.startswith("format!"):
        return read_format(_text(node))
    return MetricText(text=_clip(text), constant=text.lstrip("&").rsplit("::", 1)[-1])


def _string_value(node: Any) -> str:
    text = _text(node)
    if node.type == "raw_string_literal":
        return re.sub(r'^r#*"|"#*$', "", text)
    return _unescape(text[1:-1])


def _unescape(body: str) -> str:
    """Rust string escapes, including a `\\` at the end of a line (the newline and the next
    line's leading spaces are dropped)."""
    body = re.sub(r"\\\n\s*", "", body)
    return re.sub(r"\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)",
                  lambda m: _ESCAPES.get(m.group(1), chr(int(m.group(1)[2:-1] if m.group(1)[0] == "u"
                                                         else m.group(1)[1:], 16))
                                         if m.group(1)[0] in "ux" and len(m.group(1)) > 1 else m.group(1)), body)


def _first_string(node: Any) -> str | None:
    found = re.search(r'"((?:[^"\\]|\\.)*)"', _text(node))
    return _unescape(found.group(1)) if found else None


def _label_keys(node: Any) -> tuple[str, ...] | None:
    """`Info::new(vec![("version", v), ...])`: the first string of each pair; None when they are not literals."""
    text = _squash(node)
    pairs = re.findall(r'\((?:"((?:[^"\\]|\\.)*)"|([^,()]*)),', text)
    if not pairs or any(not key for key, _other in pairs):
        return None
    return tuple(_unescape(key) for key, _other in pairs)


def _number(node: Any) -> float | None:
    text = _squash(node)
    if node.type == "unary_expression" and text.startswith("-"):
        inner = _number(node.named_children[0])
        return -inner if inner is not None else None
    if node.type not in ("float_literal", "integer_literal"):
        return None
    return _parse_number(text)


def _parse_number(text: str) -> float | None:
    """A Rust number literal's value: `1e-3`, `1_000.0`, `2.5_f64`, `10u32`."""
    text = re.sub(r"_?(?:f64|f32|u\d+|i\d+|usize|isize)$", "", text).replace("_", "")
    try:
        return float(text)
    except ValueError:
        return None


def _numbers(nodes: list[Any]) -> tuple[float, ...] | None:
    values = [_number(n) for n in nodes if n.type not in ("line_comment", "block_comment")]
    return tuple(v for v in values if v is not None) if values and None not in values else None


def _numbers_text(text: str) -> tuple[float, ...] | None:
    items = [t for t in text.strip("[]").split(",") if t]
    values = [_parse_number(t) for t in items]
    return tuple(v for v in values if v is not None) if values and None not in values else None


def _computed_buckets(call: Any) -> tuple[float, ...] | None:
    """client_rust 0.25 ``metrics/histogram.rs``: ``exponential_buckets(start, factor, length)``
    (start * factor^i), ``linear_buckets(start, width, length)`` (start + width * i),
    ``exponential_buckets_range(min, max, length)`` (min * ((max / min)^(1 / (length - 1)))^i)."""
    function = _squash(call.child_by_field_name("function")).rsplit("::", 1)[-1]
    numbers = [_number(_strip(a)) for a in _args(call)]
    if len(numbers) != 3 or None in numbers:
        return None
    a, b, n = (float(x) for x in numbers if x is not None)
    length = int(n)
    if function == "exponential_buckets":
        return tuple(a * math.pow(b, i) for i in range(length))
    if function == "linear_buckets":
        return tuple(a + b * i for i in range(length))
    if function == "exponential_buckets_range":
        if length < 1 or a <= 0.0:
            return ()
        growth = math.pow(b / a, 1.0 / (length - 1)) if length > 1 else 1.0
        return tuple(a * math.pow(growth, i) for i in range(length))
    return None
