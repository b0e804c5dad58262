"""The Python symbol graph: modules, classes, functions, methods and attributes, and their edges.

Per file (in workers, cached): :mod:`extractor.python.scan` walks the stdlib ``ast`` (libcst for files
whose syntax is newer than the running interpreter: definitions and imports only). Per system:
module names come from the package layout (:mod:`extractor.naming`); definitions and attributes
become nodes (:mod:`extractor.python.defs`); names resolve the way Python binds them
(:mod:`extractor.python.resolve`) to graph nodes or to external qualified names, giving ``inherits``,
``imports`` and ``calls`` edges; names that ``__all__`` re-exports become ``attribute`` nodes with an
``aliases`` edge to what they name; constructors that dataclasses, attrs, pydantic, msgspec,
NamedTuple and TypedDict generate are added (:mod:`extractor.python.constructors`); and every node says
why it is, or is not, public API (:mod:`extractor.python.api`).

Why ast first: over vLLM 0.10.2's 1,872 files it parses in 3.5 s where ``libcst.parse_module``
takes about 33 s, and nothing here needs libcst's lossless tree or its metadata providers.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from extractor import naming
from extractor.python import api as pyapi
from extractor.python import constructors as pyconstructors
from extractor.python import exports as pyexports
from extractor.context import Context, SourceFile
from extractor.model import Binding as ModuleBinding
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind,
                             Severity, Step, amend, amend_each, edge_key, node_key)
from extractor.python.facts import CLASS, PythonFacts
from extractor.python.fields import Binding, ClassSpec
from extractor.python.defs import (ClassFacts, DefinitionsAhead, ModuleDefs, PyGraph, Signatures, place_attributes,
                                   place_definitions)
from extractor.python.expr import KW_ONLY, POS_KW, POS_ONLY, SUBSCRIPTED, display_signature
from extractor.python.resolve import (ModuleLookup, PyModule, Resolver, enclosing_class, lookup, module_bindings,
                                      resolve_call, resolve_text)
from extractor.python.scan import scan_python
from extractor.support.forkmap import MAX_CHILDREN, fork_map, spans
from extractor.support.pathsuffix import by_suffix


class CallSite(msgspec.Struct, frozen=True, order=True, array_like=True, gc=False):
    """A call whose callee resolved outside the system, as dotted text (``torch.ops._C.foo``).

    A msgspec Struct: forked children send them as msgpack, decoded in C (50,000 on vLLM, where a
    dataclass is built by a Python-level ``__init__``), and they compare in C."""

    caller: str  # node id of the enclosing function, class body or module
    callee: str
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class PythonShared:
    """What the Python graph step shares with later steps: the calls that resolved outside the
    system (the binding steps match them with C++, Rust and Go), and the graph's indexes those
    steps look names up in, so that none builds them again from the node and edge lists."""

    call_sites: tuple[CallSite, ...]
    nodes: Mapping[str, Node] = dataclasses.field(default_factory=dict)  # every node by id, outside ones too
    reexported: Mapping[str, str] = dataclasses.field(default_factory=dict)  # a re-export's node id -> what it names


@functools.cache
def _libraries() -> dict[str, dict[str, frozenset[str]]]:
    return pyconstructors.load_libraries()


@functools.cache
def _api_rules() -> pyapi.ApiRules:
    return pyapi.load_rules()


def extract_python_graph(ctx: Context) -> Contribution[PythonShared]:
    scanned: list[tuple[SourceFile, PythonFacts]] = list(ctx.facts("python", Language.PYTHON))
    names, diagnostics = naming.module_names(f for f, _facts in scanned)
    placed_ahead: Mapping[str, tuple[str, ModuleDefs]] = ctx.take_ahead(STEP)
    g = PyGraph(diagnostics=diagnostics)
    modules: dict[str, PyModule] = {}
    classes: dict[str, tuple[PyModule, ClassFacts]] = {}
    defs_of: dict[str, ModuleDefs] = {}
    signatures = Signatures()
    for f, facts in scanned:
        name = names[f.path]
        module = PyModule(name, f, facts, naming.is_package_file(f.rel))
        modules[name] = module
        mid = naming.py_id(name)
        g.nodes[mid] = Node(mid, NodeKind.MODULE, name.rsplit(".", 1)[-1], name, "python", f.path,
                            1 if f.lines else 0, facts.doc,
                            tags=("libcst-fallback",) if facts.fallback else ())
        ahead = placed_ahead.get(f.path)
        defs = defs_of[name] = ahead[1] if ahead is not None and ahead[0] == name else \
            place_definitions(name, f.path, facts, signatures)
        g.nodes.update(defs.nodes)
        g.contains.extend(defs.edges)
        for parent, found in defs.members.items():
            g.members[parent].update(found)
        classes.update((cid, (module, cf)) for cid, cf in defs.classes.items())
    # Submodules are members of their package.
    for name in modules:
        parent = name.rpartition(".")[0]
        if parent in modules:
            g.members[naming.py_id(parent)].setdefault(name.rpartition(".")[2], naming.py_id(name))
            g.contains.append(Edge(naming.py_id(parent), naming.py_id(name), EdgeKind.CONTAINS,
                                   modules[name].file.path, 0))
    for module in modules.values():
        module.namespace.update({k: ("node", v) for k, v in g.members[naming.py_id(module.name)].items()
                                 if g.nodes[v].kind is not NodeKind.MODULE})
        module_bindings(module, modules)
    resolver = Resolver(modules, g.nodes, g.members)
    _bind_names(resolver, modules)
    full_bases = _inherits(g, resolver, classes)
    resolver.forget()
    exports = pyexports.module_exports(g, resolver, modules)
    for name, module in modules.items():
        defs = defs_of[name]
        placed = len(defs.edges)
        mid = naming.py_id(name)
        # the nodes already placed are g's own objects (an annotation is set in place): only new ones go in
        for node in place_attributes(name, module.file, module.facts, defs, frozenset(exports.get(name) or ())):
            g.nodes[node.id] = node
            if node.id.rpartition(".")[0] == mid:
                # A module-level name a re-export can point at (``X = Mapping[str, int]``).
                module.namespace.setdefault(node.name, ("node", node.id))
        g.contains.extend(defs.edges[placed:])
    resolver.forget()
    pyexports.reexports(g, resolver, modules, exports)
    children = pyexports.contained(g)
    pyexports.star_reexports(g, resolver, modules, exports, children)
    _constructors(g, resolver, classes, defs_of, naming.Lineage(full_bases))
    resolver.launchers = _launchers(modules)
    protos = by_suffix(f.path for f in ctx.files if f.language is Language.PROTO)
    call_sites = _last_pass(g, resolver, modules, exports, children, ctx.options.jobs,
                            meanwhile=functools.partial(_imports, g, modules, protos))
    return _contribution(g, scanned, modules, call_sites, ctx.options.jobs)


def _launchers(modules: dict[str, PyModule]) -> dict[str, dict[int | str, str]]:
    """The functions that launch a parameter as a kernel (``def launch(kernel, grid): kernel[grid](...)``),
    by id: each such parameter by its position and by its name."""
    out: dict[str, dict[int | str, str]] = {}
    for module in modules.values():
        heads = {(call.scope, call.callee[: -len(SUBSCRIPTED)]) for call in module.facts.calls
                 if call.callee.endswith(SUBSCRIPTED) and "." not in call.callee and "(" not in call.callee}
        if not heads:
            continue
        given = {d.qualname: d for d in module.facts.defs if d.kind == "function"}
        launched: dict[str, set[str]] = {}
        for scope, head in heads:
            # the function whose parameter the name is: this one, or one it is nested in (a closure)
            while scope and not (scope in given and any(p.name == head for p in given[scope].params)):
                scope = scope.rpartition(".<locals>.")[0]
            if scope:
                launched.setdefault(scope, set()).add(head)
        for d in given.values():
            names = launched.get(d.qualname)
            if not names:
                continue
            params: dict[int | str, str] = {}
            for i, param in enumerate(d.params):
                if param.name in names and param.kind in (POS_ONLY, POS_KW, KW_ONLY):
                    if param.kind != KW_ONLY:
                        params[i] = param.name
                    if param.kind != POS_ONLY:
                        params[param.name] = param.name
            if params:
                out[f"{naming.py_id(module.name)}.{d.qualname}"] = params
    return out


def _bind_names(resolver: Resolver, modules: dict[str, PyModule]) -> None:
    """What ``self.X`` holds, and module-level aliases (``X = pkg.Y``) as references (what locals
    hold: :attr:`PyModule.local_types`, on first use)."""
    nodes = resolver.nodes
    for module in modules.values():
        for typed in module.facts.types:
            if typed.name.startswith("self."):
                cls = enclosing_class(module, typed.scope, nodes)
                if cls is not None and typed.type:
                    resolver.attribute_types.setdefault(cls, {}).setdefault(typed.name[5:], []).append(
                        (module, typed.scope, typed.type))
        for attr in module.facts.attrs:
            text = attr.annotation or (attr.call.callee if attr.call is not None else "")
            if attr.where == CLASS and text:
                node = nodes.get(f"py:{module.name}.{attr.scope}")
                if node is not None and node.kind is NodeKind.CLASS:
                    # a later assignment in the body replaces an earlier one, as Python's does
                    resolver.class_attributes.setdefault(node.id, {})[attr.name] = (
                        module, attr.scope, text, bool(attr.annotation))
    # Each module's aliases in namespace order, found once: the passes below visit only them.
    aliases = {name: [key for key, (kind, _value) in module.namespace.items() if kind == "alias"]
               for name, module in modules.items()}
    # Two passes let an alias lean on another.
    for _ in range(2):
        for name, module in modules.items():
            for key in aliases[name]:
                binding = module.namespace.get(key)
                if binding is None or binding[0] != "alias":
                    continue  # followed in the first pass, or dropped
                head, _, rest = binding[1].partition(".")
                base = lookup(resolver, module, "", head)
                if base is None:
                    del module.namespace[key]
                    continue
                resolved = resolver.walk(base, rest.split(".") if rest else [], 0)
                if resolved[0] == "alias":
                    continue
                module.namespace[key] = ("ref", resolved[1]) if resolved[0] in ("ext", "missing") else resolved
    for name, module in modules.items():
        for key in aliases[name]:
            if key in module.namespace and module.namespace[key][0] == "alias":
                del module.namespace[key]  # still circular after two passes: not a name we can follow
    resolver.forget()


def _canonical(resolver: Resolver, module: PyModule, scope: str, text: str) -> str:
    """The qualified name ``text`` refers to (``dataclass`` -> ``dataclasses.dataclass``), else itself."""
    if not text:
        return text
    target = resolve_text(resolver, module, scope, text)
    if target is not None and target[0] in ("node", "ext", "builtin"):
        return naming.id_name(target[1])
    return text


def _inherits(g: PyGraph, resolver: Resolver, classes: dict[str, tuple[PyModule, ClassFacts]]) -> dict[str, list[str]]:
    """``inherits`` edges; returns every class's bases in order, outside ones by id (``py:abc.ABC``)."""
    full: dict[str, list[str]] = {}
    for nid, (module, cf) in sorted(classes.items()):
        if nid not in g.nodes:
            continue
        internal, every = [], []
        for text in cf.bases:
            target = resolve_text(resolver, module, cf.scope, text) if text else None
            if target is None or target[0] in ("missing", "local", "instance") or "()" in target[1]:
                # a base computed from a value (``tokenizer.__class__``) is not a qualified name
                g.stats["inherits_unresolved"] += 1
                continue
            if target[0] == "node":
                internal.append(target[1])
                every.append(target[1])
                g.edges.append(Edge(nid, target[1], EdgeKind.INHERITS, module.file.path, cf.line))
                g.stats["inherits_internal"] += 1
            else:
                every.append(g.ext_node(target[1]))
                g.edges.append(Edge(nid, every[-1], EdgeKind.INHERITS, module.file.path, cf.line))
                g.stats["inherits_external"] += 1
        resolver.set_bases(nid, internal)
        resolver.outside_bases[nid] = frozenset(b for b in every if b not in internal)
        full[nid] = every
    return full


