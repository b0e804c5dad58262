"""What the C/C++/CUDA scanner returns for one file, as typed records (msgspec Structs).

The scanner runs in worker processes and its facts cross to the driver (and into the fact cache)
as msgpack; the driver decodes them back into these types, because :func:`extractor.cpp.scan.scan_cpp`
is annotated to return :class:`CppFacts` (see :mod:`extractor.run.facts`). So the graph step reads
``d.qual`` and ``facts.includes``, checked by mypy, instead of ``record["qual"]`` and
``facts.get("includes", ())``.

Records that a file has many of (definitions, parameters) are ``array_like``: encoded as arrays,
without their field names. Measured on the 8,697 definitions of vLLM's csrc and Triton
core+server: 1.99 MB as arrays, 2.42 MB as maps even with their defaults left out. Small
positional records that every consumer unpacks in a ``for`` header (includes) stay tuples; call
sites are grouped by caller (:mod:`extractor.native.calls`). Nothing here depends on the file's
path: facts are cached by content hash.
"""

from __future__ import annotations

import msgspec

from extractor.native.calls import CallSites
from extractor.native.macros import MacroDefinition

Scope = tuple[tuple[str, str], ...]  # (name, kind) of each enclosing scope; kind "" for a written qualifier


class Param(msgspec.Struct, frozen=True, array_like=True):
    """One parameter of a C/C++ function: the declaration's type with the name cut out."""

    name: str
    type: str
    default: str | None = None  # None when it has no default (an empty default is "")


