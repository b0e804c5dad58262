"""The C/C++ symbol table: definition records of every file become one node per entity.

One node per qualified name: a declaration and its definition, overloads, alternative definitions
under `#if` (per-platform headers) and template specialisations are one node, and every definition
beyond the node's own location is kept in ``Node.sites``, so each stays findable by file and line.
Calls, bindings and includes name entities, not variants, so they need one id per name; the
variants are the sites (and, for callables with several parameter lists, ``Node.overloads``).

The exception is internal linkage: members of an anonymous namespace are private to their file,
and same-named helpers in two files are two entities. Their ids carry the file in the namespace
component, ``cpp:ns::(anonymous namespace@csrc/a.cu)::helper``; the qualname keeps GCC's spelling
``ns::(anonymous namespace)::helper``, which is also what DWARF (and so the struct layouts) say.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from extractor.cpp.aliases import NamespaceAliases
from extractor.cpp.facts import Definition, NamespaceAlias, Using
from extractor.cpp.scan import ANONYMOUS_NAMESPACE, C_LINKAGE
from extractor.cpp.usings import Usings
from extractor.model import Language, Location, Node, NodeKind, Parameter, ParamKind, Signature
from extractor.naming import cpp_id, id_name, unelaborated

TYPE_KINDS = {"class": NodeKind.CLASS, "struct": NodeKind.STRUCT, "union": NodeKind.UNION,
              "enum": NodeKind.ENUM, "namespace": NodeKind.NAMESPACE}
AGGREGATES = frozenset({NodeKind.CLASS, NodeKind.STRUCT, NodeKind.UNION})
CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.KERNEL})
GLOBAL_PREFIX = "__global__ "  # the id of a kernel that shares its name with a host function: `cpp:__global__ ns::k`
_HIDDEN_KERNEL = cpp_id(GLOBAL_PREFIX)
# When one id is claimed by records of different kinds, the earlier kind wins.
_KIND_ORDER = (NodeKind.CLASS, NodeKind.STRUCT, NodeKind.UNION, NodeKind.ENUM, NodeKind.KERNEL,
               NodeKind.METHOD, NodeKind.FUNCTION, NodeKind.NAMESPACE)
_AGGREGATE_RECORDS = frozenset({"class", "struct", "union"})
_TYPE_RECORDS = _AGGREGATE_RECORDS | {"enum"}  # the names ``resolve_type`` finds
_LOCAL_NAMESPACE = re.compile(r"\(anonymous namespace@[^()]*\)")
# A test's own definition of a function the system defines too (Triton's `TRITONSERVER_ErrorNew`
# in core/src/test/repo_agent_test.cc beside core/src/tritonserver.cc) is not where the node lives:
# a path under one of these directories, or a file named like a test, comes after the others.
_APART_DIRS = frozenset({"test", "tests", "testing", "unittest", "unittests", "example", "examples", "benchmark",
                         "benchmarks", "bench", "docs", "doc"})
_TEST_FILE = re.compile(r"(?:test_.*|.*_(?:test|tests|unittest))\.[^.]+")


def _qual_and_name(node_id: str) -> tuple[str, str]:
    """A node's qualified name as C++ spells it and its short name; a type a function's name hides
    keeps its elaborated name in both (`struct stat`)."""
    qual = display_qual(id_name(node_id))
    if qual.startswith(GLOBAL_PREFIX):  # a kernel a host function's name hides: named as launches name it
        return qual, qual[len(GLOBAL_PREFIX):].rsplit("::", 1)[-1]
    plain = unelaborated(qual)
    if plain == qual:
        return qual, qual.rsplit("::", 1)[-1]
    return qual, f"{qual.partition(' ')[0]} {plain.rsplit('::', 1)[-1]}"


@functools.lru_cache(maxsize=4096)
def _in_tests(path: str) -> bool:
    """Whether ``path`` is a test's, an example's or a benchmark's, by its directories or its name."""
    *dirs, base = path.split("/")
    return any(d in _APART_DIRS for d in dirs) or _TEST_FILE.fullmatch(base) is not None


