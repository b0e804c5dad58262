"""Records shared by every evidence kind.

Records are frozen, slotted dataclasses holding tuples, so they hash, sort and compare; the
bundle turns them into JSON with :func:`to_jsonable`. The graph's two records, :class:`Node` and
:class:`Edge`, are frozen msgspec Structs with the same semantics (positional and keyword fields,
equality, order, hash, pickling by their fields): a run builds them by the hundred thousand
(vLLM 0.10.2: 50,000 nodes and 128,000 edges in the driver), and a Struct is built in C, where a
frozen dataclass's ``__init__`` sets each of its fields through ``object.__setattr__`` (a node in
2.2 us against 0.2 us, an edge 0.7 against 0.14 us). Every record that comes from code carries a
``path`` (POSIX, relative to its source root, prefixed by the source label in multi-source
systems) and a ``line`` (1-based; 0 when the thing has no line, such as a whole file).
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

import msgspec
from msgspec.structs import force_setattr

R = TypeVar("R")  # a record type
X = TypeVar("X")  # what a step shares with later steps


class Language(str, enum.Enum):
    PYTHON = "python"
    CPP = "cpp"
    CUDA = "cuda"
    RUST = "rust"
    GO = "go"
    PROTO = "proto"  # Protocol Buffers (.proto): messages, enums, services
    SWIG = "swig"  # SWIG interface files (.i, .swig): the Python module they make of C++ headers
    YAML = "yaml"
    JSON = "json"


class NodeKind(str, enum.Enum):
    MODULE = "module"  # a Python module, a Rust module, a Go package
    FILE = "file"  # a C/C++/CUDA source or header file, a .proto file
    NAMESPACE = "namespace"
    CLASS = "class"
    STRUCT = "struct"
    UNION = "union"
    ENUM = "enum"
    FUNCTION = "function"
    METHOD = "method"
    KERNEL = "kernel"  # a CUDA __global__ function
    ATTRIBUTE = "attribute"  # a module-level name, class/instance attribute, field, property, enum member
    TRAIT = "trait"  # a Rust trait
    INTERFACE = "interface"  # a Go interface, a protobuf service
    EXTERNAL = "external"  # a name outside the analysed system (torch.nn.Module, std::vector)


class EdgeKind(str, enum.Enum):
    CONTAINS = "contains"
    INHERITS = "inherits"
    CALLS = "calls"
    IMPORTS = "imports"
    INCLUDES = "includes"
    BINDS = "binds"  # Python call site -> C++ function registered under that name
    LAUNCHES = "launches"  # kernel<<<...>>> site -> kernel
    IMPLEMENTS = "implements"  # Rust `impl Trait for T`, Go type -> interface it is checked against
    ALIASES = "aliases"  # a re-exported name, or a module importing a symbol under its name -> that symbol
    USES = "uses"  # a C/C++ function, method or kernel -> a struct/class/union its signature names


class Severity(str, enum.Enum):
    ERROR = "error"  # the file (or object) could not be used at all
    WARNING = "warning"  # part of it could not be used
    INFO = "info"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Location:
    path: str
    line: int


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Diagnostic:
    """Something that could not be read, parsed, resolved or compiled, and why."""

    path: str
    line: int
    code: str  # short stable slug: "syntax-error", "too-large", "symlink-outside", ...
    message: str
    severity: Severity = Severity.WARNING

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity.value}: {self.message} [{self.code}]"


class ParamKind(str, enum.Enum):
    """Python's five parameter kinds (``inspect.Parameter.kind``); C++/Rust/Go parameters are
    positional-only."""

    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    VAR_POSITIONAL = "var-positional"
    KEYWORD_ONLY = "keyword-only"
    VAR_KEYWORD = "var-keyword"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Parameter:
    name: str
    kind: ParamKind = ParamKind.POSITIONAL_OR_KEYWORD
    annotation: str = ""  # source text of the annotation / C++ type, never truncated
    default: str | None = None  # source text of the default; None when the parameter has none


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Signature:
    """One callable shape: a function's own, or one ``@overload`` variant."""

    params: tuple[Parameter, ...] = ()
    returns: str = ""  # source text of the return annotation / return type
    path: str = ""
    line: int = 0


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Binding:
    """A name a module binds at module level without a node of its own, and the statement that binds
    it: ``import x``/``from m import y as x`` ("import"), ``from m import *`` ("star import"), a
    ``for``/``with`` target ("for", "with") or a ``global x`` in a function ("global"); ``target``,
    the node an import binds it to when that is a symbol or module of the system ("" otherwise)."""

    name: str
    line: int
    form: str
    target: str = ""