def _constructors(g: PyGraph, resolver: Resolver, classes: dict[str, tuple[PyModule, ClassFacts]],
                  defs_of: dict[str, ModuleDefs], lineage: naming.Lineage) -> None:
    """Generated ``__init__``/``__new__`` methods, their fields tagged, and enum members marked."""
    specs: dict[str, ClassSpec] = {}
    for cid, (module, cf) in sorted(classes.items()):
        if cid not in g.nodes:
            continue
        decorators = tuple((_canonical(resolver, module, cf.scope, d), kw)
                           for d, kw in zip(cf.decorators, cf.decorator_keywords))
        bindings = []
        for attr in defs_of[module.name].bindings.get(cid, ()):
            call = attr.call
            callee, keywords, args = (call.callee, call.keywords, call.args) if call else ("", {}, ())
            bindings.append(Binding(attr.name, attr.line, attr.annotation, attr.value if attr.value_kind else None,
                                    _canonical(resolver, module, cf.scope, callee), keywords, args))
        own = frozenset(k for k, v in g.members.get(cid, {}).items() if g.nodes[v].kind is NodeKind.METHOD)
        specs[cid] = ClassSpec(cid, decorators, cf.keywords, tuple(bindings), own)
    libraries = _libraries()
    for gen in pyconstructors.generated_constructors(specs, lineage.mro, libraries):
        cls = g.nodes[gen.class_id]
        nid = f"{gen.class_id}.{gen.method}"
        returns = "None" if gen.method == "__init__" else ""
        written = g.nodes.get(nid)  # @attr.s replaces an __init__ written in the class
        g.nodes[nid] = Node(nid, NodeKind.METHOD, gen.method, f"{cls.qualname}.{gen.method}", "python", cls.path,
                            cls.line, f"generated by {gen.marker}", display_signature(gen.params, returns),
                            ("generated", gen.library, *gen.tags), params=gen.params, returns=returns,
                            sites=(Location(written.path, written.line),) if written is not None else ())
        g.contains.append(Edge(gen.class_id, nid, EdgeKind.CONTAINS, cls.path, cls.line))
        g.members[gen.class_id][gen.method] = nid
        g.stats["generated_constructors"] += 1
        for field in gen.fields:
            fid = f"{gen.class_id}.{field}"
            if fid in g.nodes and g.nodes[fid].kind is NodeKind.ATTRIBUTE:
                amend(g.nodes[fid], "tags", tuple(sorted({*g.nodes[fid].tags, "field"})))
        for name in gen.pseudo:  # ``x: InitVar[int]`` binds nothing on the class or its instances
            if g.nodes.get(f"{gen.class_id}.{name}", None) is not None \
                    and g.nodes[f"{gen.class_id}.{name}"].kind is NodeKind.ATTRIBUTE:
                del g.nodes[f"{gen.class_id}.{name}"]
    enums = pyconstructors.enum_classes(specs, lineage.mro, libraries)
    for edge in [e for e in g.contains if e.source in enums]:
        member = g.nodes.get(edge.target)
        # An enum's members are its plain class-level names; annotated names and functions are not.
        if member is not None and "class-attribute" in member.tags and not member.annotation \
                and member.value_kind != "lambda" and not member.name.startswith("_"):
            amend(member, "value_kind", "enum-member")


