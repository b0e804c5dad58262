"""C, C++ and CUDA: tree-sitter parsing and the symbol graph of that half of a system.

Entry points: :data:`STEP` for the pipeline; :func:`scan_cpp` (per file, in workers) and
:func:`extract_cpp_graph` (per system). Only :mod:`extractor.cpp.parse` imports tree_sitter.
"""

from extractor.cpp.graph import AggregateDefinition, build_cpp_graph, extract_cpp_graph
from extractor.cpp.ops import OpRegistration, PyBinding
from extractor.cpp.kernelyaml import scan_kernel_yaml
from extractor.cpp.scan import scan_cpp
from extractor.cpp.swig import scan_swig
from extractor.cpp.symbols import DefinitionSite
from extractor.model import Language, Step

# version 2: definition records carry params/returns, access and linkage tags, anonymous namespaces;
# version 3: `uses` edges from callables to the structs their signatures name;
# version 4: the facts carry the hashes of the words a file uses (CppFacts.words);
# version 5: namespace macros (CppFacts.namespace_macros) written out before parsing;
# version 6: torch operators registered through PyTorch's stable ABI;
# version 7: nanobind registrations (NB_MODULE blocks, functions given an `nb::module_&`);
# version 8: pybind11's classes and submodules held in variables, read as nanobind's are;
# version 9: namespace aliases (CppFacts.namespace_aliases);
# version 10: using-directives and using-declarations (CppFacts.usings);
# version 11: nanobind targets as written (namespace aliases are the symbol table's);
# version 12: Ascend C's qualifiers blanked (`__aicore__`, `__gm__`, ...);
# version 13: an operator named with its namespace (`m.impl("ns::op", ...)`) is registered under it;
# version 14: function-like macros that expand to a static_assert blanked with their arguments (CppFacts.defines
# lists them as `NAME(`);
# version 15: condition macros after `if` parenthesized (Ascend C's `if ASCEND_IS_AIV {`), Catlass's
# attribute macros blanked, `operator()<...>(` read without its template arguments;
# version 16: test macros expanded (extractor/cpp/testmacros.py), CppFacts.macro_bodies and .unnamed_tests,
# Boost.Test suites read as the namespaces they open; macros' uses in class bodies
# (`DISALLOW_COPY_AND_ASSIGN(X);`) are no members (CppFacts.class_macro_uses, .class_macro_bodies);
# version 17: functions declared or defined inside `extern "C"` tagged (CppShared.c_linkage);
# version 18: TVM FFI global functions (`TVM_REGISTER_GLOBAL("x").set_body_typed(fn)`,
# `refl::GlobalDef().def("x", fn)`) among the bindings (mechanism "tvm-ffi"); a
# `TVM_FFI_STATIC_INIT_BLOCK() {...}` is a registration block, no function
# version 19: the declared types of member calls' objects: classes' data members (CppFacts.fields), the
# variables of bodies that member calls are made on (CppFacts.locals), type aliases (CppFacts.type_aliases),
# the template parameters in scope of each definition (Definition.template_params); a callee's `.`/`->`
# is its own operator's (`a->b.m` was written `a->b->m`)
# version 20: Paddle custom operators (`PD_BUILD_OP(name).SetKernelFn(PD_KERNEL(fn))`) among the bindings
# (mechanism "paddle-op")
# version 21: a torch operator's schema or name given through a wrapper (`TORCH_SELECTIVE_SCHEMA("...")`,
# `TORCH_SELECTIVE_NAME("...")`, `torch::schema("...", alias)`); a block macro of the system's own whose body
# is a torch library's (`IPEX_TORCH_LIBRARY_FRAGMENT(ns, m) { m.impl(...); }`) read as one, no function
# version 23: `NAME() { ... }` with a macro's name and no argument is a macro's use (CppFacts.macro_bodies)
# version 24: macros whose bodies register torch operators or open a torch library block
# (CppFacts.registration_macros) and the macro calls of registration blocks (CppFacts.macro_uses)
# version 25 (with versions 20-23 of a branch beside 20-24): a range-for's `auto` variable keeps what it
# ranges over (Local.init, Local.element); a catch clause's parameter is a body's variable; an `auto`
# variable initialized from a subscript keeps it; the variable a member call's object dereferences
# (`(*state)->Stub()`) is read; namespaces' variables whose type may be a class (CppFacts.globals)
# version 26 (a third branch's 20): a file's macros that define one function named by pasting their
# parameters, expanded at each use at namespace level (Definition tag `macro-expanded`)
# version 27: function-like macros whose bodies declare class members (CppFacts.member_macros), written out
# where a class body uses them (`PROPERTY(std::string, model_path);`), tagged `macro-expanded`; a `/* */`
# comment on a directive's continued line is blanked before parsing (it ended the macro's body there)
# version 28: a pybind11 helper's class named by its parameters (`py::class_<Config> cls(m, name)`, PybindFact
# placeholders) and the arguments of each call that hands it a module (PybindFact.args, .template_args)
# version 29 (a branch's 28 beside it): a defining macro's function may be `extern` or `extern "C"` (candle's
# `extern "C" __global__ void FN_NAME(...)` kernels)
# version 30 (another branch's 29): a namespace block one `#if` group opens and a later group of the same
# condition closes is read as one block (parse.join_conditional_blocks)
# version 31: functions a library exports to TVM FFI by a name of its own (`TVM_FFI_DLL_EXPORT_TYPED_FUNC(run,
# fn)`), PybindFact mechanism "tvm-ffi-export"
# version 32: a file's function-like macros that expand to nothing or to attributes (`#define LB(n)
# __launch_bounds__(n)`) are blanked with their arguments before parsing, as its object-like ones are
# version 33: a use `MACRO(name, ...) { body }` of a file's macro whose body is a function's head defines that
# function (Definition tag `macro-expanded`), its body the use's
# version 34: a launch through a local that holds a kernel (`auto kernel = &k<T>; kernel<<<...>>>(...)`) launches it
# version 35 (a branch's 31-32 beside 31-34): a function-like macro that wraps a declaration in attributes
# (`GGML_DEPRECATED(decl, hint)`) is unwrapped, one that expands to attributes or nothing blanked with its
# arguments, over continued lines and through each other (CppFacts.defines lists them as `NAME(decl)` and
# `NAME(`); `_Noreturn`, `constexpr`, `noexcept` and calling conventions are attribute words; a string
# literal a macro continues (`"%" PRIu64`) is no parse error; `__has_include(<x>)` reads
# version 36 (a third branch's 31-33 beside them): operators registered with TorchScript's registry object
# (`torch::RegisterOperators("ns::op", &fn)`, `.op(...)` links; registrations.registry_op_registrations);
# TVM FFI object types (type keys declared in class bodies, blanked before parsing; static methods of their
# ObjectDef registries: registrations.tvm_ffi_object_registrations); stl_bind's classes (`py::bind_map<M>(m,
# "Name")`, `bind_vector`) in pybind11 and nanobind blocks
# version 37 (a branch's): a function qualified by a macro of macros.yaml's kernel_qualifier (CUTLASS_GLOBAL) is a
# kernel; a local holding a kernel whose template arguments hold parentheses (`&k<decltype(p)>;`) launches it
# version 38 (a branch's): SWIG interface files (`.i`, `.swig`: extractor.cpp.swig), the modules they make among the
# bindings
# version 39 (a branch's): CuTe's CUTE_ALIGNAS(n) blanked with its argument
# version 40 (a branch's): launches in macros defined inside a body, or object-like (`#define RUN do { k<<<g, b>>>();
# } while (0)`)
# version 41 (beside 37-40): a C/C++ file that launches kernels (`k<<<grid, block>>>(...)` in a `.h` or `.hpp`) read
# with the CUDA grammar (parse.grammar_language); a class, struct, union or enum that shares its name with a
# function is its own node, with its elaborated name (`cpp:struct stat`), not merged into the function's
# (symbols.SymbolTable.hidden_types)
# version 42 (a third branch's 37-40 beside them): a module parameter by rvalue reference (`py::module &&m`) and a
# submodule handed on the spot (`init_ir(m.def_submodule("ir"))`); a binding lambda's calls on its parameters of a
# named class (`self.create<Op>()` -> `Builder::create`); operator kernels that YAML files register (ExecuTorch's
# functions.yaml: extractor.cpp.kernelyaml); the macro calls of pybind11 blocks and of functions given the module
# (CppFacts.macro_uses, block PYBIND_BLOCK)
# version 43: the parse that recovers an error region around conditionals may keep only each conditional's first
# branch there: when that leaves fewer errors and blocks never closed than keeping both (scan._without_conditionals);
# a node defined in the system and again in a test lives at the system's definition (symbols._in_tests)
# version 44 (a branch's 43 beside it): a launch through a local declared with a named type (`fp_kernel kernel =
# ...`) and one holding what a function of the file returns when each return names a kernel (`kernel =
# pick_kernel(...)`: scan._picked_kernels)
# version 45 (a branch's 43 and 44 beside them): the methods SWIG %extend blocks write and the members they call
# through $self (extractor.cpp.swig); Abseil's and gflags' flag macros at namespace scope blanked with their
# arguments (macros.yaml)
# version 46 (a branch's 43-48 beside 43-45): a conditional group that continues an if-else chain (`#ifdef BF16` /
# `else if (...) {...}` / `#endif`) joined, and the second of two branches that open the same blocks (`if (bf16) {` /
# `#else` / `if (false) {`) blanked before parsing (parse.join_conditional_blocks,
# parse.keep_first_of_opening_branches); TorchScript custom classes among the bindings (extractor.cpp.torchclasses);
# a launch through a function pointer the body declares (scan._pointer_kernels), none from `nullptr`; TensorFlow
# ops' kernel registrations (extractor.cpp.tfops); a host launcher called in a macro's body launches its kernel from
# where the macro is used (scan.macro_launcher_kernels)
# version 47: a macro whose body declares a virtual function or an override is a member macro (scan._MEMBER_MACRO),
# written out where a class body uses it
# version 48: Metal files and headers read as C++ with their address spaces and function qualifiers blanked, a
# `kernel` function a kernel (parse.blank_metal_qualifiers); a parameter's attributes no part of its type
# version 49: kernels handed to the system's own launchers (extractor.cpp.handoffs: CppFacts.launcher_params,
# forwards, kernel_args; graph._system_launchers)
# version 50 (a branch's 47 beside 47-49): the second of two branches that open the same parentheses and no block (a
# declarator written with and without `__launch_bounds__(...)`) blanked before parsing too
# (parse.keep_first_of_opening_branches)
# version 51 (another branch's 47-49 beside 47-50): CUDA's `__cluster_dims__(...)` and `__maxnreg__(n)` blanked as
# attributes, a conditional group left empty by the blanking has its directives blanked (parse.join_conditional_blocks);
# launcher macros (`#define LAUNCH_KERNEL(cfg, kernel, ...) cudaLaunchKernelEx(cfg, kernel, ...)`,
# CppFacts.launcher_macros): a use launches the kernel it is handed, in the file and in its includers' second scan;
# an extended lambda's execution space (`[=] __device__ (...) {`) blanked before parsing (parse.blank_lambda_qualifiers)
# version 52 (a third branch's 47 beside 47-51): Abseil's and TensorFlow's thread-safety annotations and attributes
# blanked (macros.yaml); 53: tree-sitter captures in document order (native.grammar.in_document_order): a file's
# facts the same bytes from one parse to the next
# version 54: a keyword a header defines for old compilers (zlib's `#define const`) is no attribute macro
# (parse.KEYWORDS); the variants that recover an error region are parsed with the macros of the includes blanked
# that the file's second scan blanks
# version 55: a macro defined as nothing in one branch and as an inline namespace (or its end) in another is a
# namespace macro (Abseil's ABSL_NAMESPACE_BEGIN and _END); an object-like attribute macro's body is read over its
# continued lines; 57: uses of accessor macros written out that leave more ERROR nodes than the file read without
# them are not taken (includes._rescanned); 58: `const` and `volatile` are attribute words (zlib's z_const)
# version 59: far/near/huge pointer qualifiers are attribute words (zlib's FAR); macros defined as another header's
# attribute macro (CppFacts.attribute_aliases: c-ares' CARES_EXTERN) are blanked in the second scan; 60: the
# `extern` of `extern template ...;` blanked before parsing (parse.drop_extern_of_templates); 61: a file others
# include sees, in its second scan, the macros every one of its includers sees (includes.seen_by_every_includer);
# 62: macros that give C linkage (`extern "C" {`, `extern "C"`) are namespace macros written out as it
# version 63: macros that name a type by pasting their parameter (`STACK_OF(type)`, CppFacts.type_macros) written
# as the type they paste, in the file and in its includers' second scan (parse.write_type_macros); 64: no keyword
# is one (dmlc-core's `noexcept(a)`); 65: `R (*f)(args);` declares a pointer to a function (a variable or a data
# member), no function; `int (f)(int)` names f; 66: macros that open a lambda (folly's `SCOPE_EXIT`,
# CppFacts.lambda_macros) written as the lambda, in the file and in its includers' second scan; 67: Clang's
# nullability qualifiers (`_Nullable`) blanked, and so a macro for one (folly's FOLLY_NULLABLE) is an attribute;
# 68: a macro body's `alignas(n)` is an attribute (RocksDB's `ALIGN_AS(n)` before a class's name); 69: of two
# branches that each begin a constructor's member initializers, the first is read; 70: a raw string literal
# that a macro continues (MXNet's `R"code(...)code" ADD_FILELINE`) is no parse error, as a literal is; 71: a
# static assertion macro whose body begins on the line after its `#define` is one (MXNet's cuDNN version checks);
# 72: macros that assign an argument the value of another (Arrow's `ARROW_ASSIGN_OR_RAISE(lhs, rexpr)`,
# CppFacts.assign_macros) written as the assignment, in the file and in its includers' second scan; 73: a raw
# string literal in such a use's arguments is read whole; 74: `T (max)()`, T a typedef's name, is the function max;
# 75: attribute aliases through uses of other macros (jemalloc's `JEMALLOC_ATTR(always_inline) static inline`) and
# function-like ones (DuckDB's `DUCKDB_GUARDED_BY(x)`), listed as `NAME(`; `_Restrict` is an attribute word;
# 76: an unknown macro before a function's name, which the grammar joins to it by a `::` it invents, is dropped;
# 77: and where the macro is taken for the return type (`ZSTDLIB_API ZSTD_bounds f()`), the type is the word joined;
# 78: the `*` of an unnamed parameter with a default (`uint64_t* = nullptr`) is no parse error; 79: code no
# configuration compiles (`#if 0`, an `#if 1`'s other branches) is not read (parse.blank_disabled_groups); 80: a
# macro's word before a declaration's keyword on its line is blanked there (parse.blank_specifier_macros); 81: and
# before a type and a function's name; a macro's parameters may be continued lines; a macro whose body uses a member
# macro is one, and one whose body declares a struct named by pasting; a use in a directive is not written out;
# a digit separator (`100'000`) begins no character literal in a macro's arguments; 82: folly's attribute macros in
# macros.yaml, a specifier macro before a type whose function's name is on the next line, and exception
# specifications (`throw()`, `noexcept(x)`) and virt-specifiers (`override`, `final`) are attribute words; 83:
# conversion functions (`operator float() const`) are functions, named as written (`operator const char*`); 84: a
# specifier macro before `T *` and a function's name on the next line (C's layout) is blanked; 85: a macro's use as
# a template's whole parameter is read as `class=void` (parse.write_parameter_macros); 86: an attribute macro's use
# between a declarator and its body defines no function of its name (Clang's `void lock() ACQUIRE() {`), and a
# macro defined as another attribute macro's use is one (`#define NO_THREAD_SAFETY_ANALYSIS ANNOTATE__(...)`);
# 87: a string literal in an `#if` condition is read as one identifier (Hedley's `HAS_WARNING("-Wx")`); 88: a
# declaration wrapper an include defines (`NAME(decl)`) is unwrapped in its includers' second scan; 89: macros
# that are a template's header, an access specifier, `try` or `catch` are written as such (CppFacts.defines lists
# them as `NAME(template)`, `NAME(private)`, `NAME(try)`, `NAME(catch)`); `explicit` and MSVC's SAL annotations
# are attribute words; a lone `#if` group in the middle of a declaration or an expression is read through; two
# branches that each write the head of the body after them are read with the first; a class the grammar closed
# early and read as a function's return type keeps its members; 90: googletest's mock macros (`MOCK_METHOD`,
# `MOCK_METHODn`, `MOCK_CONST_METHODn`) are written as the methods they declare (parse.write_mock_methods),
# tagged `macro-expanded`; 91: POWER's and IBM Z's vector types (`vector float`, `__vector signed short`) are read
# as one type name, their blanks underscores (parse.write_vector_types); 92: two branches that are pieces of one
# declaration or expression, in the middle of one, are read with the first; an `#if` continued over lines too;
# 93: headers whose names have no suffix (Eigen's `Eigen/Core`) are read, found by their first lines; 94: the class
# of a pointer to member in a member's or a typedef's declarator (`void (Widget::*cb)(int);`) is no parse error;
# 95: a header's name as a macro's whole argument in an `#if` (`FMT_HAS_INCLUDE(<fcntl.h>)`) is read as one name
STEP = Step(name="cpp", scanners={Language.CPP: scan_cpp, Language.CUDA: scan_cpp, Language.SWIG: scan_swig,
                                  Language.YAML: scan_kernel_yaml},
            extract=extract_cpp_graph, version="95", forkable=True)

__all__ = ["STEP", "AggregateDefinition", "DefinitionSite", "OpRegistration", "PyBinding", "build_cpp_graph",
           "extract_cpp_graph", "scan_cpp"]