class Node(msgspec.Struct, frozen=True, order=True, gc=False):
    id: str  # stable: "py:pkg.mod.Class.method", "cpp:ns::Class", "file:core/src/x.cc"
    kind: NodeKind
    name: str
    qualname: str
    language: str
    path: str = ""
    line: int = 0
    doc: str = ""  # first line of the docstring / leading comment
    signature: str = ""  # display text only (may be shortened); compare ``params``/``returns``
    tags: tuple[str, ...] = ()  # "async", "property", "staticmethod", "kernel", "template", ...
    # The fields below are written to JSON only when they differ from their default.
    params: tuple[Parameter, ...] = ()
    returns: str = ""
    decorators: tuple[str, ...] = ()  # dotted names as written ("dataclass", "functools.cache")
    overloads: tuple[Signature, ...] = ()  # ``@overload`` variants, in source order
    sites: tuple[Location, ...] = ()  # further definition sites of the same entity (``#if`` branches, ...)
    annotation: str = ""  # an attribute's annotation (source text)
    value_kind: str = ""  # an attribute's value: "constant", "call", "alias", "class", "lambda", ...
    api: str = ""  # why the symbol is or is not public ("public: vllm.__all__", "private: underscore", ...)
    bound: tuple[Binding, ...] = ()  # a module's further names (imports, loop targets ...), by name


def amend(node: Node, field: str, value: Any) -> None:
    """Change a field of a node this step built and has not handed out yet (nothing holds it in a
    set or as a key, where its hash would change): one field set in place, where a copy builds
    all twenty again (45,000 nodes on vLLM: the copies were a tenth of the Python graph step)."""
    force_setattr(node, field, value)


def amend_each(nodes: Iterable[Node], field: str, values: Iterable[Any]) -> None:
    """:func:`amend` of each node with its value, in one loop in C (every node's ``api``: 45,000
    Python-level calls on vLLM)."""
    collections.deque(map(force_setattr, nodes, itertools.repeat(field), values), maxlen=0)


class Edge(msgspec.Struct, frozen=True, order=True, gc=False):
    source: str
    target: str
    kind: EdgeKind
    path: str = ""  # where the evidence for the edge is
    line: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedFile:
    """What a per-file scanner sees; built inside a worker process.

    Scanners must not depend on the file's path: their results are cached by content hash and
    reused wherever the same bytes appear (the next release, another repository).
    """

    language: Language
    data: bytes
    tree: Any  # ast.Module / libcst.Module for Python, tree_sitter.Tree for C++/CUDA, None otherwise

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclasses.dataclass(frozen=True, slots=True)
class RecordKind(Generic[R]):
    """One list of records in the evidence bundle: its key there and the record type it holds.

    A kind declares it once, beside its record type (``STRUCTS = RecordKind("structs",
    StructLayout)``); its step names it, and the bundle's keys, the loader's record types and
    :meth:`extractor.evidence.read.Evidence.of` follow from the steps."""

    key: str
    record: type[R]


@dataclasses.dataclass(frozen=True, slots=True)
class Contribution(Generic[X]):
    """What one evidence kind adds to the bundle, and what it shares with later kinds."""

    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    records: tuple[Any, ...] = ()  # goes under the bundle key of the step's ``records`` kind
    diagnostics: tuple[Diagnostic, ...] = ()
    stats: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # The step's own typed record for the steps after it (``ctx.result(STEP).shared``); None when
    # the step found nothing to share (no file of its language, say).
    shared: X | None = None


Scanner = Callable[[ParsedFile], Any]


@dataclasses.dataclass(frozen=True, slots=True, eq=False)  # a step is itself: equal and hashed by identity
class Step(Generic[X]):
    """One evidence kind, as the pipeline runs it: everything about the kind is declared here once.

    ``scanners`` run once per file of their language, in worker processes, and must return
    JSON-serialisable facts (they are cached by content hash). ``extract`` runs once per system in
    the main process, after the steps it ``requires``, and turns the facts into a
    :class:`Contribution`. ``records`` names the bundle list the kind writes (and the loader reads).
    """

    name: str
    extract: Callable[[Any], Contribution[X]]  # (extractor.context.Context) -> Contribution
    scanners: Mapping[Language, Scanner] = dataclasses.field(default_factory=dict)
    records: RecordKind[Any] | None = None  # None when the step only adds graph parts
    version: str = "1"  # bump when a scanner's output changes, to invalidate cached facts
    # The Python scanner gets a libcst tree for files whose syntax is newer than the running
    # interpreter's ast; scanners without this flag are not run on such files.
    python_fallback: bool = False
    # The steps whose results ``extract`` reads (``ctx.result(step)``), by the steps themselves: the
    # pipeline runs this step only after them, and refuses a list of steps that does not.
    requires: tuple[Step[Any], ...] = ()
    # Work that needs only the run's options (the data files the step reads, parsed and indexed):
    # (extractor.context.ExtractOptions) -> anything, kept by the step's own caches. The pipeline
    # runs it while the pool scans, when the driver mostly waits; extract then finds it done.
    prepare: Callable[[Any], object] | None = None
    # Work on one file's facts that needs nothing of the other files but its path and module name:
    # () -> ((path, module, facts) -> anything), made once per run. The pipeline calls it on each
    # result as it comes back from the pool, in the driver's time that otherwise waits on the
    # workers (with many cores, time the workers' share hides); ``extract`` finds what it returned
    # with ``ctx.take_ahead(step)``, by path. A file it was not called on (its facts came from the cache
    # with no pool running, or its content is another file's) is not there: extract does the work
    # itself. The module name is the inventory's (extractor.naming.module_names over every Python
    # file; "" for other languages): a step that names modules otherwise checks it.
    ahead: Callable[[], Callable[[str, str, Any], Any]] | None = None
    # ``extract`` is plain computation (it reads files at most: no locks, threads, writes, nor
    # results of steps it does not require) and its contribution pickles compactly: the pipeline
    # may run it in a forked child beside the driver's steps (extractor.support.forkmap.fork_ahead).
    # Its facts are then decoded there, on first use, not by the driver with the scan's results.
    forkable: bool = False
    # ``extract`` spends its time waiting on programs it runs (the struct probes' compilers): with
    # more than one job the pipeline runs it in a thread of the driver, from when the steps it
    # ``requires`` are done, beside the steps after it, which thereby go on while it waits. It sees
    # the results of the steps it requires and no other (also when run in order), its
    # contribution adds records and no graph parts, and a later step reads it only by requiring it.
    background: bool = False

    @property
    def bundle_key(self) -> str:
        return self.records.key if self.records is not None else ""