def _imports(g: PyGraph, modules: dict[str, PyModule], protos: Mapping[str, list[str]]) -> None:
    """``imports`` edges, each distinct imported name placed once (vLLM: 25,845 imports, most of
    them of names other modules import too). ``protos``: the system's .proto files by path suffix."""
    targets: dict[tuple[str, str], tuple[str, str]] = {}
    for module in modules.values():
        mid = naming.py_id(module.name)
        package = naming.package_of(module.name, module.is_package)
        for imported in module.facts.imports:
            line, level, name = imported.line, imported.level, imported.name
            base = naming.resolve_relative(package, imported.module, level)
            if base is None:
                g.diagnostics.append(Diagnostic(module.file.path, line, "import-beyond-top",
                                                f"relative import (level {level}) goes above the top package",
                                                Severity.INFO))
                g.stats["imports_unresolved"] += 1
                continue
            found = targets.get((base, name))
            if found is None:
                found = targets[base, name] = _import_target(g, modules, base, name, protos)
            stat, dest = found
            g.stats[stat] += 1
            if dest.startswith(_FILE):
                g.generated.append(Edge(mid, dest, EdgeKind.IMPORTS, module.file.path, line))
            elif dest != mid:
                g.edges.append(Edge(mid, dest, EdgeKind.IMPORTS, module.file.path, line))


