"""The C/C++/CUDA half of the symbol graph, built from every file's scanner facts.

Names are resolved here, across files and repositories: out-of-line `A::B::f` definitions are
attached to the class `A::B` the way C++ lookup would find it from the enclosing namespaces;
overloads, a header declaration plus its definition, and alternative definitions become one node
whose further definitions are its ``sites`` (see extractor.cpp.symbols); `#include "x/y.h"` is
resolved against the including file's directory first and then against a suffix index of every
file of the system, so core's `"triton/common/logging.h"` reaches the common repository's
`include/triton/common/logging.h`. A header that protoc generates (`model_config.pb.h`,
`grpc_service.grpc.pb.h`) is no file of the tree: its include is an edge to the `.proto` it is
generated from, resolved the same way (core's 16 files that include `model_config.pb.h` reach the
common repository's `protobuf/model_config.proto`). One that TableGen generates (`Ops.h.inc`) is
said where it is included, with the `.td` file it comes from (:mod:`extractor.cpp.tablegen`). A
name written through a namespace alias (`namespace tc = triton::core;` and `tc::Status`) is looked
up as the name the alias stands for, from the scope and the files that see the alias
(:mod:`extractor.cpp.aliases`).

Macros defined in a file's includes are invisible to the per-file scanner. The scanner records the
attribute-like macros each file defines (``defines``); once includes are resolved, a file that uses
such a macro from its (transitive) includes is parsed and scanned again here with that macro
blanked. Only those few files pay for a second parse.

What later steps read (:class:`CppShared`): ``definition_sites`` (every definition and
declaration of every node, with its line span), ``aggregates`` (each struct/class/union definition
record by file, the struct step's list of what to lay out), ``op_registrations``,
``pybind_bindings`` and ``includes`` (file -> files it includes).

Edges: ``contains``, ``includes``, ``inherits``, ``calls``, ``launches``, ``implements`` (a C++
function -> the torch operator it implements) and ``uses`` (a callable -> the structs its
signature names, :mod:`extractor.cpp.uses`).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from extractor.cpp.api import classify_api, public_headers
from extractor.cpp.facts import CppFacts
from extractor.cpp.includes import IncludeResolver, defined_through_includes, rescan_with_included_macros
from extractor.cpp.kernelyaml import KERNEL_YAML, KernelYamlFacts
from extractor.cpp.members import MemberCalls
from extractor.cpp.ops import OpRegistration, PyBinding, op_nodes, resolve_registrations
from extractor.cpp.scan import C_LINKAGE
from extractor.cpp.swig import SwigInterface, SwigModule, low_level_module, swig_bindings, swig_modules
from extractor.cpp.symbols import AGGREGATES, Def, DefinitionSite, SymbolTable, display_qual, localise
from extractor.cpp.tablegen import TableGenIndex, TableGenOutput, tablegen_outputs
from extractor.cpp.testmacros import load_test_macros
from extractor.cpp.uses import EdgeRow, uses_rows
from extractor.graphparts import unique_sorted_edges
from extractor.native.calls import each_call
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Node, NodeKind, Severity, amend,
                             node_key)
from extractor.naming import cpp_id, file_id, id_name
from extractor.support.cmakefiles import cmake_files
from extractor.support.forkmap import fork_map, spans

CPP_LANGUAGES = (Language.CPP, Language.CUDA)

__all__ = ["AggregateDefinition", "DefinitionSite", "OpRegistration", "PyBinding", "build_cpp_graph",
           "extract_cpp_graph"]


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class AggregateDefinition:
    """A struct/class/union definition as the graph has it: what the struct step lays out."""

    path: str
    line: int
    qualname: str  # as C++ spells it: `ns::(anonymous namespace)::Hidden`, `Outer::Inner`
    kind: str  # "struct", "class", "union"
    node: str  # the graph node
    template: bool  # a class template, a member of one, or a specialisation: no layout of its own
    local: bool = False  # defined inside a function body


@dataclasses.dataclass(frozen=True, slots=True)
class CppShared:
    """What the C/C++ graph step shares with later steps (see the module docstring)."""

    definition_sites: tuple[DefinitionSite, ...]
    op_registrations: tuple[OpRegistration, ...]
    pybind_bindings: tuple[PyBinding, ...]
    aggregates: tuple[AggregateDefinition, ...]
    includes: Mapping[str, tuple[str, ...]]  # file -> the files it includes
    # functions whose symbol is their plain name: declared or defined inside `extern "C"`, or
    # defined non-static in a C file (the ctypes bindings prefer these: extractor.bindings.python_ctypes)
    c_linkage: frozenset[str] = frozenset()
    internal: frozenset[str] = frozenset()  # functions at global scope defined `static` only: no symbol
    # names a typedef or alias gives a type at global scope (`typedef int32_t whisper_token;`): what
    # cgo's `C.whisper_token(x)` converts to, never a function
    c_types: frozenset[str] = frozenset()
    swig_modules: tuple[SwigModule, ...] = ()  # the modules SWIG interface files make (extractor.cpp.swig)


_PROTOC_HEADER = re.compile(r"(.+?)\.(?:grpc\.)?pb\.h")  # `x.pb.h` and `x.grpc.pb.h`, generated from `x.proto`


def _generated_from(protos: IncludeResolver, includer: str, target: str) -> str:
    """The system's ``.proto`` whose protoc-generated header ``target`` is, resolved as the header
    would be (the includer's directory first, then the nearest by path suffix); "" for none."""
    m = _PROTOC_HEADER.fullmatch(target) if protos.paths else None
    return protos.resolve(includer, m.group(1) + ".proto") if m else ""


def extract_cpp_graph(ctx: Any) -> Contribution[CppShared]:
    """The pipeline entry: ``ctx.facts("cpp", CPP, CUDA)`` in, graph parts out."""
    files = [(f.path, f.language, facts, ctx.abs_path(f)) for f, facts in ctx.facts("cpp", *CPP_LANGUAGES)]
    sources = {f.path: f.source for f, _ in ctx.facts("cpp", *CPP_LANGUAGES)}
    protos = [f.path for f in ctx.files if f.language is Language.PROTO]
    interfaces = {f.path: facts for f, facts in ctx.facts("cpp", Language.SWIG)}
    # TableGen's outputs (`Ops.h.inc`) from the CMake rules, read only when a file includes a `.inc`
    included = any(target.endswith(".inc") for _, _, facts, _ in files for target, _, _ in facts.includes)
    outputs = tablegen_outputs(cmake_files((s.root, s.label) for s in ctx.sources)) if included else []
    kernels = {f.path: facts for f, facts in ctx.facts("cpp", Language.YAML)}
    return build_cpp_graph(files, sources, ctx.options.jobs, protos, interfaces, outputs, kernels)


def build_cpp_graph(files: Iterable[tuple[str, Language, CppFacts, Any]],
                    sources: Mapping[str, str] | None = None, jobs: int = 1,
                    protos: Iterable[str] = (), interfaces: Mapping[str, SwigInterface] | None = None,
                    tablegen: Iterable[TableGenOutput] = (),
                    kernel_yaml: Mapping[str, KernelYamlFacts] | None = None) -> Contribution[CppShared]:
    """Graph parts from (path, language, scanner facts, file on disk or None) of each file;
    ``sources``: the source label of each path (for headers other repositories include);
    ``jobs``: forked children for the work that splits by file or definition (the files scanned
    again, :func:`rescan_with_included_macros`; the call sites and the types signatures use);
    ``protos``: the system's ``.proto`` files, which the headers protoc generates stand for;
    ``interfaces``: the SWIG interface files' facts, by path (extractor.cpp.swig);
    ``tablegen``: the files TableGen generates, whose includes are said (:mod:`extractor.cpp.tablegen`);
    ``kernel_yaml``: the operator kernels YAML files register, by file (:mod:`extractor.cpp.kernelyaml`)."""
    entries = sorted(files, key=lambda e: e[0])
    facts = {path: f for path, _, f, _ in entries}
    languages = {path: lang for path, lang, _, _ in entries}
    disk = {path: where for path, _, _, where in entries}
    stats: collections.Counter[str] = collections.Counter()
    diagnostics: list[Diagnostic] = []

    resolver = IncludeResolver(sorted(facts))
    generated = IncludeResolver(sorted(protos))
    include_edges: list[Edge] = []
    generated_edges: list[Edge] = []  # to the .proto files of protoc's headers: no C++ header to classify
    resolved_includes: dict[str, list[str]] = {}
    tablegen_index = TableGenIndex(tablegen)
    for path in sorted(facts):
        targets = []
        from_tablegen: list[tuple[int, str, TableGenOutput]] = []
        for target, angle, line in facts[path].includes:
            hit = resolver.resolve(path, target)
            if hit:
                stats["includes_resolved"] += 1
                targets.append(hit)
                include_edges.append(Edge(file_id(path), file_id(hit), EdgeKind.INCLUDES, path, line))
            elif (proto := _generated_from(generated, path, target)):
                # protoc's header is no file of the tree: the edge goes to the .proto it is made from
                # (not one of ``includes``, which the macros and the struct probes read as C++)
                stats["includes_protoc_generated"] += 1
                generated_edges.append(Edge(file_id(path), file_id(proto), EdgeKind.INCLUDES, path, line))
            elif (made := tablegen_index.resolve(path, target) if target.endswith(".inc") else None):
                stats["includes_tablegen_generated"] += 1
                from_tablegen.append((line, target, made))
            else:
                stats["includes_unresolved_angle" if angle else "includes_unresolved_quoted"] += 1
        resolved_includes[path] = targets
        if from_tablegen:
            diagnostics.append(_tablegen_diagnostic(path, from_tablegen))

    rescan_with_included_macros(facts, languages, disk, resolved_includes, stats, jobs)

    defs: list[Def] = []
    for path in sorted(facts):
        for record in facts[path].defs:
            defs.append(Def(path, languages[path], localise(record, path)))
        diagnostics.extend(_file_diagnostics(path, facts[path], stats))

    # namespace aliases, seen in their file and the files that include it (extractor.cpp.aliases)
    declared = {path: f.namespace_aliases for path, f in facts.items() if f.namespace_aliases}
    seen_by = defined_through_includes({path: {path} for path in declared}, resolved_includes) if declared else {}
    # using-directives and using-declarations, seen the same way (extractor.cpp.usings)
    usings = {path: f.usings for path, f in facts.items() if f.usings}
    usings_seen_by = defined_through_includes({path: {path} for path in usings}, resolved_includes) if usings else {}
    table = SymbolTable(defs, declared, seen_by, usings, usings_seen_by, resolved_includes)
    conflicts = table.namespace_aliases.conflicts() if declared else 0
    if conflicts:
        stats["namespace_alias_conflicts"] = conflicts
    nodes = table.nodes()
    node_kinds = {n.id: n.kind for n in nodes}
    edges: list[Edge] = [*include_edges, *generated_edges]
    for path in sorted(facts):
        edges.extend(_contains_edges(table, path))
    edges.extend(_inherits_edges(table, node_kinds))
    external: dict[str, Node] = {}
    for edge in list(edges):
        if edge.kind is EdgeKind.INHERITS and edge.target not in node_kinds:
            name = id_name(edge.target)
            external[edge.target] = Node(edge.target, NodeKind.EXTERNAL, name.rsplit("::", 1)[-1],
                                         name, "cpp")
    edges.extend(_calls_and_uses(table, facts, stats, jobs))

    ops, bindings, unreached = resolve_registrations(facts, table)
    diagnostics.extend(unreached)
    if kernel_yaml:
        from_yaml = _kernel_registrations(kernel_yaml, table)
        ops = sorted([*ops, *from_yaml])
        stats["kernel_yaml_registrations"] = len(from_yaml)
        stats["kernel_yaml_registrations_unresolved"] = sum(not r.target for r in from_yaml)
        diagnostics.extend(_unresolved_kernels(from_yaml))
    modules: list[SwigModule] = []
    low: set[str] = set()  # the low-level modules SWIG's proxies load (extractor.cpp.swig)
    if interfaces:
        modules = swig_modules(interfaces, resolver.resolve, IncludeResolver(sorted(interfaces)).resolve)
        bases: dict[str, list[str]] = collections.defaultdict(list)
        for e in edges:
            if e.kind is EdgeKind.INHERITS and e.target in node_kinds:
                bases[id_name(e.source)].append(id_name(e.target))
        definitions = {path: f.defs for path, f in facts.items()}
        swig = [b for m in modules for b in swig_bindings(m, definitions, node_kinds, bases)]
        bindings = [*bindings, *swig]
        low = {low_level_module(m.module) for m in modules}
        stats["swig_modules"] = len(modules)
        stats["swig_bindings"] = sum(1 for b in swig if b.module not in low)
        stats["swig_bindings_resolved"] = sum(1 for b in swig if b.target and b.module not in low)
        stats["swig_flat_bindings"] = sum(1 for b in swig if b.module in low)
        stats["swig_headers_unresolved"] = sum(m.unresolved for m in modules)
    schema_nodes, schema_edges = op_nodes(facts, ops)
    edges.extend(schema_edges)
    public = public_headers(facts, include_edges, sources or {})
    # an inherited method's SWIG binding names it through another class: the api names its own
    # and the low-level module's flat names (`_swigvs.FlatIndex_add`) are not what Python users call
    api = classify_api(nodes, table.sites, ops, [b for b in bindings if b.mechanism != "swig" or not b.target
                                                 or (b.function == id_name(b.target) and b.module not in low)],
                       public)
    for node in nodes:  # built here and not handed out yet: set in place (grpcio: 56,000 copies made)
        if node.id in api:
            amend(node, "api", api[node.id])

    file_nodes = [Node(file_id(p), NodeKind.FILE, posixpath.basename(p), p, languages[p].value, p, 0)
                  for p in sorted(facts)]
    all_nodes = _sorted_nodes([*file_nodes, *nodes, *schema_nodes, *external.values()])
    all_edges = tuple(unique_sorted_edges([edges]))

    stats["files"] = len(facts)
    stats["op_registrations"] = len(ops)
    stats["op_schemas"] = len(schema_nodes)
    by_mechanism = collections.Counter(b.mechanism for b in bindings)
    stats["pybind_bindings"] = by_mechanism["pybind11"]
    # a key only where there are any: evidence without stays as it was
    for mechanism, key in (("nanobind", "nanobind_bindings"), ("paddle-op", "paddle_ops"),
                           ("torchscript", "torchscript_bindings"), ("tensorflow-op", "tensorflow_op_kernels")):
        if by_mechanism[mechanism]:
            stats[key] = by_mechanism[mechanism]
    for mechanism, key in (("tvm-ffi", "tvm_ffi_globals"), ("tvm-ffi-export", "tvm_ffi_exports")):
        if by_mechanism[mechanism]:
            stats[key] = by_mechanism[mechanism]
            stats[f"{key}_resolved"] = sum(1 for b in bindings if b.mechanism == mechanism and b.target)
    stats["public_headers"] = len(public)
    test_bodies = sum(1 for d in table.defs if d.kind is NodeKind.METHOD and "test" in d.record.tags)
    if test_bodies:  # a key only where there are any: evidence without stays as it was
        stats["test_bodies"] = test_bodies
    for node_kind, count in collections.Counter(n.kind for n in all_nodes).items():
        stats[f"nodes_{node_kind.value}"] += count
    for n in all_nodes:
        if n.sites:
            stats["nodes_with_sites"] += 1
            stats["definition_sites_extra"] += len(n.sites)
        if n.api:
            stats["api_" + n.api.split(":", 1)[0]] += 1
    for edge_kind, count in collections.Counter(e.kind for e in all_edges).items():
        stats[f"edges_{edge_kind.value}"] += count
    return Contribution(
        nodes=all_nodes, edges=all_edges, diagnostics=tuple(sorted(diagnostics)),
        stats=dict(sorted(stats.items())),
        shared=CppShared(tuple(sorted(table.sites)), tuple(ops), tuple(bindings), _aggregates(table),
                         {p: tuple(t) for p, t in resolved_includes.items()}, *_c_linkage(table),
                         _global_type_names(facts.values()), tuple(modules)))



def _calls_and_uses(table: SymbolTable, facts: Mapping[str, CppFacts], stats: collections.Counter[str],
                    jobs: int) -> list[Edge]:
    """The ``calls`` and ``launches`` edges of every file's call sites and the ``uses`` edges of
    every callable, counted into ``stats``.

    Resolved by spans of files and of definitions in ``jobs`` forked children
    (:func:`extractor.support.forkmap.fork_map`) that inherit the symbol table: on grpcio about a
    CPU second, which the step (itself one forked child beside the driver) no longer does alone.
    Each look-up reads the table and writes only its memos, whose answers do not depend on the
    order of the questions. The edges come back as tuples in msgpack, and the same encoding runs
    with one job, so every ``jobs`` gives the same graph."""
    paths = sorted(facts)
    defs = table.defs
    members = MemberCalls(table, facts)  # indexed once, here; the children only look up
    launchers = _system_launchers(table, facts, members)

    def resolve(task: tuple[bool, range]) -> bytes:
        of_calls, span = task
        if not of_calls:
            return _ENCODE(uses_rows(table, defs[span.start:span.stop]))
        rows: list[EdgeRow] = []
        found: collections.Counter[str] = collections.Counter()
        for path in paths[span.start:span.stop]:
            f = facts[path]
            for sites, kind, kernel_only in ((f.calls, "calls", False), (f.launches, "launches", True)):
                for caller, callee, line in each_call(sites):
                    source = table.id_of(path, caller, line=line)
                    target = table.resolve_callee(source, callee, kernel_only=kernel_only, path=path)
                    if not target and source and not kernel_only and ("." in callee or "->" in callee):
                        target, reason = members.resolve(source, caller, callee, path, line)
                        # a key per reason, only where there are any: evidence without stays as it was
                        found[f"member_calls_{reason}"] += 1
                    elif source and not kernel_only and _PLAIN_NAME.fullmatch(callee):
                        in_base = members.unqualified(source, caller, callee, path, line, target)  # `Name()`
                        if in_base != target:
                            target = in_base
                            found["base_method_calls"] += 1
                    if source and target:
                        found[f"{kind}_resolved"] += 1
                        rows.append((source, target, kind, path, line))  # kind: the EdgeKind's value
                    else:
                        found[f"{kind}_unresolved"] += 1
                        if table.through_conflicting_aliases(source, callee, path):
                            found[f"{kind}_unresolved_alias_conflict"] += 1
                        elif table.through_ambiguous_usings(source, callee, path, kernel_only):
                            found[f"{kind}_unresolved_ambiguous_using"] += 1
            if launchers and f.kernel_args:
                handed = _handed_kernels(table, members, launchers, path, f.kernel_args)
                if handed:  # a key only where there are any: evidence without stays as it was
                    found["kernels_handed_to_launchers"] += len(handed)
                    rows.extend(handed)
        return _ENCODE((rows, found))

    tasks = [(True, span) for span in spans(len(paths), 2 * jobs)] + [(False, span) for span in spans(len(defs), jobs)]
    edges: list[Edge] = []
    kinds = {kind.value: kind for kind in (EdgeKind.CALLS, EdgeKind.LAUNCHES, EdgeKind.USES)}
    # the decoded ids and paths are new strings: the table's own are kept, one copy of each in
    # memory and in every pickle of the graph (a forked step's result comes back pickled)
    same = {name: name for name in itertools.chain(table.node_by_id, paths)}
    for rows, found in map(_RESOLVED.decode, fork_map(resolve, tasks, jobs)):
        edges.extend(Edge(same.get(source, source), same.get(target, target), kinds[kind], same.get(path, path), line)
                     for source, target, kind, path, line in rows)
        stats.update(found)
    return edges


def _call_target(table: SymbolTable, members: MemberCalls, source: str, caller: str, callee: str, path: str,
                 line: int) -> str:
    """What a call resolves to, as :func:`_calls_and_uses` resolves it (its counts left alone)."""
    target = table.resolve_callee(source, callee, kernel_only=False, path=path)
    if not target and ("." in callee or "->" in callee):
        return members.resolve(source, caller, callee, path, line)[0]
    if _PLAIN_NAME.fullmatch(callee):
        return members.unqualified(source, caller, callee, path, line, target)
    return target


def _system_launchers(table: SymbolTable, facts: Mapping[str, CppFacts], members: MemberCalls
                      ) -> dict[str, frozenset[int]]:
    """Function id -> the positions of its parameters that it launches (extractor.cpp.handoffs): those
    its body hands to a launcher's kernel position, then, to a fixed point, those it hands on to a
    function that launches the parameter they land in (MLX's ``add_kernel_node`` -> ``add_kernel_node_ex``
    -> ``add_kernel_node_raw`` -> ``cudaLaunchKernelExC``)."""
    found: dict[str, set[int]] = collections.defaultdict(set)
    for path in sorted(facts):
        for qual, index in facts[path].launcher_params:
            source = table.id_of(path, qual)
            if source:
                found[source].add(index)
    if not found:
        return {}
    forwards = [(source, index, qual, callee, position, path, line) for path in sorted(facts)
                for qual, index, callee, position, line in facts[path].forwards
                if (source := table.id_of(path, qual))]
    targets: dict[int, str] = {}
    changed = True
    while changed:
        changed = False
        for k, (source, index, qual, callee, position, path, line) in enumerate(forwards):
            if index in found.get(source, ()):
                continue
            if k not in targets:
                targets[k] = _call_target(table, members, source, qual, callee, path, line)
            if position in found.get(targets[k], ()):
                found[source].add(index)
                changed = True
    return {source: frozenset(indexes) for source, indexes in found.items()}


def _handed_kernels(table: SymbolTable, members: MemberCalls, launchers: Mapping[str, frozenset[int]], path: str,
                    given: Iterable[tuple[str, str, int, str, int]]) -> list[EdgeRow]:
    """``launches`` rows of the kernels a file's functions hand to the system's own launchers, at the
    launchers' kernel positions (:func:`_system_launchers`), each once per line."""
    rows: dict[tuple[str, str, int], EdgeRow] = {}
    for qual, callee, position, kernel, line in given:
        source = table.id_of(path, qual)
        if not source:
            continue
        target = _call_target(table, members, source, qual, callee, path, line)
        if position not in launchers.get(target, ()):
            continue
        launched = table.resolve_callee(source, kernel, kernel_only=True, path=path)
        if launched:
            rows.setdefault((source, launched, line), (source, launched, "launches", path, line))
    return [rows[key] for key in sorted(rows)]


_PLAIN_NAME = re.compile(r"[A-Za-z_]\w*")
_ENCODE = msgspec.msgpack.Encoder().encode
_RESOLVED = msgspec.msgpack.Decoder(tuple[list[EdgeRow], dict[str, int]])


def _sorted_nodes(nodes: list[Node]) -> tuple[Node, ...]:
    """``tuple(sorted(nodes))``: by id alone while ids are unique (a node's full comparison builds
    two tuples of its twenty fields, 1.5 s for torch's 155,000 nodes)."""
    by_id = sorted(nodes, key=node_key)
    if any(a.id == b.id for a, b in zip(by_id, by_id[1:])):
        return tuple(sorted(nodes))
    return tuple(by_id)


def _kernel_registrations(kernel_yaml: Mapping[str, KernelYamlFacts], table: SymbolTable) -> list[OpRegistration]:
    """Each kernel a YAML file registers, an implementation of its operator, its function resolved
    as written out by the generated registration (`::ns::native::kernel`)."""
    return [OpRegistration(path, k.line, "impl", k.op, k.namespace, "", "", k.overload, "", k.function,
                           table.resolve_reference("", "::" + k.function, path), KERNEL_YAML)
            for path in sorted(kernel_yaml) for k in kernel_yaml[path].entries]


def _unresolved_kernels(registrations: list[OpRegistration]) -> list[Diagnostic]:
    """One diagnostic per YAML file whose kernels name functions the system does not define."""
    by_file: dict[str, list[OpRegistration]] = {}
    for r in registrations:
        if not r.target:
            by_file.setdefault(r.path, []).append(r)
    out = []
    for path, missing in sorted(by_file.items()):
        names = ", ".join(f"{r.function} (line {r.line})" for r in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        out.append(Diagnostic(path, missing[0].line, "kernel-function-unresolved",
                              f"{len(missing)} kernel(s) registered here name a function the system does not define "
                              f"(built elsewhere, defined by a macro's use, or named otherwise): {names}{more}",
                              Severity.INFO))
    return out


def _tablegen_diagnostic(path: str, includes: list[tuple[int, str, TableGenOutput]]) -> Diagnostic:
    """One file's includes of TableGen's outputs, said at the first: what each comes from."""
    includes = sorted(includes)
    shown = "; ".join(f"{posixpath.basename(target)} (line {line}) from {out.definitions} ({out.cmake}:{out.line})"
                      for line, target, out in includes[:6])
    more = f"; and {len(includes) - 6} more" if len(includes) > 6 else ""
    return Diagnostic(path, includes[0][0], "tablegen-generated",
                      f"includes C++ that TableGen generates at build time: {shown}{more}. TableGen is not read, "
                      "so the operations, types, attributes and passes declared there are not in the graph",
                      Severity.INFO)


def _file_diagnostics(path: str, facts: CppFacts, stats: collections.Counter[str]) -> list[Diagnostic]:
    out = []
    errors = facts.errors
    if errors:
        stats["files_with_parse_errors"] += 1
        stats["error_nodes"] += errors
        lines = facts.error_lines
        out.append(Diagnostic(
            path, lines[0] if lines else 0, "parse-errors",
            f"{errors} ERROR node(s) in the syntax tree (lines {', '.join(map(str, lines[:8]))}"
            f"{' ...' if len(lines) > 8 else ''}); definitions there may be missing",
            Severity.INFO if errors <= 3 else Severity.WARNING))
    if facts.truncated:
        out.append(Diagnostic(path, 0, "scan-truncated",
                              "declarations nested too deeply to walk; the rest of the file is not indexed",
                              Severity.WARNING))
    for name, line in facts.macro_blocks:
        out.append(Diagnostic(path, line, "macro-definitions",
                              f"macro {name} expands to definitions that are not indexed (no preprocessor is run)",
                              Severity.INFO))
    for uses, stat, code, told in (
            (facts.class_macro_uses, "class_macro_uses", "class-macro",
             "declared without a return type, which only constructors, destructors and conversion functions are: "
             "macros' uses, so no member is recorded for them and their arguments are no types a member uses (no "
             "preprocessor is run)"),
            (facts.class_macro_bodies, "class_macro_bodies", "class-macro-body",
             "without a return type, with bodies: macros' uses defining what is not known (no preprocessor is run), "
             "each kept as a member of the macro's name with its body's calls")):
        if uses:
            stats[stat] += len(uses)
            out.append(Diagnostic(path, min(at for _, at in uses), code,
                                  f"{_names_and_lines(uses)} in class bodies read as members {told}", Severity.INFO))
    frameworks = load_test_macros().unnamed
    # macro bodies read as functions, and test bodies a framework names by a counter: one diagnostic
    # per macro, at its first use, its lines counted
    for bodies, stat, code, say in (
            (facts.macro_bodies, "macro_bodies", "macro-body",
             lambda name, at: f"{name}(...) {{...}} at line(s) {_first_lines(at)} reads as a function {name} "
                              f"without a return type: a macro's use, kept as one node {name} for all of them (a "
                              "test framework's macro can be expanded by extractor/cpp/testmacros.yaml)"),
            (facts.unnamed_tests, "test_bodies_unnamed", "test-body-unnamed",
             lambda name, at: f"{frameworks.get(name, 'a test framework')} {name} "
                              f"bod{'y' if len(at) == 1 else 'ies'} at line(s) {_first_lines(at)}: the framework "
                              "names each by a counter (__COUNTER__), which cannot be spelled from the source, so "
                              "no node is made and their calls are not recorded")):
        for name, at in _lines_by_name(bodies):
            stats[stat] += len(at)
            out.append(Diagnostic(path, at[0], code, say(name, at), Severity.INFO))
    return out


def _lines_by_name(uses: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    by_name: dict[str, list[int]] = collections.defaultdict(list)
    for name, line in uses:
        by_name[name].append(line)
    return sorted((name, sorted(lines)) for name, lines in by_name.items())


def _names_and_lines(uses: Iterable[tuple[str, int]]) -> str:
    """`DISALLOW_COPY_AND_ASSIGN(...) at line(s) 12, 40; Q_DISABLE_COPY(...) at line(s) 13`"""
    return "; ".join(f"{name}(...) at line(s) {_first_lines(at)}" for name, at in _lines_by_name(uses))


def _first_lines(lines: list[int]) -> str:
    return ", ".join(map(str, lines[:8])) + (" ..." if len(lines) > 8 else "")


def _inherits_edges(table: SymbolTable, node_kinds: dict[str, NodeKind]) -> list[Edge]:
    """Each class's edges to its bases. A base the system does not define is named as written,
    unless another class names it qualified by a namespace that encloses this class: C++ finds
    `BackendModelInstance` written in `triton::backend::pytorch::pt` as `triton::backend::BackendModelInstance`
    when that is the one the headers declare (Triton's PyTorch backend writes it both ways), and one
    base seen as two external nodes, one of them in the global namespace, would be a guess."""
    bases = [(d, base, table.resolve_type(d.parent, base, d.path)) for d in table.defs for base in d.record.bases]
    written = {target for _, _, target in bases if target not in node_kinds}
    edges = []
    for d, base, target in bases:
        if target not in node_kinds and not base.lstrip().startswith("::"):
            name = id_name(target)
            parts = d.parent.split("::") if d.parent else []
            enclosing = (cpp_id(f"{'::'.join(parts[:k])}::{name}") for k in range(len(parts), 0, -1))
            target = next((t for t in enclosing if t in written), target)
        edges.append(Edge(d.id, target, EdgeKind.INHERITS, d.path, d.record.line))
    return edges


def _contains_edges(table: SymbolTable, path: str) -> list[Edge]:
    edges = []
    for d in table.defs_by_path.get(path, ()):
        node = table.node_by_id[d.id]
        parent_id = table.type_id(d.parent) if d.parent else ""
        if parent_id in table.node_by_id and parent_id != d.id:
            edges.append(Edge(parent_id, d.id, EdgeKind.CONTAINS, node.path, node.line))
        # a file contains what it defines at namespace level (a file-local namespace has no node)
        at_namespace_level = not d.parent or table.node_by_id.get(parent_id, node).kind is NodeKind.NAMESPACE \
            or d.parent.endswith(")") and "(anonymous namespace@" in d.parent.rsplit("::", 1)[-1]
        if node.path == path and node.line == d.record.line and at_namespace_level:
            edges.append(Edge(file_id(path), d.id, EdgeKind.CONTAINS, path, node.line))
    return edges


def _c_linkage(table: SymbolTable) -> tuple[frozenset[str], frozenset[str]]:
    """(the functions with C linkage: declared or defined inside `extern "C"`, or defined in a C
    file and not `static`; the functions at global scope whose every definition is `static`)."""
    linked: set[str] = set()
    exported: set[str] = set()
    static: set[str] = set()
    for d in table.defs:
        if d.kind is not NodeKind.FUNCTION:
            continue
        tags = d.record.tags
        if C_LINKAGE in tags or d.path.endswith(".c") and "static" not in tags and d.record.is_definition:
            linked.add(d.id)
        if d.record.is_definition and not d.parent:
            (static if "static" in tags else exported).add(d.id)
    return frozenset(linked), frozenset(static - exported)


def _global_type_names(facts: Iterable[CppFacts]) -> frozenset[str]:
    """The names that typedefs and aliases at global scope declare, with `typedef struct {...} X;`'s."""
    names: set[str] = set()
    for f in facts:
        names.update(alias.name for alias in f.type_aliases if not alias.scope)
        names.update(alias for record in f.defs if not record.scope for alias in record.aliases)
    return frozenset(names)


def _aggregates(table: SymbolTable) -> tuple[AggregateDefinition, ...]:
    out = set()
    for d in table.defs:
        if d.kind not in AGGREGATES:
            continue
        tags = d.record.tags
        local = any(k == "function" for _, k in d.record.scope)
        out.add(AggregateDefinition(d.path, d.record.line, display_qual(d.record.qual),
                                    d.record.kind, d.id, "template" in tags or "specialization" in tags,
                                    local))
    return tuple(sorted(out))