# attrgetter, not a def: graphs are sorted by it (50,000 nodes on vLLM), and it runs in C.
node_key: Callable[[Node], str] = operator.attrgetter("id")


def edge_key(edge: Edge) -> tuple[str, str, str, str, int]:
    return (edge.source, edge.target, edge.kind.value, edge.path, edge.line)


def node_fields(n: Node) -> dict[str, Any]:
    """The fields of a node that its JSON carries, as they are: nested records (``params``,
    ``overloads``, ``sites``) stay dataclasses and tuples stay tuples, for an encoder that walks
    them itself (:mod:`extractor.evidence.write`); :func:`node_json` turns them into plain values."""
    # Written out by hand: graphs have tens of thousands of nodes and the generic walk is 5x slower.
    out = {"id": n.id, "kind": n.kind, "name": n.name, "qualname": n.qualname, "language": n.language,
           "path": n.path, "line": n.line, "doc": n.doc, "signature": n.signature, "tags": n.tags}
    # Optional fields only when set: most nodes have none, and the bundle stays small.
    if n.params:
        out["params"] = n.params
    if n.returns:
        out["returns"] = n.returns
    if n.decorators:
        out["decorators"] = n.decorators
    if n.overloads:
        out["overloads"] = n.overloads
    if n.sites:
        out["sites"] = n.sites
    if n.annotation:
        out["annotation"] = n.annotation
    if n.value_kind:
        out["value_kind"] = n.value_kind
    if n.api:
        out["api"] = n.api
    if n.bound:
        out["bound"] = n.bound
    return out


def node_json(n: Node) -> dict[str, Any]:
    """A node as plain JSON values."""
    out = node_fields(n)
    out["kind"] = n.kind.value
    out["tags"] = list(n.tags)
    for key in ("params", "decorators", "overloads", "sites", "bound"):
        if key in out:
            out[key] = [to_jsonable(v) for v in out[key]]
    return out


def edge_json(e: Edge) -> dict[str, Any]:
    return {"source": e.source, "target": e.target, "kind": e.kind.value, "path": e.path, "line": e.line}


def to_jsonable(value: Any) -> Any:
    """Turn records (dataclasses, enums, tuples, mappings) into plain JSON values."""
    convert = _CONVERTERS.get(type(value))
    if convert is None:
        convert = _CONVERTERS[type(value)] = _converter(type(value))
    return convert(value)


# What to do with a value depends only on its type: decided once per type (the bundle's records
# hold 70,000 values on vLLM; asking isinstance and dataclasses.fields of each was most of the time).
_CONVERTERS: dict[type, Callable[[Any], Any]] = {}


def _converter(cls: type) -> Callable[[Any], Any]:
    if issubclass(cls, Node):
        return node_json
    if issubclass(cls, Edge):
        return edge_json
    if issubclass(cls, enum.Enum):
        return _enum_value
    if dataclasses.is_dataclass(cls):
        # A trailing underscore only dodges a Python keyword (``for_``): JSON keeps the plain word.
        names = tuple((f.name.removesuffix("_"), f.name) for f in dataclasses.fields(cls))
        return lambda value: {key: to_jsonable(getattr(value, name)) for key, name in names}
    if issubclass(cls, Mapping):
        return lambda value: {str(k): to_jsonable(v) for k, v in value.items()}
    if issubclass(cls, (set, frozenset)):
        return lambda value: sorted([to_jsonable(v) for v in value], key=repr)
    if issubclass(cls, (list, tuple)):
        return lambda value: [to_jsonable(v) for v in value]
    return _as_it_is


def _enum_value(value: enum.Enum) -> Any:
    return value.value


def _as_it_is(value: Any) -> Any:
    return value