_FILE = naming.file_id("")
_PB2 = re.compile(r"(\w+?)_pb2(?:_grpc)?")  # protoc's Python module for x.proto, and grpc's


def _import_target(g: PyGraph, modules: dict[str, PyModule], base: str, name: str,
                   protos: Mapping[str, list[str]]) -> tuple[str, str]:
    """(stat, node id) of what ``from base import name`` (``import base``: name "") imports: the
    module named, else the .proto of the system a protoc-generated module (``x_pb2``, not in the
    tree) is made from, else the innermost module of the system it lies in (``pkg.missing``),
    else an outside name."""
    full = f"{base}.{name}" if name and name != "*" and base else (base or name)
    dest = full if full in modules else base
    if dest in modules:
        return ("imports_internal", naming.py_id(dest))
    if protos and "_pb2" in full:
        parts = full.split(".")
        for i in range(len(parts), 0, -1):  # `x_pb2`, `x_pb2.Message`, `x_pb2_grpc.XStub`
            m = _PB2.fullmatch(parts[i - 1])
            if m is None:
                continue
            proto = _proto_of(parts[:i - 1], m.group(1), protos)
            if proto:
                return ("imports_protoc_generated", naming.file_id(proto))
            if proto == "":
                return ("imports_protoc_ambiguous", g.ext_node(".".join(parts[:i])))
            break
    inner = next((".".join(dest.split(".")[:i]) for i in range(dest.count(".") + 1, 0, -1)
                  if ".".join(dest.split(".")[:i]) in modules), None)
    if inner is not None:
        return ("imports_internal", naming.py_id(inner))
    return ("imports_external", g.ext_node(dest))