def local_namespace(path: str) -> str:
    """The id component of ``path``'s anonymous namespace."""
    return f"(anonymous namespace@{path})"


def display_qual(qual: str) -> str:
    """A qualified name as C++ (and GCC's DWARF) spells it: file-local components unmarked."""
    return _LOCAL_NAMESPACE.sub(ANONYMOUS_NAMESPACE, qual) if "(anonymous namespace@" in qual else qual


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class DefinitionSite:
    """One place a node is defined or declared (a node merges overloads and declarations)."""

    node: str
    path: str
    line: int  # line of the name
    start: int  # first line of the whole definition (template header included)
    end: int
    is_definition: bool

    def __reduce__(self) -> tuple[type[DefinitionSite], tuple[str, str, int, int, int, bool]]:
        """Pickled as its constructor's arguments: a slots dataclass otherwise pickles through
        ``__getstate__``/``__setstate__``, which list its fields again for every object."""
        return DefinitionSite, (self.node, self.path, self.line, self.start, self.end, self.is_definition)


@dataclasses.dataclass
class Def:
    """A definition record of a file as the table places it: its node id, parent and kind."""

    path: str
    language: Language
    record: Definition
    id: str = ""
    parent: str = ""
    kind: NodeKind = NodeKind.FUNCTION

    @property
    def is_definition(self) -> bool:
        return self.record.is_definition


def localise(record: Definition, path: str) -> Definition:
    """``record`` with its anonymous-namespace components made unique to ``path``."""
    if ANONYMOUS_NAMESPACE not in record.qual:
        return record
    mine = local_namespace(path)
    return msgspec.structs.replace(
        record, qual="::".join(mine if p == ANONYMOUS_NAMESPACE else p for p in record.qual.split("::")),
        scope=tuple((mine if n == ANONYMOUS_NAMESPACE else n, k) for n, k in record.scope))