class Definition(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """One definition or declaration: namespace, class/struct/union/enum, function, kernel."""

    kind: str  # "namespace", "class", "struct", "union", "enum", "function", "kernel"
    qual: str  # scope names joined with `::` (an anonymous namespace is `(anonymous namespace)`)
    scope: Scope  # the enclosing scopes, the definition itself excluded
    line: int  # of the name
    start: int  # first line of the whole definition
    end: int
    # template, specialization, declaration, member, private/protected, static, recovered, device/host
    tags: tuple[str, ...] = ()
    signature: str = ""  # display text of the parameter list (callables)
    params: tuple[Param, ...] = ()
    returns: str = ""
    bases: tuple[str, ...] = ()  # as written in the base clause
    aliases: tuple[str, ...] = ()  # `typedef struct X_s {...} X;`: the typedef name
    doc: str = ""
    # the names of the template parameters in scope (its own and its class template's): a type
    # written with one of them is not known until instantiated
    template_params: tuple[str, ...] = ()

    @property
    def is_definition(self) -> bool:
        return "declaration" not in self.tags


class SchemaParam(msgspec.Struct, frozen=True, array_like=True):
    """One argument of a torch operator schema (`Tensor! out`, `float eps=1e-6`)."""

    name: str
    type: str
    default: str | None
    keyword_only: bool


class OpSchema(msgspec.Struct, frozen=True):
    """The parsed schema string of an `ops.def("name.overload(args) -> returns")`."""

    text: str  # the schema as written, whitespace normalised
    params: tuple[SchemaParam, ...]
    returns: str


class TorchOpFact(msgspec.Struct, frozen=True, omit_defaults=True):
    """`m.def(...)`/`m.impl(...)` inside a `TORCH_LIBRARY*` block, names as written."""

    kind: str  # "def" or "impl"
    op: str
    overload: str
    line: int  # the line that names the operator
    dispatch: str
    fn: str  # the function as written, "<lambda>", or "" for a schema alone
    scope: str  # the scope the block is in
    ns: str  # the library namespace when written out (`_C`)
    ns_macro: str  # or the build macro that names it (`TORCH_EXTENSION_NAME`)
    ns_suffix: str  # `_cache_ops` of `CONCAT(TORCH_EXTENSION_NAME, _cache_ops)`
    schema: OpSchema | None = None
    lambda_calls: tuple[str, ...] = ()  # what a lambda implementation calls, in source order


# A PybindFact's module when its registration is in a function given the module (``void
# register_translator(py::module& m)``): this prefix, then that function's qualified name; the graph
# step gives it the modules of the blocks that call it (extractor.cpp.ops).
HELPER_MODULE = "@"
# The block of a MacroUse in a pybind11 module block or a function given the module: its block_args
# are the module (or HELPER_MODULE + the function) and the variable holding it
PYBIND_BLOCK = "@pybind11"


class PybindFact(msgspec.Struct, frozen=True, omit_defaults=True):
    """A pybind11 (or nanobind) registration inside a `PYBIND11_MODULE` (`NB_MODULE`) block or a
    function given its module, names as written; or a Paddle custom operator (mechanism "paddle-op":
    ``module`` the build's macro, ``name`` the operator's); or a TVM FFI global function (mechanism "tvm-ffi":
    ``module`` its dotted name's prefix, ``name`` the last part)."""

    kind: str  # "def", "method", "class", or "module": the module handed to function ``target``
    # the block's module, or HELPER_MODULE + the qualified name of the function given it; then
    # `.<sub>` for each submodule it is in (`core.fft`, `@init_fft.fft`)
    module: str
    name: str  # the Python name
    target: str  # the C++ function or type as written
    line: int
    scope: str
    owner: str = ""  # the Python class of a method
    lambda_calls: tuple[str, ...] = ()
    mechanism: str = "pybind11"  # the library that binds it: "pybind11", "nanobind", "paddle-op", "tvm-ffi" or
    # "tvm-ffi-export" (``module`` "")
    # a "module" fact's call: its arguments (a string literal's value, None for anything else) and
    # template arguments as written (`bind_config<core::NormConfig>(m, "NormConfig")`), which a
    # helper's registrations named by its parameters (PARAMETER + the index: `py::class_<Config>
    # cls(m, name)`) take
    args: tuple[str | None, ...] = ()
    template_args: tuple[str, ...] = ()


# In a helper's PybindFact, a Python name or owner given by the helper's parameter at this index
# (`$1`), or a C++ type given by its template parameter at this index (`$T0`).
PARAMETER = "$"


class NamespaceAlias(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """`namespace ft = turbomind;`: ``name`` stands for the namespace ``target`` (as written, `::` kept)
    in ``scope`` and the scopes nested in it."""

    name: str
    target: str
    scope: str  # the enclosing namespaces joined with `::`, or the function whose body declares it
    line: int
    local: bool = False  # declared in a function body (``scope`` is that function's qualified name)


class Using(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """`using namespace xgrammar;` (a using-directive, ``directive``): the names of that namespace are
    seen in ``scope`` and the scopes nested in it; `using engine::compute;` (a using-declaration):
    `compute` names `engine::compute` there."""

    target: str  # the namespace, or the name declared, as written (`::` kept, spaces removed)
    scope: str  # the enclosing namespaces joined with `::`, or the function whose body holds it
    line: int
    directive: bool = False
    local: bool = False  # in a function body (``scope`` is that function's qualified name)


class Field(msgspec.Struct, frozen=True, array_like=True):
    """A data member: `std::unique_ptr<Model> model_;` in the class ``owner``. Only members whose
    type may name a class are kept (not `int`, `bool`)."""

    owner: str  # the class's qualified name, as its definition record has it
    name: str
    type: str  # the declared type with the name cut out, normalised (`std::unique_ptr<Model>`, `Model*`)
    line: int


class TypeAlias(msgspec.Struct, frozen=True, array_like=True):
    """`using ModelPtr = std::shared_ptr<Model>;` or `typedef Model* ModelPtr;` in a namespace or a class:
    the name stands for ``type`` in ``scope`` and the scopes nested there (and hides what outer scopes
    call so). ``type`` is "" in a template, where it may name the template's parameters."""

    scope: str  # the enclosing namespaces and classes joined with `::`, as definition records write them
    name: str
    type: str
    line: int


class Local(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A variable a function body declares (a local, a lambda's or a range-for's): only those named as
    the object of a member call in that body (`m->Init()`), which are all the graph step asks for."""

    caller: str  # the function whose body declares it, as its calls name it
    name: str
    # as declared (`Model*`, `auto`); for `auto x = new T(...)` `T*`, for `auto x = std::make_unique<T>(...)`
    # `std::unique_ptr<T>` (the factories of extractor/cpp/handles.yaml)
    type: str
    line: int
    end: int  # the last line of its scope (the block, the statement or the lambda that declares it)
    # an `auto` variable's initializer as written, spaces removed, when it is a name, a call or a chain of
    # them (`tc::Model::Create(...)`, `config_`, `a->b()`): the graph step reads its type from theirs
    init: str = ""
    # a range-for's `auto` variable: ``init`` is what it ranges over, and it holds an element of that
    element: bool = False


class Global(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A variable a namespace declares (`Logger gLogger_;`, `static FileSystemManager fsm_;`, `inline
    constexpr auto kU4 = ScalarType::uint(4);`) whose type may be a class of the system (not a builtin
    type): member calls are made on it from anywhere its name is seen."""

    scope: str  # the enclosing namespaces joined with `::`, as definition records write them
    name: str
    type: str  # as declared
    line: int
    init: str = ""  # an `auto` one's initializer, as Local.init
    static: bool = False  # `static` at namespace scope: seen in its own file only


class RegistrationMacro(msgspec.Struct, frozen=True, array_like=True):
    """A function-like macro whose body registers torch operators (`m.impl(...)`, `m.def(...)`) or opens
    a torch library block (`#define LIB() TORCH_LIBRARY_FRAGMENT(ns, m)`): expanded, one level, where a
    block uses it (extractor.cpp.ops)."""

    name: str
    params: tuple[str, ...]
    body: str  # the replacement text, continuation lines joined
    line: int


class MacroUse(msgspec.Struct, frozen=True, array_like=True):
    """A call of a macro in a registration block (`IPEX_OP_REGISTER_DISPATCH("op", fn, key);`), with the
    block it stands in: a torch library block macro and its arguments, or a macro of the system's own
    given a body (`IPEX_LIBRARY_FRAGMENT() { ... }`), expanded by the graph step."""

    macro: str
    args: tuple[str, ...]  # as written
    line: int
    scope: str
    block: str  # the block's macro
    block_args: tuple[str, ...]


class CppFacts(msgspec.Struct, frozen=True):
    """Everything one C/C++/CUDA file contributes; names as written, resolved by the graph step."""

    defs: tuple[Definition, ...] = ()
    includes: tuple[tuple[str, bool, int], ...] = ()  # (target as written, angle brackets?, line)
    calls: CallSites = ()  # by caller's qual: (callee as written, line)
    launches: CallSites = ()  # by caller's qual: (kernel as written, line)
    torch_ops: tuple[TorchOpFact, ...] = ()
    pybind: tuple[PybindFact, ...] = ()
    defines: tuple[str, ...] = ()  # attribute-like macros the file defines (blanked in its includers)
    # macros the file defines that open or close namespaces, and what each does
    # (extractor.cpp.parse.namespace_macros: rewritten in its includers too)
    namespace_macros: tuple[tuple[str, str], ...] = ()
    namespace_aliases: tuple[NamespaceAlias, ...] = ()
    usings: tuple[Using, ...] = ()  # using-directives and using-declarations outside classes
    macro_blocks: tuple[tuple[str, int], ...] = ()  # (macro, line): macros whose bodies hold definitions
    # (macro, line) of `MACRO(a, b) { ... }` read as a function MACRO (no return type, parameters
    # without names) that testmacros.yaml does not expand: recorded as written, and said
    macro_bodies: tuple[tuple[str, int], ...] = ()
    # (macro, line) of test bodies whose framework names them by a counter (Catch2's, doctest's
    # TEST_CASE): no definition is recorded for them
    unnamed_tests: tuple[tuple[str, int], ...] = ()
    # (macro, line) of `DISALLOW_COPY_AND_ASSIGN(X);` in a class body: read as a member declared
    # without a return type whose name is written as macros are; no definition is recorded for them
    class_macro_uses: tuple[tuple[str, int], ...] = ()
    # (macro, line) of such a use with a body, `MACRO(X) { ... }`: recorded as a member of that name
    class_macro_bodies: tuple[tuple[str, int], ...] = ()
    fields: tuple[Field, ...] = ()  # data members of the classes it defines
    locals: tuple[Local, ...] = ()  # variables of function bodies that are objects of member calls
    globals: tuple[Global, ...] = ()  # variables of namespaces whose type may be a class of the system
    type_aliases: tuple[TypeAlias, ...] = ()  # outside function bodies
    truncated: bool = False  # nesting too deep to walk: the rest of the file is not indexed
    errors: int = 0  # ERROR nodes in the tree
    error_lines: tuple[int, ...] = ()  # the first few of their lines
    # crc32 of each word the file uses outside preprocessor lines, little-endian uint32s, sorted
    # (:func:`extractor.cpp.parse.word_hashes`): the graph step reads it to find, without reading the file
    # again, whether the file uses a macro one of its includes defines
    words: bytes = b""
    registration_macros: tuple[RegistrationMacro, ...] = ()  # macros whose bodies register torch operators
    macro_uses: tuple[MacroUse, ...] = ()  # calls of macros in registration blocks
    # function-like macros whose bodies declare class members (an access label in the body: `#define
    # PROPERTY(T, name) public: const T& name() const { return name##_; } ... T name##_`): written out
    # where a class body uses them, in the graph step's second scan (extractor.cpp.includes)
    member_macros: tuple[MacroDefinition, ...] = ()
    # kernels handed to the system's own launchers (extractor.cpp.handoffs): (function, parameter) a body
    # hands to a launcher's kernel position; (function, parameter, callee as written, argument, line) a
    # parameter that may hold a function handed on; (function, callee as written, argument, kernel, line)
    launcher_params: tuple[tuple[str, int], ...] = ()
    forwards: tuple[tuple[str, int, str, int, int], ...] = ()
    kernel_args: tuple[tuple[str, str, int, str, int], ...] = ()
    # function-like macros that launch the kernel they are handed (scan.launcher_macros), name -> the position of
    # that argument: a use launches it, in this file and, after the graph step's second scan, in its includers
    launcher_macros: tuple[tuple[str, int], ...] = ()
    # object-like macros defined as attributes but for other macros' names (parse.attribute_aliases): attribute
    # macros of the system when it defines each of those names as one (includes.system_attribute_aliases)
    attribute_aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # macros that name a type by pasting their parameter (parse.type_macros: `STACK_OF(type)`), with the pieces
    # before and after it: written out in the file and, after the graph step's second scan, in its includers
    type_macros: tuple[tuple[str, str, str], ...] = ()
    # object-like macros that open a lambda (parse.lambda_macros: folly's `SCOPE_EXIT`), whose uses `NAME {` are
    # written as the lambda in the file and, after the graph step's second scan, in its includers
    lambda_macros: tuple[str, ...] = ()
    # function-like macros that assign one argument the value of another (parse.assign_macros: Arrow's
    # `ARROW_ASSIGN_OR_RAISE(lhs, rexpr)`): (name, parameters, the assigned one's position, the value's);
    # written as the assignment in the file and, after the graph step's second scan, in its includers
    assign_macros: tuple[tuple[str, int, int, int], ...] = ()