def _proto_of(package: list[str], stem: str, protos: Mapping[str, list[str]]) -> str | None:
    """The .proto whose generated module ``package`` + ``stem``_pb2 (``ray.core.generated.gcs_pb2``)
    is: the file ending in the longest part of the module's path (``ray/core/generated/gcs.proto``,
    ..., ``gcs.proto``) that some file ends in; "" when several do (ambiguous); None when none does."""
    for start in range(len(package) + 1):
        found = protos.get("/".join((*package[start:], stem + ".proto")))
        if found:
            return found[0] if len(found) == 1 else ""
    return None


class ModuleCalls(msgspec.Struct, array_like=True, gc=False):
    """What one module's calls give, as plain tuples (cheap to build, and to send between processes):
    ``calls`` edges (caller, callee, first line), calls resolved outside the system in the
    module's order, and counts by how each call resolved."""

    edges: list[tuple[str, str, int]]
    outside: list[CallSite]
    counts: dict[str, int]


def module_calls(resolver: Resolver, module: PyModule) -> ModuleCalls:
    """Resolve one module's calls once its bindings are final. Reads the shared resolver and
    indexes and writes only the resolver's memos, whose answers do not depend on the order of the
    questions (:class:`extractor.python.resolve.CycleCut`): modules can be resolved in any order,
    in any process. Calls with the same :meth:`ModuleLookup.call_key` resolve the same way: one
    resolution each (``self.x(...)`` called ten times in a class; ``torch.cat`` from every
    function of a module)."""
    mid = naming.py_id(module.name)
    scopes = ModuleLookup(resolver, module)
    resolved: dict[tuple[str, str], tuple[str, str] | None] = {}
    callers: dict[str, str] = {}
    first_line: dict[tuple[str, str], int] = {}
    outside: list[CallSite] = []
    counts: Counter[str] = Counter()
    path = module.file.path
    aliases = module.local_aliases if module.facts.local_aliases else {}
    for call in module.facts.calls:
        scope, line, callee = call.scope, call.line, call.callee
        held = _held_names(aliases, scope, callee) if aliases else None
        if held is not None:  # a local holding one of several names: a call of each that resolves
            targets = sorted({t for text in held if (t := resolve_call(resolver, scopes, scope, text)) is not None})
        else:
            key = scopes.call_key(scope, callee)
            if key in resolved:
                target = resolved[key]
            else:
                target = resolved[key] = resolve_call(resolver, scopes, scope, callee) if callee else None
            targets = [target] if target is not None else []
        if not targets:
            counts["unresolved"] += 1
            continue
        counts[min(targets, key=lambda t: t[0] != "node")[0]] += 1  # a call that reaches a node counts as one
        for kind, value in targets:
            if kind == "node" or kind == "ext":
                caller = callers.get(scope)
                if caller is None:
                    caller = callers[scope] = f"{mid}.{scope}" if scope else mid
                if kind == "ext":
                    outside.append(CallSite(caller, value, path, line))
                elif line < first_line.get((caller, value), line + 1):
                    first_line[caller, value] = line  # a calls edge keeps its first line (see _contribution)
    # a kernel of this module handed to a launcher of the system that launches that parameter: the caller
    # launches it through the launcher, as a C++ caller of cudaLaunchKernelEx does (extractor.cpp.scan._launched)
    for given in module.facts.kernel_arguments if resolver.launchers else ():
        key = scopes.call_key(given.scope, given.callee)
        target = resolved[key] if key in resolved else resolve_call(resolver, scopes, given.scope, given.callee)
        if target is None or target[0] != "node" or target[1] not in resolver.launchers:
            continue
        launched = resolver.launchers[target[1]]
        kernel = f"{mid}.{given.name}"
        if launched.get(given.position if given.position >= 0 else given.keyword) is None \
                or kernel not in resolver.nodes:
            continue
        caller = f"{mid}.{given.scope}" if given.scope else mid
        counts["kernels_handed_to_launchers"] += 1
        if given.line < first_line.get((caller, kernel), given.line + 1):
            first_line[caller, kernel] = given.line
    return ModuleCalls([(caller, callee, line) for (caller, callee), line in first_line.items()], outside, counts)