class SymbolTable:
    def __init__(self, defs: list[Def], namespace_aliases: Mapping[str, Sequence[NamespaceAlias]] | None = None,
                 seen_by: Mapping[str, frozenset[str]] | None = None,
                 usings: Mapping[str, Sequence[Using]] | None = None,
                 usings_seen_by: Mapping[str, frozenset[str]] | None = None,
                 includes: Mapping[str, Sequence[str]] | None = None) -> None:
        """``namespace_aliases``: each file's namespace aliases; ``seen_by``: per file, the files
        whose aliases it sees (:class:`extractor.cpp.aliases.NamespaceAliases`); ``usings`` and
        ``usings_seen_by``: the same of using-directives and using-declarations
        (:class:`extractor.cpp.usings.Usings`); ``includes``: per file, the files of the system its
        includes resolve to."""
        self.defs = defs
        aggregates = {d.record.qual for d in defs if d.record.kind in _AGGREGATE_RECORDS}
        namespaces = {d.record.qual for d in defs if d.record.kind == "namespace"}
        self.scopes = aggregates | namespaces
        self.aggregates = aggregates
        self.types = {d.record.qual for d in defs if d.record.kind in _TYPE_RECORDS}
        # typedef names of named types (`typedef enum X_enum {...} X;`), in their scope
        self.aliases: dict[str, str] = {}
        for d in defs:
            for alias in d.record.aliases:
                scope = d.record.qual.rsplit("::", 1)[0] if "::" in d.record.qual else ""
                self.aliases.setdefault(f"{scope}::{alias}" if scope else alias, d.record.qual)
        for d in defs:
            self._resolve(d)
        # C and C++ let a class, struct, union or enum share its name with a function of the same scope
        # (`struct stat` and `stat()`, llama.cpp's `enum llama_vocab_type` and `llama_vocab_type(vocab)`):
        # the function is what the name names, the type is reached through its elaborated name, which
        # is its id here (`cpp:struct stat`). Merged, the function was lost in the type's node.
        callables = {d.id for d in defs if d.kind in CALLABLE}
        self.hidden_types: dict[str, str] = {}  # the qualified name of such a type -> its id
        for d in defs:
            if d.record.kind in _TYPE_RECORDS and d.id in callables:
                d.id = cpp_id(f"{d.record.kind} {d.record.qual}")
                self.hidden_types[d.record.qual] = d.id
        self._hidden_ids = frozenset(self.hidden_types.values())
        # A kernel and a host function of one name and scope are overloads to C++, but two entities:
        # the host one runs on the CPU and launches the other (DeepEP's `__global__ void dispatch(...)`
        # beside the `void dispatch(...)` that launches it through `cudaLaunchKernelEx`). Merged, the
        # host function's callers called the kernel, and its launch was the kernel launching itself.
        # The host function is what a call names; the kernel is what a launch names, under
        # `cpp:__global__ <qualified name>`, and the calls made in each body are that one's.
        hosts = {d.id for d in defs if d.kind in (NodeKind.FUNCTION, NodeKind.METHOD)}
        self.hidden_kernels: dict[str, str] = {}  # the qualified name of such a kernel -> its id
        self._kernel_bodies: dict[tuple[str, str], list[tuple[int, int, str]]] = collections.defaultdict(list)
        for d in defs:
            if d.kind is NodeKind.KERNEL and d.id in hosts:
                qual = id_name(d.id)
                d.id = cpp_id(GLOBAL_PREFIX + qual)
                self.hidden_kernels[qual] = d.id
                self._kernel_bodies[d.path, d.record.qual].append((d.record.start, d.record.end, d.id))
        self.types.update(id_name(node_id) for node_id in self._hidden_ids)
        # a file's qualified name: its function's when it also writes a type of that name (callers)
        self.by_file_qual: dict[tuple[str, str], str] = {}
        for d in sorted(defs, key=lambda d: d.kind not in CALLABLE) if self.hidden_types else defs:
            if not (self.hidden_kernels and d.id.startswith(_HIDDEN_KERNEL)):  # a kernel's body is found by line
                self.by_file_qual.setdefault((d.path, d.record.qual), d.id)
        self.defs_by_path: dict[str, list[Def]] = collections.defaultdict(list)
        for d in defs:
            self.defs_by_path[d.path].append(d)
        self.groups: dict[str, list[Def]] = collections.defaultdict(list)
        for d in defs:
            self.groups[d.id].append(d)
        self.node_by_id: dict[str, Node] = {}
        self.sites: list[DefinitionSite] = []
        for node_id, group in sorted(self.groups.items()):
            self.node_by_id[node_id] = self._merge(node_id, group)
        self._resolved: dict[tuple[str, str, bool, str], str] = {}
        # files whose anonymous namespace defines a type: elsewhere a type's file does not change
        # what its name resolves to, so those look-ups are shared across files (torch's signatures
        # name `at::Tensor` 300,000 times from a few thousand scopes)
        self._local_type_paths = {d.path for d in defs if (d.record.kind in _TYPE_RECORDS or d.record.aliases)
                                  and "(anonymous namespace@" in d.record.qual}
        self._types_resolved: dict[tuple[str, str, str], str] = {}
        self.short_kernels: dict[str, list[str]] = collections.defaultdict(list)
        for n in self.node_by_id.values():
            if n.kind is NodeKind.KERNEL:
                self.short_kernels[n.name].append(n.id)
        self.namespace_aliases = NamespaceAliases(namespace_aliases or {}, seen_by or {}, self.scopes, self.id_of)
        self.usings = Usings(usings or {}, usings_seen_by or {}, namespaces, self.namespace_aliases, self.id_of)
        self._ambiguous: set[tuple[str, str, bool, str]] = set()  # resolve_callee's keys the usings left ambiguous
        self._types_through_usings: dict[tuple[str, str, str], str] = {}
        self._includes = includes or {}
        self._included: dict[str, frozenset[str]] = {}  # a file -> it and the files it includes, transitively
        # callable names that more than one node has (`ns1::f`, `ns2::f`): only those can be found in
        # the wrong namespace (:meth:`_out_of_view`)
        counts = collections.Counter(n.name for n in self.node_by_id.values() if n.kind in CALLABLE)
        self._shared_names = frozenset(name for name, count in counts.items() if count > 1)

    def _resolve(self, d: Def) -> None:
        r = d.record
        kind = r.kind
        name = r.qual.rsplit("::", 1)[-1] if "::" in r.qual else r.qual
        enclosing = [n for n, k in r.scope if k]
        written = [n for n, k in r.scope if not k]
        if kind in TYPE_KINDS:
            d.kind = TYPE_KINDS[kind]
            d.id = cpp_id(r.qual)
            d.parent = "::".join(enclosing)
            return
        parent = "::".join(enclosing)
        if written:
            if written and written[0] == "":
                written = written[1:]
                enclosing = []
            parent = "::".join(enclosing + written)
            for k in range(len(enclosing), -1, -1):
                candidate = "::".join(enclosing[:k] + written)
                if candidate in self.scopes:
                    parent = candidate
                    break
                # `void Helper::run() {}` outside the anonymous namespace that declares Helper
                local = "::".join(enclosing[:k] + [local_namespace(d.path)] + written)
                if local in self.scopes:
                    parent = local
                    break
        d.parent = parent
        d.id = cpp_id(f"{parent}::{name}" if parent else name)
        if kind == "kernel":
            d.kind = NodeKind.KERNEL
        elif parent in self.aggregates or "member" in r.tags:
            d.kind = NodeKind.METHOD
        else:
            d.kind = NodeKind.FUNCTION

    def _merge(self, node_id: str, group: list[Def]) -> Node:
        if len(group) == 1:
            return self._single(node_id, group[0])
        kinds = {d.kind for d in group}
        kind = min(kinds, key=_KIND_ORDER.index)
        same = [d for d in group if d.kind is kind]
        # the definition's location wins over a declaration's, the system's own over a test's, a
        # primary template over its specialisations; then a stable order
        rep = min(same, key=lambda d: (not d.is_definition, _in_tests(d.path), "specialization" in d.record.tags,
                                       d.path, d.record.line))
        tags: set[str] = set()
        is_defined = any(d.is_definition for d in same)
        for d in group:
            tags.update(d.record.tags)
            self.sites.append(DefinitionSite(node_id, d.path, d.record.line, d.record.start,
                                             d.record.end, d.is_definition))
        if is_defined:
            tags.discard("declaration")
        tags.discard("member")
        tags.discard(C_LINKAGE)  # CppShared.c_linkage says it
        # a node is a template only when every definition of it is one (an explicit
        # specialisation beside a primary template is still the template's node)
        if any("template" not in d.record.tags for d in same if d.is_definition):
            tags.discard("template")
        signatures = {d.record.signature for d in same if d.is_definition}
        if len(signatures) > 1:
            tags.add("overloaded")
        if kind is NodeKind.KERNEL:
            tags.add("kernel")
        qual, name = _qual_and_name(node_id)
        doc = rep.record.doc or next((d.record.doc for d in same if d.record.doc), "")
        here = (rep.path, rep.record.line)
        sites = sorted({Location(d.path, d.record.line) for d in group
                        if d.is_definition and (d.path, d.record.line) != here})
        params: tuple[Parameter, ...] = ()
        returns = ""
        overloads: tuple[Signature, ...] = ()
        if kind in CALLABLE:
            params, returns, overloads = _callable_shape(rep, same)
        return Node(node_id, kind, name, qual, rep.language.value, rep.path,
                    rep.record.line, doc, rep.record.signature, tuple(sorted(tags)),
                    params=params, returns=returns, overloads=overloads, sites=tuple(sites))

    def _single(self, node_id: str, d: Def) -> Node:
        """:meth:`_merge` of a node with one definition record (torch: 68,000 of 78,000 nodes),
        without the comparisons between records that cannot differ."""
        r = d.record
        self.sites.append(DefinitionSite(node_id, d.path, r.line, r.start, r.end, r.is_definition))
        tags = set(r.tags)
        tags.discard("member")
        tags.discard(C_LINKAGE)
        if d.kind is NodeKind.KERNEL:
            tags.add("kernel")
        qual, name = _qual_and_name(node_id)
        params: tuple[Parameter, ...] = ()
        returns = ""
        if d.kind in CALLABLE:
            params, returns = _merged_params([d]), r.returns
        return Node(node_id, d.kind, name, qual, d.language.value, d.path, r.line, r.doc,
                    r.signature, tuple(sorted(tags)), params=params, returns=returns)

    def nodes(self) -> list[Node]:
        return list(self.node_by_id.values())

    def id_of(self, path: str, qual: str, of_type: bool = False, line: int = 0) -> str:
        """The node of the definition written as ``qual`` in ``path`` (an anonymous namespace as
        the scanner spells it); a function's when the file also defines a type of that name, the
        type's with ``of_type``; a host function's when the file also defines a kernel of that name,
        the kernel's when ``line`` is in its body."""
        if ANONYMOUS_NAMESPACE in qual:
            qual = qual.replace(ANONYMOUS_NAMESPACE, local_namespace(path))
        if line and self._kernel_bodies:
            for start, end, kernel in self._kernel_bodies.get((path, qual), ()):
                if start <= line <= end:
                    return kernel
        found = self.by_file_qual.get((path, qual), "")
        return self.hidden_types.get(qual, found) if of_type and found else found

    def definitions(self) -> Iterable[Def]:
        return self.defs

    def resolve_type(self, scope: str, written: str, path: str = "") -> str:
        """The node of the type ``written`` names as seen from ``scope`` in ``path``; an id of the
        name itself when the system defines no such type."""
        heads = self.namespace_aliases.heads
        if heads and "::" in written and written.replace("virtual", "").lstrip(": ").partition("::")[0] in heads:
            name = _strip_template_args(written.replace("virtual", "").strip())
            expanded = self.namespace_aliases.expand(path, scope, name)
            if expanded is None:
                return cpp_id(name.lstrip(":"))  # aliases that disagree: not guessed
            written = expanded
        file = path
        if path not in self._local_type_paths:
            path = ""
        key = (scope, written, path)
        hit = self._types_resolved.get(key)
        if hit is None:
            hit = self._types_resolved[key] = self._resolve_type(scope, written, path)
        if file and id_name(hit) not in self.types and self.usings.sees_any(file):
            # not found in the enclosing scopes: through the usings the file sees (which differ by file)
            key = (scope, written, file)
            through = self._types_through_usings.get(key)
            if through is None:
                through = self._types_through_usings[key] = self._type_through_usings(scope, written, file) or hit
            hit = through
        return hit

    def _resolve_type(self, scope: str, written: str, path: str) -> str:
        stripped = _strip_template_args(written.replace("virtual", "").strip())
        name = stripped.lstrip(":")
        # `::grpc::Server` names the global namespace's, never an enclosing namespace's of that name
        return self._find_type("" if stripped.startswith("::") else scope, name, path) or cpp_id(name)

    def _find_type(self, scope: str, name: str, path: str) -> str:
        """The type ``name`` (no leading `::`) names from ``scope`` and the scopes enclosing it, "" for none."""
        for prefix in _outward(scope):
            found = self._type_at(_candidates(prefix, name, path))
            if found:
                return found
        return ""

    def _type_at(self, candidates: Iterable[str]) -> str:
        for candidate in candidates:
            if candidate in self.types:
                return self.type_id(candidate)
            if candidate in self.aliases:
                return self.type_id(self.aliases[candidate])
        return ""

    def qual_of(self, node_id: str) -> str:
        """The qualified name of a node as a scope (`stat` for `cpp:struct stat`)."""
        if node_id.startswith(_HIDDEN_KERNEL):
            return id_name(node_id)[len(GLOBAL_PREFIX):]
        return unelaborated(id_name(node_id)) if node_id in self._hidden_ids else id_name(node_id)

    def type_id(self, qual: str) -> str:
        """The id of the type (or scope) ``qual``: its elaborated name's when a function shares its name."""
        return self.hidden_types.get(qual) or cpp_id(qual)

    def _type_through_usings(self, scope: str, written: str, path: str) -> str:
        """The type ``written`` names in ``scope`` of ``path`` through the usings seen there, "" for
        none (or several)."""
        name = _strip_template_args(written.replace("virtual", "").strip())
        if name.startswith("::"):
            return ""
        hit = self._through_usings(path, scope, name, lambda s, n: self._find_type(s, n.lstrip(":"), path),
                                   lambda prefix: self._type_at(_candidates(prefix, name, path)))
        return hit or ""

    def known_type(self, scope: str, written: str, path: str = "") -> str:
        """The node of the type ``written`` names as seen from ``scope`` in ``path``, "" when the
        system defines no such type (``resolve_type`` would name it anyway)."""
        target = self.resolve_type(scope, written, path)
        return target if target in self.node_by_id else ""

    def resolve_reference(self, scope: str, name: str, path: str = "") -> str:
        """A function named in code (`&fn`, `&ns::Class::method`) as seen from ``scope`` in ``path``."""
        if not name or name == "<lambda>":
            return ""
        if ANONYMOUS_NAMESPACE in scope and path:
            scope = scope.replace(ANONYMOUS_NAMESPACE, local_namespace(path))
        return self.resolve_callee(cpp_id((f"{scope}::" if scope else "") + "<ref>"), name, path=path)

    def resolve_lambda(self, path: str, scope: str, callees: Iterable[str]) -> tuple[str, str]:
        """(`<lambda> -> f`, node of f) for a binding given as a lambda: the first function it
        calls that is defined outside the binding's own file (its helpers, such as an error
        check wrapping the call, live beside it), else the first it calls at all."""
        resolved = [(c, self.resolve_reference(scope, c, path)) for c in callees]
        resolved = [(c, t) for c, t in resolved if t]
        outside = [(c, t) for c, t in resolved if self.node_by_id[t].path != path]
        for c, t in outside or resolved:
            return f"<lambda> -> {c}", t
        return "<lambda>", ""

    def resolve_callee(self, caller: str, callee: str, kernel_only: bool = False, path: str = "") -> str:
        """The node ``callee`` names when called from ``caller`` in file ``path`` ("" if none)."""
        if not caller:
            return ""
        key = (caller, callee, kernel_only, path)
        hit = self._resolved.get(key)
        if hit is None:
            hit = self._resolved[key] = self._resolve_callee(caller, callee, kernel_only, path)
        return hit

    def through_conflicting_aliases(self, caller: str, callee: str, path: str) -> bool:
        """Whether ``callee``, called from ``caller`` in ``path``, is written through namespace
        aliases that disagree there (so :meth:`resolve_callee` left it unresolved)."""
        if not caller or "::" not in callee or not self.namespace_aliases.heads:
            return False
        return self.namespace_aliases.expand(path, self.qual_of(caller), _strip_template_args(callee)) is None

    def through_ambiguous_usings(self, caller: str, callee: str, path: str, kernel_only: bool = False) -> bool:
        """Whether ``callee``, called from ``caller`` in ``path``, resolves to different entities
        through the usings seen there (so :meth:`resolve_callee` left it unresolved)."""
        return (caller, callee, kernel_only, path) in self._ambiguous

    def _resolve_callee(self, caller: str, callee: str, kernel_only: bool, path: str) -> str:
        name = _strip_template_args(callee)
        caller_qual = self.qual_of(caller)
        if name.startswith("this->") and "." not in name[6:] and "->" not in name[6:]:
            # a member of the caller's class, not of an enclosing namespace; one of a base, and a call
            # through any other object, is resolved through declared types (extractor.cpp.members)
            owner = caller_qual.rsplit("::", 1)[0] if "::" in caller_qual else ""
            return self._callable_at(_candidates(owner, name[6:], path), kernel_only) if owner else ""
        if "." in name or "->" in name:
            return ""
        if "::" in name and self.namespace_aliases.heads:
            expanded = self.namespace_aliases.expand(path, caller_qual, name)
            if expanded is None:
                return ""  # aliases that disagree: not guessed
            name = expanded
        absolute = name.startswith("::")
        name = name.lstrip(":")
        scope = caller_qual.rsplit("::", 1)[0] if "::" in caller_qual else ""
        found = self._find_callable(scope, name, path, kernel_only)
        if found and not absolute and name.rpartition("::")[2] in self._shared_names and self.usings.sees_any(path):
            # `registerOps(m)` in namespace rtp_llm finds rtp_llm::registerOps, which only a header
            # for another platform declares, while a header the file includes declares
            # torch_ext::registerOps and `using namespace torch_ext;`: C++ sees the latter alone
            def find(where: str, written: str) -> str:
                return self._find_callable(where, written.lstrip(":"), path, kernel_only)

            def at(prefix: str) -> str:
                return self._callable_at(_candidates(prefix, name, path), kernel_only)

            through = self._through_usings(path, caller_qual, name, find, at)
            if through != "" and through != found and self._out_of_view(found, path):
                # again with the entities the file sees alone: a directive of the caller's own namespace
                # nominates the unseen one too, which is no rival
                through = self._through_usings(path, caller_qual, name, find, at,
                                               seen=lambda node: not self._out_of_view(node, path))
                if through:
                    return through
        if found:
            return found
        if not absolute and self.usings.sees_any(path):
            through = self._through_usings(
                path, caller_qual, name, lambda s, n: self._find_callable(s, n.lstrip(":"), path, kernel_only),
                lambda prefix: self._callable_at(_candidates(prefix, name, path), kernel_only))
            if through is None:
                self._ambiguous.add((caller, callee, kernel_only, path))
                return ""
            if through:
                return through
        if kernel_only:
            # a kernel launch names a kernel, so a unique kernel of that name is the one
            hits = self.short_kernels.get(name.rsplit("::", 1)[-1], [])
            if len(hits) == 1:
                return hits[0]
        return ""


    def _out_of_view(self, node_id: str, path: str) -> bool:
        """Whether no file ``path`` includes (itself included, transitively) declares or defines
        ``node_id``; False when the includes are not known."""
        if not self._includes:
            return False
        seen = self._included.get(path)
        if seen is None:
            found, stack = {path}, [path]
            while stack:
                for target in self._includes.get(stack.pop(), ()):
                    if target not in found:
                        found.add(target)
                        stack.append(target)
            seen = self._included[path] = frozenset(found)
        return not any(d.path in seen for d in self.groups.get(node_id, ()))

    def _find_callable(self, scope: str, name: str, path: str, kernel_only: bool) -> str:
        """The function ``name`` (no leading `::`) names from ``scope`` and the scopes enclosing it, "" for none."""
        for prefix in _outward(scope):
            found = self._callable_at(_candidates(prefix, name, path), kernel_only)
            if found:
                return found
        return ""

    def _callable_at(self, candidates: Iterable[str], kernel_only: bool) -> str:
        for qual in candidates:
            node = self.node_by_id.get(self.hidden_kernels.get(qual, "") if kernel_only else "") \
                or self.node_by_id.get(cpp_id(qual))
            if node is not None and node.kind in CALLABLE and (not kernel_only or node.kind is NodeKind.KERNEL):
                return node.id
        return ""

    def _through_usings(self, path: str, scope: str, name: str, find: Callable[[str, str], str],
                        at: Callable[[str], str], seen: Callable[[str], bool] | None = None) -> str | None:
        """What ``name`` names in ``scope`` (a use's, a function's name included) of ``path``
        through the using-declarations of its head seen there, else through the namespaces the
        using-directives seen there nominate (:mod:`extractor.cpp.usings`): ``find(scope, name)`` looks a
        name up from a declaration's scope outwards, ``at(namespace)`` in one namespace; ``seen(node)``,
        when given, keeps only the entities it accepts. "" for nothing, None for several different
        entities."""
        head, sep, rest = name.partition("::")
        if head in self.usings.declared_names:
            declared = self.usings.declarations(path, scope, head)
            hits = {find(where, target + sep + rest) for where, target in declared} - {""}
            if seen is not None:
                hits = {hit for hit in hits if seen(hit)}
            if len(hits) > 1:
                return None
            if hits:
                return hits.pop()
        hits = {at(namespace) for namespace in self.usings.nominated(path, scope)} - {""}
        if seen is not None:
            hits = {hit for hit in hits if seen(hit)}
        if len(hits) > 1:
            return None
        return hits.pop() if hits else ""


def _candidates(prefix: str, name: str, path: str) -> list[str]:
    """``prefix::name``, then the same inside ``path``'s anonymous namespace at that level."""
    plain = f"{prefix}::{name}" if prefix else name
    if not path:
        return [plain]
    local = local_namespace(path)
    return [plain, f"{prefix}::{local}::{name}" if prefix else f"{local}::{name}"]


def _callable_shape(rep: Def, same: list[Def]) -> tuple[tuple[Parameter, ...], str, tuple[Signature, ...]]:
    """The node's parameters and return type (its own definition's, with defaults and names that
    only a declaration states), and every distinct parameter list when there are several."""
    by_types: dict[tuple[tuple[str, ...], str], list[Def]] = {}
    for d in sorted(same, key=lambda d: (not d.is_definition, d.path, d.record.line)):
        key = (tuple(p.type for p in d.record.params), d.record.returns)
        by_types.setdefault(key, []).append(d)
    shapes = {key: _merged_params(group) for key, group in by_types.items()}
    rep_key = (tuple(p.type for p in rep.record.params), rep.record.returns)
    overloads: tuple[Signature, ...] = ()
    if len(shapes) > 1:
        # by place: parameters with and without defaults (None) do not order
        overloads = tuple(sorted((Signature(shapes[key], key[1], group[0].path, group[0].record.line)
                                  for key, group in by_types.items()), key=lambda s: (s.path, s.line)))
    return shapes[rep_key], rep.record.returns, overloads


def _merged_params(group: list[Def]) -> tuple[Parameter, ...]:
    out = []
    for i, param in enumerate(group[0].record.params):
        name, type_text, default = param.name, param.type, param.default
        for d in group[1:]:
            other = d.record.params
            if i < len(other):
                name = name or other[i].name
                default = default if default is not None else other[i].default
        out.append(_parameter(name, type_text, default))
    return tuple(out)


@functools.lru_cache(maxsize=1 << 16)
def _parameter(name: str, type_text: str, default: str | None) -> Parameter:
    """One parameter, shared by every node that has it (torch's nodes have 180,000 parameters,
    16,000 distinct ones: `const at::Tensor & self` ...)."""
    kind = ParamKind.VAR_POSITIONAL if name == "..." or type_text.endswith("...") else ParamKind.POSITIONAL_ONLY
    return Parameter(name, kind, type_text, default)


def _outward(scope: str) -> list[str]:
    parts = scope.split("::") if scope else []
    return ["::".join(parts[:k]) for k in range(len(parts), -1, -1)]


def _strip_template_args(text: str) -> str:
    if "<" not in text:
        return text.replace(" ", "")
    out, depth = [], 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out).replace(" ", "")