def _held_names(aliases: dict[str, dict[str, list[str]]], scope: str, callee: str) -> list[str] | None:
    """``callee`` written through each name its head may hold, when the head is a local of ``scope``
    that holds names (``merge_fn[]`` -> ``solve_tril_16x16_kernel[]``, ...); else None."""
    local = aliases.get(scope)
    head = _HEAD.match(callee) if local else None
    values = local.get(head.group(0)) if local and head else None
    if not values or head is None:
        return None
    rest = callee[head.end():]
    return [value + rest for value in values]


_HEAD = re.compile(r"[A-Za-z_]\w*")


class _ModuleLinks(msgspec.Struct, array_like=True, gc=False):
    """What the last pass finds in one module: its calls, the symbols it imports under their own
    names as (symbol id, line), and its ``bound`` rows (:func:`extractor.python.exports.further_bindings`)."""

    calls: ModuleCalls
    aliases: list[tuple[str, int]]
    bound: list[tuple[str, int, str, str]]


class _Resolved(msgspec.Struct, array_like=True, gc=False):
    """A forked child's share of the last pass: its span's modules, or every node's API reason in
    the order of the graph's nodes."""

    modules: list[_ModuleLinks]
    api: list[str]


_RESOLVED = msgspec.msgpack.Decoder(_Resolved)


def _last_pass(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]],
               children: defaultdict[str, dict[str, str]], jobs: int,
               meanwhile: Callable[[], None] | None = None) -> list[CallSite]:
    """``calls`` edges and the calls that resolved outside the system, the ``aliases`` edges of
    names a module imports as themselves, each module's ``bound``, and every node's ``api``.

    Found by spans of modules (the API reasons as one more task) in ``jobs`` forked children
    (:func:`extractor.support.forkmap.fork_map`), which inherit the graph and the resolver with
    its memo: only building the edges and bindings is left to the driver, a run's serial part.
    The results come back as msgpack, decoded by msgspec in C, and the same encoding runs with
    one job, so every ``jobs`` gives the same evidence. All of it only reads what is final here,
    so the parts can run side by side: the bindings are final, the constructors step changed
    nodes only inside classes (imports and ``bound`` look at module level), and no reason reads
    what the others write (``calls`` and ``aliases`` edges, ``bound``).

    ``meanwhile`` (the ``imports`` edges) runs in the driver while the children work: it adds
    only what none of them reads (edges other than ``contains``, outside names, stats and
    diagnostics), before the calls' edges are added, as it did before the pass."""
    listed = list(modules.items())

    def resolve(task: range | None) -> bytes:
        if task is None:
            return _ENCODE(_Resolved([], _api_of(g, modules, exports)))
        return _ENCODE(_Resolved([_ModuleLinks(module_calls(resolver, module),
                                               pyexports.imported_names(g, resolver, name, module),
                                               pyexports.further_bindings(resolver, modules, exports, children, name))
                                  for name, module in listed[task.start:task.stop]], []))

    # spans of modules first, the API reasons (a fifth of the calls' cost) last: each child gets a like share
    tasks: list[range | None] = [*spans(len(listed), 2 * jobs), None]
    found = [_RESOLVED.decode(encoded) for encoded in fork_map(resolve, tasks, jobs, meanwhile)]
    call_sites: list[CallSite] = []
    counts: Counter[str] = Counter()
    for (name, module), links in zip(listed, itertools.chain.from_iterable(share.modules for share in found)):
        path, mid, calls = module.file.path, naming.py_id(name), links.calls
        g.edges.extend(Edge(caller, callee, EdgeKind.CALLS, path, line) for caller, callee, line in calls.edges)
        call_sites += calls.outside
        counts.update(calls.counts)
        if links.aliases:
            g.edges.extend(Edge(mid, target, EdgeKind.ALIASES, path, line) for target, line in links.aliases)
            g.stats["imported_names"] += len(links.aliases)
        if links.bound:
            amend(g.nodes[mid], "bound", tuple(ModuleBinding(*row) for row in links.bound))
    unresolved = counts.total() - counts["node"] - counts["builtin"] - counts["ext"]
    for stat, count in (("call_sites", counts.total()), ("calls_resolved", counts["node"]),
                        ("calls_builtin", counts["builtin"]), ("calls_external", counts["ext"]),
                        ("calls_unresolved", unresolved)):
        if count:  # a stat is there when something was counted, as before
            g.stats[stat] += count
    amend_each(g.nodes.values(), "api", found[-1].api)
    return call_sites


def _api_of(g: PyGraph, modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]]) -> list[str]:
    """Every node's ``api`` reason, in the order of ``g.nodes``."""
    nodes = g.nodes
    parents: dict[str, str] = {}
    for edge in g.contains:
        source, target = edge.source, edge.target
        if target in nodes and source in nodes:
            # one container per node; the smallest id if a file states two (deterministic)
            kept = parents.get(target)
            if kept is None or source < kept:
                parents[target] = source
    aliases = {source: target for source, target in g.reexported.items() if target in nodes and source in nodes}
    # An empty __all__ exports nothing by star, but says nothing about the other names (griffe too).
    infos = {name: pyapi.ModuleInfo(name, m.file.rel, m.is_package, exports.get(name) or None)
             for name, m in modules.items()}
    reasons = pyapi.api_reasons(nodes, parents, infos, aliases, _api_rules())
    return [reasons[nid] for nid in nodes]


def _contribution(g: PyGraph, scanned: list[tuple[SourceFile, PythonFacts]], modules: dict[str, PyModule],
                  call_sites: list[CallSite], jobs: int) -> Contribution:
    every = {**g.external, **g.nodes}
    stats = g.stats
    # ``_value_`` (a plain attribute), not ``.value`` (a Python-level property of Enum)
    stats.update({f"nodes_{k}": v for k, v in Counter(n.kind._value_ for n in g.nodes.values()).items()})
    stats["modules"] = len(modules)
    stats["fallback_modules"] = sum(1 for m in modules.values() if m.facts.fallback)
    for f, facts in scanned:
        if facts.fallback:
            g.diagnostics.append(Diagnostic(f.path, 0, "calls-skipped",
                                            "parsed with libcst: calls are not resolved in this file", Severity.INFO))
    edges = [*g.contains, *g.edges]
    ordered: dict[str, tuple[Any, ...]] = {}

    def sort_the_rest() -> None:  # beside the edges' round: it reads nothing the round does not
        ordered["nodes"] = tuple(sorted(every.values(), key=node_key))
        ordered["sites"] = tuple(sorted(call_sites))
        ordered["diagnostics"] = tuple(sorted(g.diagnostics))

    kept = _first_sites(edges, every, jobs, sort_the_rest)
    return Contribution(nodes=ordered["nodes"], edges=(*map(edges.__getitem__, kept), *sorted(set(g.generated))),
                        diagnostics=ordered["diagnostics"], stats=dict(sorted(stats.items())),
                        shared=PythonShared(ordered["sites"], every, g.reexported))


def _first_sites(edges: list[Edge], every: dict[str, Node], jobs: int,
                 meanwhile: Callable[[], None] | None = None) -> array[int]:
    """Positions in ``edges`` of one edge per (source, target, kind), at its first site so the
    graph stays readable, in :func:`extractor.model.edge_key` order. An endpoint that a later
    definition replaced drops its edges.

    The order sorts by source first, so the sources cut into ranges (by the node ids, which every
    kept source is) give runs that follow each other: each range is chosen and sorted in one of
    ``jobs`` forked children (:func:`extractor.support.forkmap.fork_map`; a tenth of the step,
    memory-bound), and comes back as an array of positions. ``meanwhile``: the driver's own work
    beside the round."""
    parts = min(jobs, MAX_CHILDREN, len(every))

    def choose(part: int) -> bytes:
        ids = sorted(every) if parts > 1 else []  # one part: no cuts
        low = ids[len(ids) * part // parts] if part else ""
        high = ids[len(ids) * (part + 1) // parts] if part + 1 < parts else None
        return array("I", _first_sites_between(edges, every, low, high)).tobytes()

    kept = array("I")
    for chosen in fork_map(choose, range(parts), jobs, meanwhile):
        kept.frombytes(chosen)
    return kept


def _first_sites_between(edges: list[Edge], every: dict[str, Node], low: str, high: str | None) -> list[int]:
    """:func:`_first_sites` of the edges whose source lies in ``[low, high)`` (``None``: no end).

    Each edge is keyed by one string, ``source NUL target NUL kind`` (its path and line are not
    part of the key), hashed and compared in C: with one edge per key, these keys sort as the
    edges' full keys do. A text holding NUL itself would break that: then the
    edges are sorted the plain way."""
    first: dict[str, int] = {}
    for i, edge in enumerate(edges):
        source = edge.source
        if source < low or (high is not None and source >= high) or source not in every or edge.target not in every:
            continue
        key = f"{source}\0{edge.target}\0{edge.kind._value_}"
        kept = first.get(key)
        if kept is None or (edge.path, edge.line) < (edges[kept].path, edges[kept].line):
            first[key] = i
    if any(key.count("\0") != 2 for key in first):
        return sorted(first.values(), key=lambda i: edge_key(edges[i]))
    return list(map(first.__getitem__, sorted(first)))


_ENCODE = msgspec.msgpack.Encoder().encode

# version 6: definitions' display signatures; 7: Ray's remote calls written through calls
# (ray.remote(X).options(...).remote(...)) call X.remote; 8: what module-level names hold (PythonFacts.held),
# a method called on a call's result (`f().m`); 9: the class inside Final/ClassVar/Annotated and an actor
# reference (ActorRefType[X]) types the name, as Optional's did
# 10: attributes a class body types (`shared: Tracker = Tracker()`) give `self.shared.m()` its class
# 11: a call of an item of a dotted name (`kernel[grid](...)`) is recorded as `kernel[]`
# 12 (a branch's 11 beside it): names a module imports on first access (a table its `__getattr__` imports
# from, a `_LazyModule`'s)
# 13: a call through a function's local that every binding gives a name (`fn = k16 if c else k32; fn[grid](...)`)
# calls each name it may hold (PythonFacts.local_aliases); 14: `torch.library.wrap_triton(kernel)[grid](...)` is
# recorded as `kernel[]`; 15: a decorated module-level function handed to a call by name (PythonFacts.kernel_arguments)
# is called by the caller when the callee launches that parameter (`launch(kernel, grid)`: `kernel[grid](...)`);
# 16: ... or a local holding such functions (`fn = k16 if c else k32; launch(fn, grid)`)
STEP = Step(name="python", extract=extract_python_graph, scanners={Language.PYTHON: scan_python},
            version="16", python_fallback=True, ahead=DefinitionsAhead)
