"""Per-file facts of a C/C++/CUDA file: definitions, includes, calls, launches, registrations.

The scanner walks only the declaration levels of the tree (translation unit, namespaces, class
bodies, linkage blocks, preprocessor branches, ERROR regions) in Python and finds call sites in the
one tree-sitter query the file's scanners share (:func:`extractor.cpp.parse.file_nodes`), so it
stays within a small factor of the parse itself. Code under both branches of an ``#if`` is
visited: tree-sitter keeps both in the tree, and each branch's definition is a record of its own.
The facts (:class:`extractor.cpp.facts.CppFacts`, whose records say what each field holds) do not
depend on the file's path (they are cached by content hash); names are as written in the file,
and the graph step resolves them across files.
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from extractor.cpp.facts import (HELPER_MODULE, PARAMETER, PYBIND_BLOCK, CallSites, CppFacts, Definition, Field,
                                 Global, Local, MacroUse, NamespaceAlias, Param, PybindFact, RegistrationMacro, Scope,
                                 TorchOpFact, TypeAlias, Using)
from extractor.cpp.handles import load_handles, unwrap
from extractor.native.calls import each_call, group_calls
from extractor.native.comments import leading_comment
from extractor.native.macros import MacroDefinition
from extractor.cpp.names import (CALLEE_TYPES, MACRO_NAME, SPACES, callee_text, clean_name, line, split_args,
                                 split_top_level, text)
from extractor.cpp.parse import (ALIAS_PREFIX, CONTINUATION, WORD_RUN, assign_macros, attribute_aliases,
                                 attribute_macros, blank_disabled_groups, blank_span,
                                 file_namespace_macros, file_nodes, grammar_language, is_metal, lambda_macros,
                                 macro_config, mock_lines, namespace_macros, parse_source, rewrite_namespace_macros,
                                 type_macros, word_hashes)
from extractor.cpp import tfops, torchclasses
from extractor.cpp.handoffs import body_handoffs, launch_field_offsets, may_hold_function
from extractor.cpp.registrations import (PYBIND11, BindingLibrary, PaddleOpNames, block_macro_uses, nanobind_in,
                                         paddle_op_registrations, pybind_registrations, registry_op_registrations,
                                         torch_registrations,
                                         TvmFfiNames, TvmFfiObjectNames, tvm_ffi_object_registrations,
                                         tvm_ffi_registrations)
from extractor.cpp.signature import (conversion_cast, declared_variable, invented_scope, normalise_type, parameters,
                                     parenthesized_name, return_type)
from extractor.cpp.testmacros import ExpandedTest, expand_test, load_test_macros
from extractor.model import Language, ParsedFile
from extractor.support.datafile import load_data_file
from extractor.support.linestart import at_line_starts, matches_at_line_starts

ANONYMOUS_NAMESPACE = "(anonymous namespace)"
# The tag of a function declared or defined inside `extern "C"` (a block or a single declaration):
# its symbol is its plain name, which ctypes and dlsym look up. Kept off the node's tags (the graph
# step hands the set of such nodes to the binding step instead).
C_LINKAGE = "c-linkage"
MACRO_EXPANDED = "macro-expanded"  # a definition a macro's use makes, read from the use's expansion
# where a macro's use defines nothing at namespace level: a body, a class, an initializer, a macro
# `#define NAME(params) body`, continuation lines included: (name, params, body); found at line starts
# (extractor.support.linestart: the engine tries a pattern that begins `^[ \t]*#` at every byte)
_NEWLINE = re.compile(rb"\n")
# (its parameters too may be continued: clang-format writes `#define NAME(   \` / `    a, b, c)   \`)
_FUNCTION_MACRO = re.compile(rb"#[ \t]*define[ \t]+(\w+)\(((?:[^)\n\\]|\\\r?\n)*)\)((?:[^\n\\]|\\\r?\n|\\.)*)")


def macro_params(define: re.Match[bytes]) -> tuple[str, ...]:
    """The parameters of a ``_FUNCTION_MACRO`` match, as written, their continued lines joined."""
    return tuple(p.strip() for p in CONTINUATION.sub(b" ", define.group(2)).decode(errors="replace").split(","))


# the words before a macro's use that its expansion keeps (any other is an attribute macro, not expanded)
_SPECIFIERS = frozenset({b"static", b"inline", b"extern", b"constexpr", b"__global__", b"__device__", b"__host__",
                         b"__forceinline__"})
_NOT_DECLARATION_LEVEL = frozenset({
    "compound_statement", "field_declaration_list", "preproc_function_def", "preproc_def", "comment",
    "string_literal", "raw_string_literal", "enumerator_list", "initializer_list", "template_argument_list"})
_CONTAINERS = frozenset({
    "translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else",
    "preproc_elif", "preproc_elifdef", "ERROR"})
_USING_TARGETS = frozenset({"identifier", "namespace_identifier", "qualified_identifier", "type_identifier"})
_TYPE_KINDS = {"class_specifier": "class", "struct_specifier": "struct",
               "union_specifier": "union", "enum_specifier": "enum"}
_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "attributed_declarator",
    "parenthesized_declarator", "pointer_type_declarator", "reference_type_declarator"})
# `__global__`, `__device__`, `__host__`, and the macros of macros.yaml's kernel_qualifier that
# expand to `__global__` (CUTLASS's CUTLASS_GLOBAL: DeepGEMM writes every kernel so): blanked
# before parsing, read from the bytes
_CUDA_QUALIFIER = re.compile(rb"\b(?:__(global|device|host)__" + b"".join(
    b"|" + re.escape(m.encode()) for m in macro_config()["kernel_qualifier"]) + rb")\b")
_METAL_KERNEL = re.compile(rb"(?<![\w:.])kernel(?=[ \t\r\n]+[A-Za-z_:])|\[\[\s*kernel\s*\]\]")
_MAX_ERROR_LINES = 20
# a pybind11 module parameter, spaces removed: `py::module& m`, `pybind11::module_ &m`, `const py::module_& m`,
# and by rvalue reference, given a temporary (Triton's `void init_triton_ir(py::module &&m)`, called
# `init_triton_ir(m.def_submodule("ir"))`)
_PYBIND_MODULE_TYPE = re.compile(r"(?:const)?(?:py|pybind11)::module_?&{0,2}")
# a nanobind one: `nb::module_& m`, `nanobind::module_ &m` (the namespace as the file writes it)
_NANOBIND_MODULE_TYPE = re.compile(r"(?:const)?(\w+)::module_&{0,2}")
_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")  # a macro, as the code spells one
_WORD = re.compile(r"\w+")
_CONDITIONAL_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*", re.M)
# any `#define NAME body` or `#define NAME(params) body`, continuation lines included: (name, body); found at
# line starts, as _FUNCTION_MACRO is
_ANY_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)(?:\([^)\n]*\))?((?:[^\n\\]|\\\r?\n|\\.)*)")
_DEFINE_OR_UNDEF = re.compile(rb"#[ \t]*(?:define|undef)[ \t]+(\w+)")
# `kernel<<<` (`ns::kernel<T, 4> <<<`); it starts where a word does: one that starts inside a word starts
# where the word does too, earlier, and the leftmost match is taken (the engine passes over the rest fast)
_MACRO_LAUNCH = re.compile(rb"(?<!\w)((?:\w+::)*\w+)\s*(?:<[^;{}]*?>)?\s*<<<")
# a function or class body inside a macro: `) {` or `struct X {` (not a do { } while (0) block)
_NOT_A_NAME = rb"(?!(?:else|if|while|for|switch|return|do|case|constexpr|sizeof)\b)"
_MACRO_DEFINITION = re.compile(
    rb"^\s*(?:template\s*<[^{;]*>\s*)?(?:(?:class|struct)\s+\w+[^;{]*\{"
    rb"|(?:(?:static|inline|extern(?:\s*\"C\")?|__\w+__)\s+)*" + _NOT_A_NAME + rb"[\w:<>]+[\s*&]+" + _NOT_A_NAME
    + rb"(?P<name>[\w#]+)\s*\([^;{]*\)\s*(?:const\s*)?\{)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# a macro's body that is a function's head without its body: what a use followed by a body defines
# (flash-attention's `#define DEFINE_FLASH_FORWARD_KERNEL(kernelName, ...) template<typename
# Kernel_traits, __VA_ARGS__> __global__ void kernelName(const Flash_fwd_params params)`)
_MACRO_HEAD = re.compile(
    rb"\s*(?:template\s*<[^{;]*>\s*)?(?:(?:static|inline|extern(?:\s*\"C\")?|__\w+__)\s+)*" + _NOT_A_NAME
    + rb"[\w:<>]+[\s*&]+" + _NOT_A_NAME + rb"(?P<name>[\w#]+)\s*\([^;{}]*\)\s*(?:const\s*)?")
# a macro's body that declares class members: one with an access label, one made of data members
# named by pasting (`torch::Tensor name##_; bool name##_is_loaded_ = false;`), no call in them, or one
# that declares a virtual function or an override, which only a member is (MLX's primitives:
# `#define DEFINE_GRADS() std::vector<array> jvp(...) override; ...`, used on its own line, no `;`)
_MEMBER_MACRO = re.compile(rb"(?<![\w:])(?:public|protected|private)\s*:(?!:)"
                           rb"|^(?:\s*[\w:<>,*& ]+?[\s*&]\w*\s*##\s*\w+(?:\s*=[^;(]*)?\s*;)+\s*$"
                           rb"|(?<![\w:])virtual\s|\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override|final)\s*[;{]")
# ... or one that begins with a struct named by pasting (Velox's `struct constName##Property { ... };`), whose
# braces close in it
_PASTED_STRUCT = re.compile(rb"\s*(?:struct|class)\s+\w*\s*##\s*\w+\s*\{")


def _declares_members(body: bytes) -> bool:
    """Whether a macro's body (continued lines joined, comments dropped) declares class members."""
    return _MEMBER_MACRO.search(body) is not None or (
        _PASTED_STRUCT.match(body) is not None and body.count(b"{") == body.count(b"}"))


# a call written in a macro body: `f(`, `ns::f(`, `f<T, 8>(`; not `x.f(` or `p->f(` (a member of
# something the macro cannot type)
_MACRO_CALL = re.compile(rb"(?<![\w.>])((?:\w+::)*\w+)\s*(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>)?\s*\(")
_NOT_CALLED = frozenset({
    "if", "for", "while", "switch", "return", "sizeof", "case", "do", "else", "decltype", "alignof", "defined",
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "static_assert", "typeid", "noexcept",
    "throw", "new", "delete", "catch", "__VA_ARGS__", "__VA_OPT__"})
# words that may stand before a call: anything else followed by `name(` declares a variable (`dim3 grid(n)`)
_BEFORE_A_CALL = frozenset({b"return", b"else", b"do", b"case", b"co_return", b"throw"})
_DEFAULT_ACCESS = {"class": "private", "struct": "public", "union": "public"}
# a field of these types is no object whose methods the system defines (`int`, `unsigned long`, an enum)
_NOT_CLASS_TYPES = frozenset({"primitive_type", "sized_type_specifier", "enum_specifier"})
# `namespace tr = tensorrt_llm::runtime;`: how a namespace alias starts, found in function bodies by a
# search of the file's bytes (the walk meets those at declaration level). No `\b` before it: that
# costs the search its literal prefix, 13 times the time (lmdeploy's 3.8 MB of C++: 40 ms, 3 ms)
_ALIAS_START = re.compile(rb"namespace\s+\w+\s*=")
# `using namespace vllm;` and `using engine::compute;` in function bodies, found the same way; not
# `using T = ...;` (a type alias, another node)
_USING_START = re.compile(rb"using\s+(?:namespace\s|[\w:\s]+;)")
# the variable a member call is made on, when the callee starts with one: `m` of `m->Init`, `m.get().Run`
_OBJECT_HEAD = re.compile(r"\(?\*?([A-Za-z_]\w*)\)?(?:\.|->|\[)")  # `m` of `m->Init`, `v[i].x`, `(*p)->x`
_INIT_HEAD = re.compile(r"([A-Za-z_]\w*)(?:\.|->|\[|$)")  # `entry` of `entry.second`, `it->second`, `v[i]`, `x`
_MAX_INIT_DEPTH = 4  # as extractor.cpp.members follows `auto` variables initialized from `auto` variables
# a template's call as written, spaces removed: `std::make_unique<ns::Model>`, `static_cast<Model*>`
_TEMPLATE_CALL = re.compile(r"((?:::)?[A-Za-z_][\w:]*)<(.+)>")
_CASTS = frozenset({"static_cast", "dynamic_cast", "reinterpret_cast", "const_cast"})
# an `auto` variable's initializers whose type the graph step may read (extractor.cpp.members)
_INITIALIZERS = frozenset({"call_expression", "identifier", "field_expression", "qualified_identifier",
                           "subscript_expression"})
_MAX_INIT = 160
# template parameters that name types (not `int N`), whose names are type_identifiers
_TYPE_PARAMETERS = frozenset({"type_parameter_declaration", "variadic_type_parameter_declaration",
                              "optional_type_parameter_declaration", "template_template_parameter_declaration"})


def scan_cpp(parsed: ParsedFile, words: bytes | None = None, namespaces: dict[str, str] | None = None,
             launchers: Mapping[str, int] | None = None, blank: Sequence[str] = (),
             types: Mapping[str, tuple[str, str]] | None = None, lambdas: Sequence[str] = (),
             assigns: Mapping[str, tuple[int, int, int]] | None = None) -> CppFacts:
    """Facts of one C/C++/CUDA file (see module docstring); never raises on odd input.
    ``words``: the file's word hashes when a scan of the same bytes already has them;
    ``namespaces``, ``blank``, ``types``, ``lambdas`` and ``assigns``: the namespace, attribute, type-naming,
    lambda-opening and assigning macros its includes define, which its tree was parsed with (:func:`extractor.cpp.parse.parse_source`), and
    so is any variant of it; ``launchers``: the launcher macros its includes define (:func:`launcher_macros`), name ->
    the position of their kernel argument. What is read of the file's text is read as its tree was
    parsed, without the code no configuration compiles (``#if 0``)."""
    enabled = blank_disabled_groups(parsed.data)
    if enabled is not parsed.data:
        parsed = ParsedFile(parsed.language, enabled, parsed.tree)
    scanner = _Scanner(parsed, launchers)
    try:
        scanner.visit_items(parsed.tree.root_node, ())
    except RecursionError:
        # absurd nesting (thousands of namespaces or #if levels): keep what was read, say so
        scanner.truncated = True
    facts = scanner.finish(word_hashes(parsed.data) if words is None else words)
    if scanner.conditional_error_spans and not scanner.truncated:
        # a variant is parsed as the file was
        reparse = functools.partial(parse_source, language=parsed.language, blank=blank, namespaces=namespaces,
                                    types=types, lambdas=lambdas, assigns=assigns)
        facts = _rescan_without_conditionals(parsed, scanner.conditional_error_spans, facts, reparse, launchers)
    mocks = mock_lines(parsed.data)
    if mocks:  # the methods gmock's macros declare (parse.write_mock_methods) say so
        facts = msgspec.structs.replace(facts, defs=tuple(
            msgspec.structs.replace(d, tags=tuple(sorted({*d.tags, MACRO_EXPANDED})))
            if d.line in mocks and d.kind == "function" else d for d in facts.defs))
    macros = file_namespace_macros(parsed.data, namespaces)
    aliases = rewrite_namespace_macros(parsed.data, macros)[1] if macros else {}
    return _unaliased(facts, aliases) if aliases else facts


def scan_source(data: bytes, language: Language) -> CppFacts:
    """Facts of one C/C++/CUDA file read on its own (no include's macros), in the grammar its
    bytes call for (:func:`extractor.cpp.parse.grammar_language`)."""
    language = grammar_language(data, language)
    return scan_cpp(ParsedFile(language, data, parse_source(data, language)))


def _unaliased(facts: CppFacts, aliases: dict[str, str]) -> CppFacts:
    """``facts`` with the namespace aliases a parse wrote for long namespace macros
    (:func:`extractor.cpp.parse.rewrite_namespace_macros`) replaced by the paths they stand for."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, aliases)) + r")\b")

    def replaced(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: aliases[m.group(1)], value) if ALIAS_PREFIX in value else value
        if isinstance(value, (list, tuple)):
            return [replaced(item) for item in value]
        if isinstance(value, dict):
            return {replaced(key): replaced(item) for key, item in value.items()}
        return value

    unaliased = msgspec.convert(replaced(msgspec.to_builtins(facts, builtin_types=(bytes,))), CppFacts,
                                builtin_types=(bytes,))
    paths = {path for path in aliases.values() if "::" in path}
    if not paths:
        return unaliased
    # a path of several namespaces is one scope per namespace, as `namespace a::b {` gives
    defs = []
    for d in unaliased.defs:
        scope: list[tuple[str, str]] = []
        for name, kind in d.scope:
            if name in paths:
                scope.extend((part, kind) for part in name.split("::"))
            else:
                scope.append((name, kind))
        enclosing = d.qual.split("::")[:-1]
        if d.kind == "namespace" and len(scope) < len(enclosing):  # the aliased namespace itself
            scope.extend((part, "namespace") for part in enclosing[len(scope):])
        defs.append(msgspec.structs.replace(d, scope=tuple(scope)) if tuple(scope) != d.scope else d)
    return msgspec.structs.replace(unaliased, defs=tuple(defs))


def _rescan_without_conditionals(parsed: ParsedFile, spans: list[tuple[int, int]], facts: CppFacts,
                                 reparse: Callable[[bytes], Any] | None = None,
                                 launchers: Mapping[str, int] | None = None) -> CppFacts:
    """An `#if` in the middle of an expression (a string concatenation inside `asm(...)`, an
    initializer) can turn the rest of a file into one ERROR region. Parse a variant where the
    conditional directives inside those regions are blanked (both branches kept, as for the rest
    of the file) and take the definitions only it sees, tagged `recovered`.

    Keeping both branches unbalances the braces where each branch opens a block of its own
    (vLLM's `#ifdef PCML` / `while (m < Mrndp) {` / `#else` / `while (m < M) {`), and the variant
    then reads one body running over the functions after it. So a second variant keeps only each
    conditional's first branch there, as universal-ctags reads such a file; the variant with
    fewer errors is taken (both branches when they tie)."""
    alt: CppFacts | None = None
    best = (0, 0)
    both = _without_conditionals(parsed.data, spans, False)
    first = _without_conditionals(parsed.data, spans, True)
    # no conditional with a second branch there: the one variant, scanned once (a tie keeps the first)
    for variant_bytes in (both,) if first == both else (both, first):
        variant = _variant_facts(parsed, variant_bytes, facts.words, reparse, launchers)
        if variant is not None and (alt is None or variant[1] < best):
            alt, best = variant
    if alt is None or alt.errors >= facts.errors:
        return facts
    known = {(d.qual, d.line) for d in facts.defs}
    recovered = [msgspec.structs.replace(d, tags=tuple(sorted(set(d.tags) | {"recovered"})))
                 for d in alt.defs if (d.qual, d.line) not in known]
    # A definition the first parse placed outside scopes the variant finds around it (the same
    # kind at the same line, its name the variant's less outer scopes: vLLM's `allspark::HalfType`
    # found as `HalfType` too, torch's `c10::TensorImpl` as `TensorImpl`) is the variant's: one
    # definition, not two, and the calls made in its body are the variant's definition's.
    by_place: dict[tuple[str, int], list[str]] = {}
    for d in recovered:
        by_place.setdefault((d.kind, d.line), []).append(d.qual)
    superseded: dict[tuple[str, int], str] = {}
    for d in facts.defs:
        longer = [q for q in by_place.get((d.kind, d.line), ()) if q.endswith(f"::{d.qual}")]
        if len(longer) == 1:
            superseded[d.qual, d.line] = longer[0]
    kept = tuple(d for d in facts.defs if (d.qual, d.line) not in superseded)
    # a caller's calls move with it when every definition of its name moved to one other name
    moved: dict[str, set[str]] = {}
    for d in facts.defs:
        moved.setdefault(d.qual, set()).add(superseded.get((d.qual, d.line), ""))
    renamed = {qual: names.pop() for qual, names in moved.items() if len(names) == 1 and "" not in names}

    def calls_of(sites: CallSites, alt_sites: CallSites) -> CallSites:
        return group_calls({(renamed.get(caller, caller), callee, line) for caller, callee, line in each_call(sites)}
                           | set(each_call(alt_sites)))

    local_vars = {msgspec.structs.replace(v, caller=renamed.get(v.caller, v.caller)) for v in facts.locals}
    return msgspec.structs.replace(facts, defs=kept + tuple(recovered), calls=calls_of(facts.calls, alt.calls),
                                   launches=calls_of(facts.launches, alt.launches),
                                   fields=tuple(dict.fromkeys(facts.fields + alt.fields)),
                                   locals=tuple(sorted(local_vars | set(alt.locals), key=_local_order)))



def _without_conditionals(data: bytes, spans: list[tuple[int, int]], first_only: bool) -> bytes:
    """``data`` with the conditional directives inside ``spans`` blanked; with ``first_only``
    also the lines of every `#elif`/`#else` branch there, up to its `#endif` (line breaks kept)."""
    out = bytearray(data)
    for start, end in spans:
        depth = 0
        skip_to: int | None = None  # while blanking a later branch: the depth of its conditional
        skip_from = 0
        for m in _CONDITIONAL_DIRECTIVE.finditer(data, start, end):
            word = m.group().lstrip(b" \t#")
            if word.startswith(b"if"):
                depth += 1
            elif word.startswith(b"el") and first_only and skip_to is None:
                skip_to, skip_from = depth, m.start()
            elif word.startswith(b"endif"):
                if skip_to == depth:
                    out[skip_from:m.start()] = blank_span(bytes(out[skip_from:m.start()]))
                    skip_to = None
                depth -= 1
            out[m.start():m.end()] = b" " * (m.end() - m.start())
        if skip_to is not None:
            out[skip_from:end] = blank_span(bytes(out[skip_from:end]))
    return bytes(out)


def _variant_facts(parsed: ParsedFile, variant: bytes, words: Any, reparse: Callable[[bytes], Any] | None = None,
                   launchers: Mapping[str, int] | None = None) -> tuple[CppFacts, tuple[int, int]] | None:
    """The facts of a variant of ``parsed``'s bytes, parsed as it was (``reparse``: with the same
    macros of its includes blanked and written out, else grpc's zlib read `local block_state
    deflate_fast(...)` as a function `block_statedeflate_fast` returning `local`), and how wrong its
    parse is: (errors, nodes the parser had to invent: a `}` missing at the end is a block never
    closed); None past the recursion limit."""
    tree = (reparse or functools.partial(parse_source, language=parsed.language))(variant)
    other = _Scanner(ParsedFile(parsed.language, variant, tree), launchers)
    try:
        other.visit_items(other.tree.root_node, ())
    except RecursionError:
        return None
    facts = other.finish(words)
    missing = 0
    cursor = tree.walk()
    while cursor.node is not None:  # every node once, in document order
        missing += cursor.node.is_missing
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while cursor.goto_parent() and not cursor.goto_next_sibling():
            pass
        if cursor.node == tree.root_node:
            break
    return facts, (facts.errors, missing)


class _Spans:
    """Whether a byte falls in one of some spans (which may nest or overlap), by bisection into
    their starts: it does when the furthest end the spans starting at or before it reach lies
    past it, as ``any(start <= at < end for start, end in spans)`` would say."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self._starts = [start for start, _ in ordered]
        self._reach = list(itertools.accumulate((end for _, end in ordered), max))

    def __contains__(self, at: int) -> bool:
        i = bisect.bisect_right(self._starts, at) - 1
        return i >= 0 and at < self._reach[i]


class _Scanner:
    def __init__(self, parsed: ParsedFile, launchers: Mapping[str, int] | None = None) -> None:
        self.data = parsed.data
        self.language = parsed.language
        self.metal = is_metal(parsed.data)  # a Metal kernel is qualified `kernel` or `[[kernel]]`
        self.tree = parsed.tree
        # the host launchers of launchers.yaml, the launcher macros the includes define and the file's own
        self.given_launchers = dict(launchers or {})
        # the file's `#define NAME(params) body`s, found once: read for launcher macros here, by finish for
        # expansions and member macros, and for macros that write a function's head
        self.function_macros = list(matches_at_line_starts(_FUNCTION_MACRO, self.data)) \
            if b"define" in self.data else []
        self.own_launchers = launcher_macros(self.function_macros, {**kernel_launchers(), **self.given_launchers})
        self.launchers = {**kernel_launchers(), **self.given_launchers, **self.own_launchers}
        self.launcher_words = tuple(n.encode() for n in (*self.given_launchers, *self.own_launchers))
        cfg = macro_config()
        self.library_macros = frozenset(cfg["torch_library"])
        self.impl_macros = frozenset(cfg["torch_library_impl"])
        self.pybind_macros = frozenset(cfg["pybind_module"])
        self.nanobind_macros = frozenset(cfg["nanobind_module"])
        self.tvm_ffi = TvmFfiNames(frozenset(cfg["tvm_ffi_global"]), frozenset(cfg["tvm_ffi_body"]),
                                   frozenset(cfg["tvm_ffi_global_def"]), frozenset(cfg["tvm_ffi_def"]),
                                   frozenset(cfg["tvm_ffi_export"]))
        self.tvm_ffi_blocks = frozenset(cfg["tvm_ffi_init_block"])
        self.tvm_ffi_objects = TvmFfiObjectNames(frozenset(cfg["tvm_ffi_object_info"]),
                                                 frozenset(cfg["tvm_ffi_object_def"]),
                                                 frozenset(cfg["tvm_ffi_object_static"]),
                                                 frozenset(cfg["tvm_ffi_object_link"]))
        self.op_name_wrappers = frozenset(cfg["torch_op_name_wrapper"])
        self.op_registries = frozenset(cfg["torch_op_registry"])
        self.op_registry_links = frozenset(cfg["torch_op_registry_op"])
        self.paddle_ops = PaddleOpNames(frozenset(cfg["paddle_op"]), frozenset(cfg["paddle_op_kernel_setter"]),
                                        frozenset(cfg["paddle_op_kernel"]), cfg["paddle_op_module"][0])
        self.test_macros = load_test_macros()
        self._nanobind: BindingLibrary | None = None
        self.defs: list[Definition] = []
        self.includes: list[tuple[str, bool, int]] = []
        self.bodies: list[tuple[int, int, str]] = []  # (start_byte, end_byte, qualified caller)
        self.torch_ops: list[TorchOpFact] = []
        self.pybind: list[PybindFact] = []
        self.macro_blocks: list[tuple[str, int]] = []
        self.macro_bodies: list[tuple[str, int]] = []
        self.unnamed_tests: list[tuple[str, int]] = []
        self.class_macro_uses: list[tuple[str, int]] = []
        self.class_macro_bodies: list[tuple[str, int]] = []
        self.namespace_aliases: list[NamespaceAlias] = []
        self.usings: list[Using] = []
        self.macro_launches: dict[str, list[str]] = {}
        self.macro_calls: dict[str, list[str]] = {}  # function-like macro -> the names its body calls
        self.registration_macros: list[RegistrationMacro] = []
        self.member_macros: list[MacroDefinition] = []
        # kernels handed to the system's own launchers (extractor.cpp.handoffs)
        self.launcher_params: list[tuple[str, int]] = []
        self.forwards: list[tuple[str, int, str, int, int]] = []
        self.kernel_args: list[tuple[str, str, int, str, int]] = []
        self._head_macros: dict[str, tuple[tuple[str, ...], bytes]] | None = None  # read when first asked
        self.macro_uses: list[MacroUse] = []
        self.namespace_scopes: dict[int, Scope] = {}  # a namespace_definition's start byte -> its scope
        self._attribute_macros: frozenset[str] | None = None
        self._newlines: list[int] | None = None  # where the file's newlines are (line_at)
        self.seen_types: set[int] = set()
        self.truncated = False
        self.conditional_error_spans: list[tuple[int, int]] = []
        self.c_linkage = 0  # depth of `extern "C"` blocks around the current declaration
        self.template_names: list[tuple[str, ...]] = []  # the type parameters of each template around
        self.fields: list[Field] = []
        self.type_aliases: list[TypeAlias] = []
        self.globals: list[Global] = []
        self.handles = load_handles()
        # the parameters of the function definitions visited, by their span (read again by body_params)
        self.function_params: dict[tuple[int, int], tuple[Param, ...]] = {}

    # -- walking declaration levels ------------------------------------------------------------

    def visit_items(self, node: Any, scope: Scope, template: bool = False, access: str = "") -> None:
        """The declarations under ``node``; ``access`` is the default access of a class body
        ("" outside classes), changed by the body's `private:`/`protected:`/`public:` labels."""
        if node.type == "ERROR":
            self.visit_error_region(node, scope)
        for child in node.named_children:
            t = child.type
            if t in _CONTAINERS:
                self.visit_items(child, scope, template and t != "translation_unit", access)
            elif t == "access_specifier":
                access = text(child).strip().rstrip(":").strip() or access
            elif t == "namespace_definition":
                self.visit_namespace(child, scope)
            elif t == "function_definition":
                self.visit_function(child, scope, template, access)
            elif t in ("declaration", "field_declaration", "type_definition"):
                self.visit_declaration(child, scope, template, access)
            elif t == "alias_declaration":
                self.visit_type_alias(child, scope)
            elif t in _TYPE_KINDS:
                self.visit_type(child, scope, template, None, access)
            elif t == "template_declaration":
                self.template_names.append(_template_type_names(child))
                self.visit_items(child, scope, True, access)
                self.template_names.pop()
            elif t == "linkage_specification":
                body = child.child_by_field_name("body")
                if body is not None:
                    language = child.child_by_field_name("value")
                    c_linkage = language is not None and text(language).strip('"') == "C"
                    self.c_linkage += c_linkage
                    if body.type == "declaration_list":
                        self.visit_items(body, scope)
                    else:
                        self.visit_items(child, scope)
                    self.c_linkage -= c_linkage
            elif t == "preproc_include":
                self.visit_include(child)
            elif t == "preproc_function_def":
                self.visit_macro(child)
            elif t == "namespace_alias_definition":
                self.visit_namespace_alias(child, _join(scope))
            elif t == "using_declaration" and all(kind == "namespace" for _, kind in scope):
                self.visit_using(child, _join(scope))  # in a class it names a base's member: not ours
            elif t == "expression_statement" and not _in_class(scope):
                self.visit_statement(child, scope)

    def visit_error_region(self, node: Any, scope: Scope) -> None:
        """Inside an ERROR node tree-sitter leaves the pieces of a definition side by side:
        `[qualifiers] type function_declarator { ...`. A declarator followed by a body is a
        function definition whose header parsed, even if its body did not."""
        children = node.children
        for i, child in enumerate(children[:-1]):
            if child.type != "function_declarator" or children[i + 1].type not in ("{", "compound_statement"):
                continue
            name_node = child.child_by_field_name("declarator")
            written = clean_name(text(name_node)) if name_node is not None else ""
            if not written or written in self.library_macros or written in self.impl_macros:
                continue
            header_start = children[i - 1].start_byte if i else child.start_byte
            for j in range(i - 1, -1, -1):  # back to the end of the previous statement
                if children[j].type in (";", "}", "compound_statement", "function_definition",
                                        "declaration", "ERROR", "comment"):
                    break
                header_start = children[j].start_byte
            quals = _cuda_qualifiers(self.data, header_start, child.start_byte, self.metal)
            kind = "kernel" if "global" in quals else "function"
            inner = scope + tuple((p, "") for p in written.split("::"))
            self.add_def(kind, inner, child, name_node, tags=sorted(q for q in quals if q != "global"),
                         signature=_signature(child), in_class=_in_class(scope), error_region=True,
                         params=parameters(child))
            body = children[i + 1]
            if body.type == "compound_statement":
                self.bodies.append((body.start_byte, body.end_byte, _join(inner)))

    def visit_namespace(self, node: Any, scope: Scope) -> None:
        name = node.child_by_field_name("name")
        inner = scope
        if name is None:
            # Members of an anonymous namespace are private to their file: a component of their
            # name says so, and the graph step makes it unique per file.
            inner = scope + ((ANONYMOUS_NAMESPACE, "namespace"),)
        else:
            for part in text(name).split("::"):
                part = part.strip()
                if part and part != "inline":
                    inner = inner + ((part, "namespace"),)
            if inner != scope:
                self.add_def("namespace", inner, node, name)
        self.namespace_scopes[node.start_byte] = inner
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit_items(body, inner)

    def visit_namespace_alias(self, node: Any, scope: str, local: bool = False) -> None:
        """`namespace ft = turbomind;`, `namespace tle = ::tensorrt_llm::executor;`: the graph step
        writes the target for the alias at the head of the names the scope and nested ones use."""
        name = node.child_by_field_name("name")
        target = node.named_children[-1] if node.named_child_count > 1 else None
        if name is None or target is None or target.type not in ("namespace_identifier", "nested_namespace_specifier"):
            return
        self.namespace_aliases.append(NamespaceAlias(text(name), SPACES.sub("", text(target)), scope, line(node),
                                                     local))

    def visit_local_namespace_aliases(self) -> None:
        """Namespace aliases declared in function bodies, scoped to their function."""
        for node, function in self.in_bodies(b"namespace", _ALIAS_START, "namespace_alias_definition"):
            self.visit_namespace_alias(node, function, local=True)

    def in_bodies(self, keyword: bytes, start: re.Pattern[bytes], node_type: str) -> Iterator[tuple[Any, str]]:
        """The ``node_type`` declarations that ``keyword`` starts inside function bodies, each with
        the qualified name of its function (the bodies are sorted). Most files declare none: a
        search of the bytes says so without visiting a node."""
        if keyword not in self.data or not self.bodies:
            return
        starts = [b[0] for b in self.bodies]
        root = self.tree.root_node
        for m in start.finditer(self.data):
            if m.start() and WORD_RUN.fullmatch(self.data, m.start() - 1, m.start()):
                continue  # the end of a longer word
            i = bisect.bisect_right(starts, m.start()) - 1
            if i < 0 or m.end() > self.bodies[i][1]:
                continue  # at declaration level, where the walk met it
            found = root.descendant_for_byte_range(m.start(), m.start() + len(keyword))
            node = found.parent if found is not None else None
            if node is not None and node.type == node_type:
                yield node, self.bodies[i][2]

    def visit_using(self, node: Any, scope: str, local: bool = False) -> None:
        """`using namespace X;` and `using X::f;` (tree-sitter calls both a using_declaration); not
        `using enum E;` nor `using typename T::x;`."""
        keywords = {c.type for c in node.children if not c.is_named}
        named = node.named_children
        if not named or keywords - {"using", "namespace", ";", "::"} or named[-1].type not in _USING_TARGETS:
            return
        directive = "namespace" in keywords
        if not directive and named[-1].type != "qualified_identifier":
            return  # `using f;` declares nothing C++ accepts
        self.usings.append(Using(SPACES.sub("", text(named[-1])), scope, line(node), directive, local))

    def visit_local_usings(self) -> None:
        """Using-directives and using-declarations in function bodies, scoped to their function."""
        for node, function in self.in_bodies(b"using", _USING_START, "using_declaration"):
            self.visit_using(node, function, local=True)

    def visit_type(self, spec: Any, scope: Scope, template: bool, typedef_name: str | None,
                   access: str = "") -> None:
        body = spec.child_by_field_name("body")
        if body is None:
            return  # a forward declaration or an elaborated type, not a definition
        self.seen_types.add(spec.start_byte)
        name_node = spec.child_by_field_name("name")
        kind = _TYPE_KINDS[spec.type]
        tags = _access_tags(access)
        if name_node is not None:
            raw = text(name_node)
            written = clean_name(raw)
            if "<" in raw:
                tags.append("specialization")
        elif typedef_name:
            written = typedef_name
        else:
            return  # anonymous aggregate: its members are fields of the enclosing one
        inner = scope + tuple((p, kind) for p in written.split("::"))
        bases: tuple[str, ...] = ()
        for child in spec.named_children:
            if child.type == "base_class_clause":
                bases = tuple(SPACES.sub(" ", text(b)) for b in child.named_children
                              if b.type not in ("access_specifier", "virtual"))
        # `typedef enum X_enum {...} X;`: code (and bindings) name it X
        aliases = (typedef_name,) if typedef_name and name_node is not None and typedef_name != written else ()
        self.add_def(kind, inner, spec, name_node or spec, template=template, tags=tags, bases=bases,
                     aliases=aliases)
        if kind != "enum":
            # members of a class template are templated too: no layout, no code until instantiated
            self.visit_items(body, inner, template, _DEFAULT_ACCESS[kind])

    def visit_function(self, node: Any, scope: Scope, template: bool, access: str = "") -> None:
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in _TYPE_KINDS \
                and type_node.child_by_field_name("body") is not None:
            # `class C {...} f() {...}` is no C++ (no type is defined in a return type): the grammar closed a
            # class early, at a brace it could not match (nlohmann's basic_json), and read the member after it
            # as a function returning the class. The class's members up to there are its own.
            self.visit_type(type_node, scope, template, None, access)
        fdecl = _function_declarator(node.child_by_field_name("declarator"))
        if fdecl is None:
            return
        name_node = _function_name(fdecl)
        if name_node is None:
            return
        raw = text(name_node)
        if raw in self.library_macros or raw in self.impl_macros or raw in self.pybind_macros \
                or raw in self.nanobind_macros:
            self.visit_registration(raw, fdecl, node.child_by_field_name("body"), _join(scope))
            return
        if raw in self.tvm_ffi_blocks:
            return  # its registrations are read over the whole file (tvm_ffi_registrations), it is no function
        written = clean_name(raw)
        if not written:
            return
        body = node.child_by_field_name("body")
        params = parameters(fdecl)
        self.function_params[node.start_byte, node.end_byte] = params
        # No return type, an unqualified name, outside a class: no C++ function is written so (a
        # constructor outside its class is qualified), it is a macro's use
        if node.child_by_field_name("type") is None and "::" not in written and not _in_class(scope):
            if self.visit_macro_body(written, fdecl.child_by_field_name("parameters"), node, name_node, body, scope):
                return
            if body is not None and self.visit_head_macro(written, fdecl.child_by_field_name("parameters"), node,
                                                          body, scope):
                return
            if self.visit_library_wrapper(written, fdecl.child_by_field_name("parameters"), body, scope):
                return
            if (params and not any(p.name for p in params)) or (not params and _MACRO_NAME.fullmatch(written)):
                # parameters without names are the macro's arguments (a function whose return type
                # an `#if` cut off names them), and so is none given to a name spelled as a macro's
                # (`IPEX_LIBRARY_FRAGMENT() { ... }`): kept as written, one node for all its uses, and said
                self.macro_bodies.append((written, line(name_node)))
                arguments = tuple(p.type or p.name for p in params)
                # the macros its body calls, registrations if the macro opens a torch library block
                self.macro_uses.extend(block_macro_uses(body, _join(scope), written, arguments))
        elif node.child_by_field_name("type") is None and _is_macro_in_class(written, scope):
            # `DESTRUCTOR_WITH_LOG(X) { ... }`: what the macro defines is not known, its body is; kept
            # as a member of that name, and said
            self.class_macro_bodies.append((written, line(name_node)))
        quals = self.cuda_qualifiers(node, fdecl)
        kind = "kernel" if "global" in quals else "function"
        tags = sorted(q for q in quals if q != "global") + _access_tags(access) + _storage_tags(node, self.data)
        inner = scope + tuple((p, "") for p in written.split("::"))
        qual = _join(inner)
        self.add_def(kind, inner, node, name_node, template=template, tags=tags,
                     signature=_signature(fdecl), is_def=True, in_class=_in_class(scope),
                     params=params, returns=return_type(node, fdecl))
        if body is not None:
            self.bodies.append((body.start_byte, body.end_byte, qual))
            module, library = self.module_parameter(params)
            if module:
                # registrations split over functions given the module (`void register_translator(py::module& m)`,
                # called from the PYBIND11_MODULE block): their module is the caller's, found by the graph step;
                # what its parameters and template parameters name, each call's arguments
                given = {p.name: f"{PARAMETER}{i}" for i, p in enumerate(params) if p.name}
                own = self.template_names[-1] if template and self.template_names else ()
                given.update({name: f"{PARAMETER}T{i}" for i, name in enumerate(own)})
                self.pybind.extend(pybind_registrations(HELPER_MODULE + qual, module, body, _join(scope),
                                                        self.language, library, given))
                if library is PYBIND11:
                    # the function's own scope: what its macros register is named as its body names it,
                    # through its local usings (`using namespace mlir::triton;`)
                    self.macro_uses.extend(block_macro_uses(body, qual, PYBIND_BLOCK, (HELPER_MODULE + qual, module)))

    def visit_statement(self, node: Any, scope: Scope) -> None:
        """`TEST_CASE("text") { ... }`, `BOOST_AUTO_TEST_CASE(name, *decorator) { ... }`: a test macro
        whose arguments do not read as parameters is, at declaration level, a call missing its `;`
        followed by a block."""
        call = node.named_children[0] if node.named_child_count else None
        if call is None or call.type != "call_expression" or not node.children[-1].is_missing:
            return
        function = call.child_by_field_name("function")
        if function is None or function.type != "identifier":
            return
        macro = text(function)
        if macro not in self.test_macros.expand and macro not in self.test_macros.unnamed:
            return
        body = node.next_named_sibling
        while body is not None and body.type == "comment":
            body = body.next_named_sibling
        if body is not None and body.type == "compound_statement":
            self.visit_macro_body(macro, call.child_by_field_name("arguments"), node, function, body, scope, last=body)

    def visit_macro_body(self, macro: str, args: Any, node: Any, name_node: Any, body: Any, scope: Scope,
                         last: Any = None) -> bool:
        """A use `macro(args) { body }` of a test framework's macro (extractor.cpp.testmacros): the
        class and method its expansion defines, or, when the framework names the body by a counter,
        a note of it. False when ``macro`` is none of those (or its arguments do not fit)."""
        arguments = split_args(text(args)[1:-1]) if args is not None else []
        rule = self.test_macros.expand.get(macro)
        expanded = expand_test(rule, arguments) if rule is not None else None
        if expanded is not None:
            self.visit_test(expanded, node, name_node, body, scope, last)
            return True
        if macro in self.test_macros.unnamed:
            self.unnamed_tests.append((macro, line(name_node)))
            return True
        return False

    def visit_library_wrapper(self, macro: str, args: Any, body: Any, scope: Scope) -> bool:
        """A macro of the system's own that wraps a torch library block, `MACRO(ns, m) { ... }` or
        `MACRO(ns, key, m) { ... }` (intel-extension-for-pytorch's `IPEX_TORCH_LIBRARY_FRAGMENT`,
        defined in a header over `torch::Library::FRAGMENT`): read as TORCH_LIBRARY_FRAGMENT's and
        TORCH_LIBRARY_IMPL's blocks are, when its body is one, that is when it calls `m.impl(...)` or
        defines a schema (`m.def("op(...) -> ...")`) on its last argument; no function either. A body
        that only `m.def`s names (a pybind11 module's shape) is left a macro's use."""
        arguments = split_args(text(args)[1:-1]) if args is not None else []
        if body is None or len(arguments) not in (2, 3) or not _MACRO_NAME.fullmatch(macro) \
                or not all(_WORD.fullmatch(a) for a in arguments):
            return False
        found = torch_registrations(arguments, len(arguments) == 3, body, _join(scope), self.language,
                                    self.op_name_wrappers)
        if not any(f.kind == "impl" or f.schema is not None for f in found):
            return False
        self.torch_ops.extend(found)
        known = sorted(self.impl_macros if len(arguments) == 3 else self.library_macros)[0]
        self.macro_uses.extend(block_macro_uses(body, _join(scope), known, tuple(arguments)))
        return True

    def visit_test(self, test: ExpandedTest, node: Any, name_node: Any, body: Any, scope: Scope,
                   last: Any = None) -> None:
        """The class (in its namespace, if it has one) and the method of one test, at the macro's
        line; the body's calls are the method's."""
        if test.namespace:
            scope = scope + ((test.namespace, "namespace"),)
            self.add_def("namespace", scope, node, name_node, last=last)
        outer = scope + ((test.aggregate, test.kind),)
        self.add_def(test.kind, outer, node, name_node, template=test.template, tags=["test"], bases=test.bases,
                     last=last)
        inner = outer + ((test.method, ""),)
        self.add_def("function", inner, node, name_node, template=test.template,
                     tags=["test", *_access_tags(test.access)], signature="()", in_class=True, returns="void",
                     last=last)
        if body is not None and body.type == "compound_statement":
            self.bodies.append((body.start_byte, body.end_byte, _join(inner)))

    def cuda_qualifiers(self, node: Any, fdecl: Any) -> set[str]:
        """`global`/`device`/`host` from the original bytes before the declarator: in files
        parsed with the C++ grammar they were blanked, so the tree no longer shows them and the
        node itself may start after them."""
        prev = node.prev_sibling
        if prev is not None:
            start = prev.end_byte
        else:  # the root node starts at its first token, after any blanked qualifiers
            parent = node.parent
            start = parent.start_byte if parent is not None and parent.parent is not None else 0
        return _cuda_qualifiers(self.data, start, fdecl.start_byte, self.metal)

    def visit_declaration(self, node: Any, scope: Scope, template: bool, access: str = "") -> None:
        type_node = node.child_by_field_name("type")
        declarators = node.children_by_field_name("declarator")
        if type_node is not None and type_node.type in _TYPE_KINDS:
            typedef_name = None
            if node.type == "type_definition" and declarators and declarators[0].type in (
                    "type_identifier", "primitive_type"):
                typedef_name = text(declarators[0])
            self.visit_type(type_node, scope, template, typedef_name, access)
        if node.type == "type_definition":
            if type_node is not None and type_node.child_by_field_name("body") is None:
                for decl in declarators:
                    name, written = declared_variable(node, decl)
                    if name:
                        self.add_type_alias(scope, name, written, decl)
            return
        in_class = _in_class(scope)
        if in_class and node.type == "field_declaration" and type_node is not None \
                and type_node.type not in _NOT_CLASS_TYPES and type_node.child_by_field_name("body") is None:
            self.visit_fields(node, declarators, scope)
        for decl in declarators:
            body = None
            if decl.type == "init_declarator":
                # `void f(args) { ... }` after a statement that lacks its `;` parses as a
                # declaration initialised with a brace list: it is the definition of f
                value = decl.child_by_field_name("value")
                inner_decl = decl.child_by_field_name("declarator")
                if value is None or value.type != "initializer_list" or inner_decl is None \
                        or inner_decl.type != "function_declarator":
                    if not in_class and node.type == "declaration" and type_node is not None \
                            and type_node.type not in _NOT_CLASS_TYPES:
                        self.visit_global(node, type_node, decl, scope)  # `Logger g(...);`, `auto k = f();`
                    continue
                decl, body = inner_decl, value
            fdecl = _function_declarator(decl)
            if fdecl is None:
                if not in_class and node.type == "declaration" and type_node is not None \
                        and type_node.type not in _NOT_CLASS_TYPES:
                    self.visit_global(node, type_node, decl, scope)
                continue
            name_node = _function_name(fdecl)
            if name_node is None:
                continue
            written = clean_name(text(name_node))
            # `MACRO(args);` at namespace scope parses as a declaration without a type; only
            # constructors, destructors and out-of-class qualified names may lack one.
            if not written or (type_node is None and not in_class and "::" not in written):
                continue
            if type_node is None and body is None and _is_macro_in_class(written, scope):
                # `DISALLOW_COPY_AND_ASSIGN(X);` declares what the macro expands to (deleted copy
                # members, a friend), no member of the macro's name: no definition, its arguments no
                # types a member uses; said
                self.class_macro_uses.append((written, line(name_node)))
                continue
            quals = self.cuda_qualifiers(node, fdecl)
            kind = "kernel" if "global" in quals else "function"
            inner = scope + tuple((p, "") for p in written.split("::"))
            tags = sorted(q for q in quals if q != "global") + _access_tags(access) + _storage_tags(node, self.data)
            self.add_def(kind, inner, node, name_node, template=template, tags=tags,
                         signature=_signature(fdecl), is_def=body is not None, in_class=in_class,
                         error_region=body is not None, params=parameters(fdecl),
                         returns=return_type(node, fdecl))
            if body is not None:
                self.bodies.append((body.start_byte, body.end_byte, _join(inner)))

    def visit_global(self, node: Any, type_node: Any, decl: Any, scope: Scope) -> None:
        """A namespace's variable whose type may be a class (`Logger gLogger_;`): member calls on it resolve
        through its type, as on a local's. An `auto` one keeps its initializer when it is a name, a call or
        a chain."""
        name, written = declared_variable(node, decl)
        if not name or "::" in name:
            return  # a class's static member defined out of it: its class has the declaration
        written, init = self.auto_declared(type_node, decl, written)
        if not init and unwrap(written, self.handles) is None:
            return  # `auto` from an expression not read, `decltype(...)`: no type to look a member up in
        self.globals.append(Global(_join(scope), name, written, line(decl), init,
                                   bool(_storage_tags(node, self.data))))

    def visit_type_alias(self, node: Any, scope: Scope) -> None:
        """`using ModelPtr = std::shared_ptr<Model>;` in a namespace or a class."""
        name = node.child_by_field_name("name")
        aliased = node.child_by_field_name("type")
        if name is not None and aliased is not None:
            self.add_type_alias(scope, text(name), normalise_type(text(aliased)), name)

    def add_type_alias(self, scope: Scope, name: str, written: str, node: Any) -> None:
        # in a template the aliased type may name its parameters: the name is kept (it hides outer ones)
        self.type_aliases.append(TypeAlias(_join(scope), name, "" if self.template_names else written, line(node)))

    def visit_fields(self, node: Any, declarators: list[Any], scope: Scope) -> None:
        """The data members a class's field declaration declares (`std::unique_ptr<Model> model_;`), with
        their types: the graph step resolves `model_->Init()` in the class's methods through them."""
        owner = _join(scope)
        for decl in declarators:
            if _function_declarator(decl) is not None:
                continue  # a method
            name, written = declared_variable(node, decl)
            if name:
                self.fields.append(Field(owner, name, written, line(decl)))

    def visit_locals(self, found: dict[str, list[Any]], calls: list[tuple[str, str, int]]) -> list[Local]:
        """The variables of function bodies (locals, range-for's, lambdas' parameters, what a catch clause
        catches) that a member call of the same body is made on (`m` of `m->Init()`), with their declared
        types and scopes."""
        heads: dict[str, set[str]] = {}
        for qual, callee, _line in calls:
            m = _OBJECT_HEAD.match(callee)
            if m is not None and m.group(1) != "this":
                heads.setdefault(qual, set()).add(m.group(1))
        if not heads:
            return []
        bodies = self.bodies
        starts = [b[0] for b in bodies]
        out: list[Local] = []
        asked = {qual: set(names) for qual, names in heads.items()}
        for _round in range(_MAX_INIT_DEPTH):
            declared: list[Local] = []
            for kind in ("local", "range", "lambda", "catch"):
                for node in found.get(kind, ()):
                    i = bisect.bisect_right(starts, node.start_byte) - 1
                    if i < 0 or node.end_byte > bodies[i][1]:
                        continue
                    names = heads.get(bodies[i][2])
                    if names:
                        declared.extend(self.body_variables(kind, node, names, bodies[i][2]))
            out.extend(declared)
            # the variables an `auto` one is initialized from or ranges over (`auto b = entry.second;`)
            heads = {}
            for local in declared:
                m = _INIT_HEAD.match(local.init) if local.init else None
                if m is not None and m.group(1) != "this" and m.group(1) not in asked[local.caller]:
                    asked[local.caller].add(m.group(1))
                    heads.setdefault(local.caller, set()).add(m.group(1))
            if not heads:
                break
        return out

    def body_variables(self, kind: str, node: Any, names: set[str], caller: str) -> Iterator[Local]:
        """The variables among ``names`` that the declaration, range-for or lambda ``node`` declares."""
        if kind in ("lambda", "catch"):  # a lambda's parameters, or what a catch clause catches
            end = node.end_point[0] + 1 if kind == "catch" else \
                line(node) if node.parent is None else node.parent.end_point[0] + 1
            for p in parameters(node):
                if p.name in names:
                    yield Local(caller, p.name, p.type, line(node), end)
            return
        if kind == "range":
            declarator = node.child_by_field_name("declarator")
            name, written = declared_variable(node, declarator) if declarator is not None else ("", "")
            if name in names:
                ranged = node.child_by_field_name("right")
                if unwrap(written, self.handles) is None and ranged is not None and ranged.type in _INITIALIZERS \
                        and len(ranged.text) <= _MAX_INIT:  # `for (auto& m : models_)`: an element of models_
                    yield Local(caller, name, written, line(declarator), node.end_point[0] + 1,
                                SPACES.sub("", text(ranged)), True)
                else:
                    yield Local(caller, name, written, line(declarator), node.end_point[0] + 1)
            return
        scope = node.parent
        # `if (Model* m = ...)`: the whole if statement; under `#ifdef` in a block: the block
        while scope is not None and scope.parent is not None and (
                scope.type == "condition_clause" or scope.type.startswith("preproc_")):
            scope = scope.parent
        end = (scope if scope is not None else node).end_point[0] + 1
        type_node = node.child_by_field_name("type")
        for decl in node.children_by_field_name("declarator"):
            name, written = declared_variable(node, decl)
            if name in names:
                written, init = self.auto_declared(type_node, decl, written)
                yield Local(caller, name, written, line(decl), end, init)

    def auto_declared(self, type_node: Any, decl: Any, written: str) -> tuple[str, str]:
        """(the type, the initializer) of a declared variable: an `auto` one has the type its initializer
        writes out (:meth:`made_by`), else keeps its initializer when that is a name, a call or a chain
        of them (`tc::Model::Create(...)`, `config_`, `a->b()`), whose type the graph step reads."""
        if type_node is None or type_node.type != "placeholder_type_specifier" or decl.type != "init_declarator":
            return written, ""
        value = decl.child_by_field_name("value")
        made = self.made_by(value)
        if made:
            return made, ""
        if value is not None and value.type in _INITIALIZERS and len(value.text) <= _MAX_INIT:
            return written, SPACES.sub("", text(value))
        return written, ""

    def made_by(self, value: Any) -> str:
        """The type an `auto` variable has from its initializer, when the initializer writes it out:
        `new T(...)` makes a `T*`; a factory of handles.yaml (`std::make_unique<T>(...)`) its handle of
        T; a handle's own constructor (`std::unique_ptr<T>(...)`) that handle; a cast (`static_cast<T*>`,
        `reinterpret_cast`, `dynamic_cast`, `const_cast`) its type; "" for anything else."""
        if value is None:
            return ""
        if value.type == "new_expression":
            made = value.child_by_field_name("type")
            return normalise_type(text(made)) + "*" if made is not None else ""
        if value.type == "call_expression":
            function = value.child_by_field_name("function")
            m = _TEMPLATE_CALL.fullmatch(SPACES.sub("", text(function))) if function is not None else None
            if m is None:
                return ""
            if m.group(1) in _CASTS:
                return normalise_type(m.group(2))
            handle = self.handles.factory(m.group(1))
            if handle:
                return f"{handle}<{split_args(m.group(2))[0]}>"
            if self.handles.is_handle(m.group(1)):
                return normalise_type(m.group(0))
        return ""

    def visit_include(self, node: Any) -> None:
        path = node.child_by_field_name("path")
        if path is None:
            return
        written = text(path).strip()
        if written.startswith("<") and written.endswith(">"):
            self.includes.append((written[1:-1].strip(), True, line(node)))
        elif written.startswith('"'):
            self.includes.append((written.strip('"').strip(), False, line(node)))

    def visit_macro(self, node: Any) -> None:
        """Function-like macros are not expanded, so record what their bodies would hide: kernel
        launches (attributed to the functions that invoke the macro) and whole definitions."""
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        if value is None or name is None:
            return
        body = value.text.replace(b"\\\n", b"  ").replace(b"\\\r\n", b"   ")
        params = node.child_by_field_name("parameters")
        kernels = sorted({clean_name(m.group(1).decode()) for m in _MACRO_LAUNCH.finditer(body)}) \
            if b"<<<" in body else []
        if b"Launch" in body or b"launch" in body or any(w in body for w in self.launcher_words):
            kernels = sorted({*kernels, *macro_launcher_kernels(
                body, self.launchers, (p.strip() for p in text(params).strip("()").split(",")) if params else ())})
        if kernels:
            self.macro_launches[text(name)] = kernels
        own = {text(name), *(p.strip() for p in (text(params).strip("()").split(",") if params is not None else ()))}
        called = sorted({clean_name(m.group(1).decode()) for m in _MACRO_CALL.finditer(body)
                         if _is_call(body, m.start())} - _NOT_CALLED - own)
        if called:
            self.macro_calls[text(name)] = called
        if _MACRO_DEFINITION.search(body):
            self.macro_blocks.append((text(name), line(node)))
        if params is not None and (b".impl(" in body or b".def(" in body or self._opens_block(body)):
            self.registration_macros.append(RegistrationMacro(
                text(name), tuple(p.strip() for p in text(params).strip("()").split(",") if p.strip()),
                SPACES.sub(" ", body.decode(errors="replace")).strip(), line(node)))

    def launches_of_unvisited_macros(self) -> list[tuple[str, str, int]]:
        """Launches written in the macros :meth:`visit_macro` does not see: those defined inside a
        function's body (faiss's ``#define RUN_APPEND do { ivfFlatAppend<<<grid, block>>>(...); }
        while (0)``, used in the same body) and object-like ones. Each definition counts for the
        bodies that name the macro where it is in effect (up to the next ``#define`` or ``#undef`` of
        the name: faiss defines ``RUN_APPEND`` three times in one file), at the first use there."""
        found: list[tuple[str, str, int]] = []
        directives: dict[bytes, list[int]] = collections.defaultdict(list)  # name -> where each #define/#undef starts
        for at, m in at_line_starts(_DEFINE_OR_UNDEF, self.data):
            directives[m.group(1)].append(at)
        for start, m in at_line_starts(_ANY_DEFINE, self.data):
            name = m.group(1).decode()
            if name in self.macro_launches or not (b"<<<" in m.group(2) or b"aunch" in m.group(2)
                                                   or any(w in m.group(2) for w in self.launcher_words)):
                continue
            body = CONTINUATION.sub(b" ", m.group(2))
            kernels = sorted({clean_name(k.group(1).decode()) for k in _MACRO_LAUNCH.finditer(body)})
            kernels = sorted({*kernels, *macro_launcher_kernels(body, self.launchers, _macro_params(m.group(0)))})
            if not kernels:
                continue
            until = min((at for at in directives[m.group(1)] if at > start), default=len(self.data))
            # only the text where this definition is in effect is looked at
            uses = _first_in_bodies(self.data, self.bodies, [name], (m.end(), until)).get(name, ())
            found.extend((self.bodies[i][2], k, at) for i, at in uses for k in kernels)
        return found

    def _opens_block(self, body: bytes) -> bool:
        """Whether a macro's replacement text is a torch library block macro's use (`TORCH_LIBRARY_FRAGMENT(ns, m)`)."""
        head = body.lstrip().split(b"(", 1)[0].strip().decode(errors="replace")
        return head in self.library_macros or head in self.impl_macros

    def expand_macros(self) -> dict[str, tuple[list[str], list[str]]]:
        """Macro -> (the functions it calls, the kernels it launches), through the macros of this
        file that it invokes in turn (vLLM's ``CALL_V1_LAUNCHER_BLOCK_SIZE`` -> ``..._SPARSITY`` ->
        ``CALL_V1_LAUNCHER`` -> ``paged_attention_v1_launcher<...>(...)``). Macros of other files are
        not seen: a name the file does not define is kept as a call, which resolution drops when no
        function has it."""
        known = set(self.macro_calls) | set(self.macro_launches)

        def expand(macro: str, seen: frozenset[str]) -> tuple[set[str], set[str]]:
            calls, kernels = set(), set(self.macro_launches.get(macro, ()))
            for name in self.macro_calls.get(macro, ()):
                if name not in known:
                    calls.add(name)
                elif name not in seen:
                    inner_calls, inner_kernels = expand(name, seen | {name})
                    calls |= inner_calls
                    kernels |= inner_kernels
            return calls, kernels

        out = {}
        for macro in known:
            calls, kernels = expand(macro, frozenset({macro}))
            if calls or kernels:
                out[macro] = (sorted(calls), sorted(kernels))
        return out

    def expand_defining_macros(self, calls: list[tuple[str, str, int]], defines: list[re.Match[bytes]]) -> None:
        """Each use, at namespace level, of a macro of this file that defines a function named by
        pasting its parameters (bitsandbytes' `MAKE_CFUNC32(adam, float, fp32)` defining
        `cadam32bit_grad_fp32` inside `extern "C"`): the function its expansion defines, at the
        use's line, with its parameters, linkage and calls as the expanded text has them, tagged
        `macro-expanded`. A macro some use of which expands is no longer said to hide its
        definitions (`macro-definitions`)."""
        macros: dict[str, tuple[tuple[str, ...], bytes, int]] = {}
        spans: list[tuple[int, int]] = []
        for m in defines:
            spans.append((m.start(), m.end()))
            body = re.sub(rb"\\\r?\n", b" ", m.group(3))
            defined = _MACRO_DEFINITION.search(body)
            name = defined.group("name") if defined is not None else None  # None: a class's body
            params = macro_params(m)
            if name is None or "..." in params or not set(re.findall(rb"\w+", name)) & {p.encode() for p in params}:
                continue
            macros[m.group(1).decode()] = (params, body, self.line_at(m.start()))
        if not macros:
            return
        expanded: set[str] = set()
        root = self.tree.root_node
        apart = _Spans([*spans, *((start, end) for start, end, _ in self.bodies)])
        for macro, (params, body, _) in sorted(macros.items()):
            # the use may follow qualifiers and attribute macros (xxHash's `XXH_FORCE_INLINE
            # XXH_TARGET_AVX2 XXH3_ACCUMULATE_TEMPLATE(avx2)`)
            for m in re.finditer(rb"(?m)^[ \t]*((?:[A-Za-z_]\w*[ \t]+)*)(" + re.escape(macro.encode())
                                 + rb")[ \t]*\(", self.data):
                at = m.start(2)
                if at in apart:
                    continue  # in a macro's own body, or a statement of a function
                where = self._declaration_level(root, at)
                args = _macro_arguments(self.data, m.end() - 1) if where is not None else None
                if where is None or args is None or len(args) != len(params):
                    continue
                use_line = self.line_at(at)
                written = b" ".join(w for w in m.group(1).split() if w in _SPECIFIERS)
                if self.visit_expansion(written + b" " + _substitute(body, params, args), where, use_line, calls):
                    expanded.add(macro)
        said = {name for name, _ in self.macro_blocks}
        self.macro_blocks = [(name, at) for name, at in self.macro_blocks if name not in expanded]
        # one tree-sitter swallowed, never expanded: said as the others are
        self.macro_blocks.extend((name, at) for name, (_, _, at) in sorted(macros.items())
                                 if name not in expanded and name not in said)

    def body_params(self, start: int) -> list[tuple[str, bool]] | None:
        """(name, whether it may hold a function) of each parameter of the function whose body opens at
        ``start``; none when it is no function's (a lambda's, a macro's block); None for a kernel's or a
        device function's (device code hands no kernel to a launcher)."""
        node = self.tree.root_node.descendant_for_byte_range(start, start + 1)
        while node is not None and node.type != "compound_statement":
            node = node.parent
        definition = node.parent if node is not None else None
        if definition is None or definition.type != "function_definition":
            return []
        fdecl = _function_declarator(definition.child_by_field_name("declarator"))
        if fdecl is None:
            return []
        quals = _cuda_qualifiers(self.data, definition.start_byte, fdecl.start_byte, self.metal)
        if "global" in quals or ("device" in quals and "host" not in quals):
            return None
        own: list[str] = []
        outer = definition.parent
        while outer is not None and outer.type in ("template_declaration", "field_declaration_list",
                                                   "class_specifier", "struct_specifier"):
            if outer.type == "template_declaration":
                own.extend(_template_type_names(outer))
            outer = outer.parent
        # a definition's span names one node: visit_function read that node's parameters
        params = self.function_params.get((definition.start_byte, definition.end_byte))
        return [(p.name, may_hold_function(p.type, own)) for p in (parameters(fdecl) if params is None else params)]

    def line_at(self, at: int) -> int:
        """The line of byte ``at`` (1-based): its newlines before it, by bisection into the file's
        newlines, listed when first asked (a file may ask once per macro use: 10,052 in asmjit's
        x86emitter.h, where counting from the start each time was quadratic)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.data)]
        return bisect.bisect_left(self._newlines, at) + 1

    def read_member_macros(self, defines: list[re.Match[bytes]]) -> None:
        """Of the file's function-like macros (``defines``), those whose bodies declare class members
        (:func:`_declares_members`), or use one of those (Velox's `VELOX_QUERY_CONFIG(...)`: a property's
        `VELOX_QUERY_CONFIG_PROPERTY(...)` and its accessor): written out where a class body uses them
        (extractor.cpp.includes), so not said to hide definitions (`macro-definitions`)."""
        bodies: list[tuple[re.Match[bytes], str]] = []
        for m in defines:
            # lines are spliced before comments are removed: a `//` runs to the end of the definition
            spliced = re.sub(rb"\\\r?\n", b" ", m.group(3)).decode(errors="replace")
            bodies.append((m, " ".join(_COMMENT.sub(" ", spliced).split())))
        found: dict[str, tuple[re.Match[bytes], str]] = {}
        for _round in range(3):  # a macro that uses one found in the round before
            uses = re.compile(r"\b(?:" + "|".join(map(re.escape, found)) + r")\s*\(") if found else None
            before = len(found)
            for m, body in bodies:
                name = m.group(1).decode()
                if name not in found and (_declares_members(body.encode()) or uses is not None and uses.search(body)):
                    found[name] = (m, body)
            if len(found) == before:
                break
        for name, (m, body) in sorted(found.items(), key=lambda item: item[1][0].start()):
            params = macro_params(m)
            self.member_macros.append(MacroDefinition(
                name, self.line_at(m.start()), tuple("__VA_ARGS__" if p == "..." else p for p in params if p), body))
        if self.member_macros:
            members = {macro.name for macro in self.member_macros}
            self.macro_blocks = [(name, at) for name, at in self.macro_blocks if name not in members]

    def _declaration_level(self, root: Any, start: int) -> tuple[Scope, bool] | None:
        """(the namespace scope, whether in `extern "C"`) of a macro's use at ``start``; None when the
        use is not at namespace level (in a body, a class, another macro, a comment)."""
        node = root.descendant_for_byte_range(start, start)
        scope: Scope | None = None
        c_linkage = False
        while node is not None:
            t = node.type
            if t in _NOT_DECLARATION_LEVEL:
                return None
            if t == "namespace_definition" and scope is None:
                scope = self.namespace_scopes.get(node.start_byte)
            elif t == "linkage_specification":
                language = node.child_by_field_name("value")
                c_linkage = c_linkage or (language is not None and text(language).strip('"') == "C")
            node = node.parent
        return scope or (), c_linkage

    def visit_expansion(self, expanded: bytes, where: tuple[Scope, bool], use_line: int,
                        calls: list[tuple[str, str, int]]) -> bool:
        """The function one macro use defines, read from its expanded text (see expand_defining_macros)."""
        scope, c_linkage = where
        if self._attribute_macros is None:  # the file's own, blanked in the expansion as in the file
            self._attribute_macros = frozenset(attribute_macros(self.data))
        tree = parse_source(expanded, self.language, blank=self._attribute_macros)
        sub = _Scanner(ParsedFile(self.language, expanded, tree), self.given_launchers)
        sub.c_linkage = int(c_linkage)
        sub.visit_items(sub.tree.root_node, scope)
        functions = [d for d in sub.defs if d.kind in ("function", "kernel") and "recovered" not in d.tags]
        if len(functions) != 1 or "::" in functions[0].qual[len(_join(scope)):].lstrip(":"):
            return False  # not one function of a name of its own: nothing is guessed
        d = functions[0]
        self.defs.append(msgspec.structs.replace(d, line=use_line, start=use_line, end=use_line, doc="",
                                                 tags=tuple(sorted({*d.tags, MACRO_EXPANDED}))))
        own = d.qual.rpartition("::")[2]
        for start, end, _qual in sub.bodies[:1]:
            text_ = expanded[start:end]
            called = {clean_name(c.group(1).decode()) for c in _MACRO_CALL.finditer(text_)
                      if _is_call(text_, c.start())}
            calls.extend((d.qual, callee, use_line) for callee in sorted(called - _NOT_CALLED - {own}))
        return True

    def head_macros(self) -> dict[str, tuple[tuple[str, ...], bytes]]:
        """The file's function-like macros whose body is a function's head, its name a parameter or
        pasted from one (:data:`_MACRO_HEAD`): name -> (parameters, body), read once, when first asked."""
        if self._head_macros is None:
            self._head_macros = {}
            for m in self.function_macros:
                body = _COMMENT.sub(" ", re.sub(rb"\\\r?\n", b" ", m.group(3)).decode(errors="replace")).encode()
                head = _MACRO_HEAD.fullmatch(body)
                params = macro_params(m)
                if head is None or not set(re.findall(rb"\w+", head.group("name"))) & {p.encode() for p in params}:
                    continue
                self._head_macros[m.group(1).decode()] = (params, body)
        return self._head_macros

    def visit_head_macro(self, macro: str, args: Any, node: Any, body: Any, scope: Scope) -> bool:
        """`MACRO(name, ...) { body }` at namespace level, ``MACRO`` a macro of the file whose body is a
        function's head (:meth:`head_macros`): the function the head names once written out, with
        the use's lines and its body's calls, tagged `macro-expanded`. False when ``macro`` is none
        of those, or its arguments do not fit, or the head does not read as one function."""
        found = self.head_macros().get(macro)
        arguments = [a.encode() for a in split_args(text(args)[1:-1])] if found is not None and args is not None \
            else []
        if found is None or not arguments:
            return False
        params, head = found
        if params[-1] == "...":  # variadic: the arguments past the named ones are __VA_ARGS__
            if len(arguments) < len(params) - 1:
                return False
            named = len(params) - 1
            params = (*params[:-1], "__VA_ARGS__")
            arguments = [*arguments[:named], b", ".join(arguments[named:])]
        elif len(arguments) != len(params):
            return False
        if self._attribute_macros is None:  # the file's own, blanked in the expansion as in the file
            self._attribute_macros = frozenset(attribute_macros(self.data))
        expanded = _substitute(head, params, arguments) + b" {}"
        sub = _Scanner(ParsedFile(self.language, expanded, parse_source(expanded, self.language,
                                                                        blank=self._attribute_macros)),
                       self.given_launchers)
        sub.c_linkage = self.c_linkage
        sub.visit_items(sub.tree.root_node, scope)
        functions = [d for d in sub.defs if d.kind in ("function", "kernel") and "recovered" not in d.tags]
        if len(functions) != 1 or "::" in functions[0].qual[len(_join(scope)):].lstrip(":") \
                or sub.tree.root_node.has_error:
            return False  # not one function of a name of its own: nothing is guessed
        d = functions[0]
        self.defs.append(msgspec.structs.replace(d, line=line(node), start=line(node), end=node.end_point[0] + 1,
                                                 doc=_leading_comment(node),
                                                 tags=tuple(sorted({*d.tags, MACRO_EXPANDED}))))
        self.bodies.append((body.start_byte, body.end_byte, d.qual))
        return True

    def visit_registration(self, macro: str, fdecl: Any, body: Any, scope: str) -> None:
        params = fdecl.child_by_field_name("parameters")
        args = split_args(text(params)[1:-1]) if params is not None else []
        if body is None or not args:
            return
        if macro in self.pybind_macros:
            self.pybind.extend(pybind_registrations(args[0], args[-1], body, scope, self.language))
            # registering macros of the system (`ADD_PASS_WRAPPER_0("add_cse", createCSEPass);`): expanded
            # by the graph step (extractor.cpp.ops.pybind_macro_registrations)
            self.macro_uses.extend(block_macro_uses(body, scope, PYBIND_BLOCK, (args[0], args[-1])))
        elif macro in self.nanobind_macros:
            self.pybind.extend(pybind_registrations(args[0], args[-1], body, scope, self.language, self.nanobind()))
        else:
            self.torch_ops.extend(torch_registrations(args, macro in self.impl_macros, body, scope,
                                                      self.language, self.op_name_wrappers))
            self.macro_uses.extend(block_macro_uses(body, scope, macro, tuple(args)))

    def nanobind(self) -> BindingLibrary:
        """nanobind with the aliases this file gives its namespace, read once, when first needed."""
        if self._nanobind is None:
            self._nanobind = nanobind_in(self.data)
        return self._nanobind

    def module_parameter(self, params: Iterable[Param]) -> tuple[str, BindingLibrary]:
        """The name of a pybind11 or nanobind module parameter (`py::module& m`, `nb::module_& m`),
        "" when there is none; and the library."""
        for p in params:
            if not p.name or "module" not in p.type:
                continue
            written = SPACES.sub("", p.type)
            # nanobind first: a file may name it `py` (`namespace py = nanobind;`)
            m = _NANOBIND_MODULE_TYPE.fullmatch(written)
            if m and m.group(1) in self.nanobind().namespaces:
                return p.name, self.nanobind()
            if _PYBIND_MODULE_TYPE.fullmatch(written):
                return p.name, PYBIND11
        return "", PYBIND11

    # -- records -------------------------------------------------------------------------------

    def add_def(self, kind: str, scope: Scope, node: Any, name_node: Any, *,
                template: bool = False, tags: list[str] | None = None, signature: str = "",
                is_def: bool = True, in_class: bool = False, bases: tuple[str, ...] = (),
                aliases: tuple[str, ...] = (), error_region: bool = False,
                params: tuple[Param, ...] = (), returns: str = "", last: Any = None) -> None:
        """One definition record; it spans ``node``, or from ``node`` to ``last`` when given."""
        all_tags = list(tags or ())
        if template:
            all_tags.append("template")
        if not is_def:
            all_tags.append("declaration")
        if in_class:
            all_tags.append("member")
        if error_region:
            all_tags.append("recovered")
        if self.c_linkage and kind == "function" and not in_class:
            all_tags.append(C_LINKAGE)
        doc = _leading_comment(node if not template or node.parent is None or
                               node.parent.type != "template_declaration" else node.parent)
        template_params = tuple(dict.fromkeys(n for names in self.template_names for n in names))
        self.defs.append(Definition(kind, _join(scope), scope[:-1], name_node.start_point[0] + 1,
                                    node.start_point[0] + 1, (node if last is None else last).end_point[0] + 1,
                                    tuple(sorted(set(all_tags))),
                                    signature, params, returns, bases, aliases, doc, template_params))

    def visit_local_types(self, found: list[Any]) -> None:
        """Classes and structs defined inside function bodies (functors, configs): ctags lists
        them and so do we, scoped under their function."""
        if not self.bodies:
            return
        ordered = sorted(self.bodies)
        starts = [b[0] for b in ordered]
        for spec in sorted(found, key=lambda n: n.start_byte):
            if spec.start_byte in self.seen_types:
                continue
            i = bisect.bisect_right(starts, spec.start_byte) - 1
            if i < 0 or spec.end_byte > ordered[i][1]:
                continue
            scope = tuple((p, "function") for p in ordered[i][2].split("::"))
            self.visit_type(spec, scope, False, None)

    def finish(self, words: bytes) -> CppFacts:
        # one query pass over the whole file for everything below declaration level
        found = file_nodes(self.tree, self.language)
        self.visit_local_types(found.get("type", []))
        calls: list[tuple[str, str, int]] = []
        launches: list[tuple[str, str, int]] = []
        self.bodies.sort()
        self.visit_local_namespace_aliases()
        self.visit_local_usings()
        starts = [b[0] for b in self.bodies]
        kernel_starts = {n.start_byte for n in found.get("kernel", ())}
        bodies = self.bodies
        launchers = self.launchers
        # calls with arguments, by body, in files that may hand kernels on (extractor.cpp.handoffs)
        handing = self.language is Language.CUDA or any(w in self.data for w in (b"cuda", b"__global__", b"hip"))
        body_calls: dict[int, list[tuple[str, Any, int]]] = collections.defaultdict(list)
        for fn in found.get("callee", ()):
            if fn.type not in CALLEE_TYPES:
                continue
            start = fn.start_byte
            i = bisect.bisect_right(starts, start) - 1
            if i < 0 or fn.end_byte > bodies[i][1]:
                continue
            callee = callee_text(fn)
            if not callee:
                continue
            if start in kernel_starts and _WORD.fullmatch(callee):
                launches.extend((bodies[i][2], held, fn.start_point[0] + 1)
                                for held in _held_kernels(self.data, bodies[i][0], start, callee))
                continue
            entry = (bodies[i][2], callee, fn.start_point[0] + 1)
            (launches if start in kernel_starts else calls).append(entry)
            # a node's parent is found by a descent from the root: sought only where the arguments are read
            call = fn.parent if handing and start not in kernel_starts else None
            if call is not None and call.type == "call_expression":
                arguments = call.child_by_field_name("arguments")
                if arguments is not None and arguments.named_child_count:
                    body_calls[i].append((callee, arguments, entry[2]))
            if callee in launchers:
                # `cudaLaunchKernelEx(&config, kernel, ...)`: the call stays a call, and launches the kernel
                launches.extend((bodies[i][2], kernel, fn.start_point[0] + 1)
                                for kernel in _launched(self.data, bodies[i][0], fn, launchers[callee]))
        if handing:
            for at in launch_field_offsets(self.data):  # `params.func = func;` in a body that calls nothing
                i = bisect.bisect_right(starts, at) - 1
                if i >= 0 and at < bodies[i][1]:
                    body_calls.setdefault(i, [])
        for i, sites in sorted(body_calls.items()):
            start, end, qual = bodies[i]
            params = self.body_params(start)
            if params is None:
                continue
            sinks, forwards, given = body_handoffs(self.data, qual, (start, end), params, sites, launchers)
            self.launcher_params.extend(sinks)
            self.forwards.extend(forwards)
            self.kernel_args.extend(given)
        errors = [e for e in found.get("error", ())
                  if not _string_before_macro(e) and not _unnamed_pointer_default(e) and not _member_pointer_class(e)]
        for e in errors:
            if e.end_point[0] - e.start_point[0] >= 5 and _CONDITIONAL_DIRECTIVE.search(
                    self.data, e.start_byte, e.end_byte):
                self.conditional_error_spans.append((e.start_byte, e.end_byte))
        error_lines = sorted({e.start_point[0] + 1 for e in errors})
        local_vars = self.visit_locals(found, calls)
        expanded = self.expand_macros()
        named = _first_in_bodies(self.data, self.bodies, expanded) if expanded else {}
        for macro, (macro_calls, kernels) in sorted(expanded.items()):
            # a launch or call inside a macro counts for each function whose body names the macro,
            # called or handed to a dispatch macro as an argument, at the line that names it
            for i, at in named.get(macro, ()):
                qual = self.bodies[i][2]
                launches.extend((qual, k, at) for k in kernels)
                calls.extend((qual, c, at) for c in macro_calls)
        if (b"<<<" in self.data or b"aunch" in self.data or self.launcher_words) and b"define" in self.data:
            launches.extend(self.launches_of_unvisited_macros())
        if b"##" in self.data or b"define" in self.data:
            # read from the text: uses without a `;` often make tree-sitter swallow the next `#define` into
            # an ERROR node, where it is no preproc_function_def, and it reads many multi-line bodies so too
            self.expand_defining_macros(calls, self.function_macros)
            self.read_member_macros(self.function_macros)
        if any(marker in self.data for marker in self.tvm_ffi.markers):
            # TVM FFI registrations stand at any level (a macro's chained call at namespace level, a
            # registry's chain in a static-init block): one query over the screened file
            self.pybind.extend(tvm_ffi_registrations(self.tree.root_node, self.language, self.tvm_ffi))
        if any(marker in self.data for marker in self.tvm_ffi_objects.markers):
            # a class's type key stands in its body, its registry's chain in a static-init block
            self.pybind.extend(tvm_ffi_object_registrations(self.tree.root_node, self.data, self.language,
                                                            self.tvm_ffi_objects))
        if any(marker in self.data for marker in self.paddle_ops.markers):
            # Paddle operators are chains at namespace level, as TVM FFI's macro chains are
            self.pybind.extend(paddle_op_registrations(self.tree.root_node, self.language, self.paddle_ops))
        if any(name.encode() in self.data for name in self.op_registries):
            # TorchScript's registry objects stand at namespace level, outside any block
            self.torch_ops.extend(registry_op_registrations(self.tree.root_node, self.language, self.op_registries,
                                                            self.op_registry_links))
        if torchclasses.MARKER in self.data:
            # TorchScript custom classes: read from the text, over the conditional groups they are written in
            self.pybind.extend(torchclasses.torch_class_registrations(self.data, self.tree.root_node,
                                                                      self.library_macros))
        if tfops.MARKER in self.data:
            # TensorFlow's kernel registrations: usually in a macro's body, read from the text
            self.pybind.extend(tfops.tensorflow_op_registrations(self.data, self.tree.root_node))
        self.torch_ops.sort(key=lambda e: (e.line, e.kind, e.op))
        self.pybind.sort(key=lambda e: (e.line, e.kind, e.name))
        return CppFacts(defs=tuple(self.defs), includes=tuple(self.includes), calls=group_calls(calls),
                        launches=group_calls(launches), torch_ops=tuple(self.torch_ops), pybind=tuple(self.pybind),
                        defines=tuple(attribute_macros(self.data)), attribute_aliases=attribute_aliases(self.data),
                        type_macros=type_macros(self.data), lambda_macros=lambda_macros(self.data),
                        assign_macros=assign_macros(self.data),
                        namespace_macros=tuple(namespace_macros(self.data).items()),
                        namespace_aliases=tuple(sorted(self.namespace_aliases,
                                                       key=lambda a: (a.line, a.scope, a.name))),
                        usings=tuple(sorted(self.usings, key=lambda u: (u.line, u.scope, u.target))),
                        macro_blocks=tuple(self.macro_blocks),
                        macro_bodies=tuple(self.macro_bodies),
                        unnamed_tests=tuple(self.unnamed_tests),
                        class_macro_uses=tuple(self.class_macro_uses),
                        class_macro_bodies=tuple(self.class_macro_bodies),
                        fields=tuple(self.fields), locals=tuple(sorted(local_vars, key=_local_order)),
                        type_aliases=tuple(self.type_aliases), globals=tuple(self.globals),
                        words=words,
                        registration_macros=tuple(self.registration_macros),
                        macro_uses=tuple(self.macro_uses),
                        member_macros=tuple(self.member_macros),
                        launcher_params=tuple(self.launcher_params), forwards=tuple(self.forwards),
                        kernel_args=tuple(self.kernel_args),
                        launcher_macros=tuple(sorted(self.own_launchers.items())),
                        truncated=self.truncated, errors=len(errors),
                        error_lines=tuple(error_lines[:_MAX_ERROR_LINES]))


# -- helpers -----------------------------------------------------------------------------------


def _first_in_bodies(data: bytes, bodies: list[tuple[int, int, str]], macros: Iterable[str],
                     span: tuple[int, int] | None = None) -> dict[str, list[tuple[int, int]]]:
    """Macro -> ``(body index, line)`` of each function body (``bodies``: sorted ``(start, end,
    qual)``, nested or apart) that names the macro as a word, at the line of its first use there,
    in body order; only the uses in ``data[span]`` when given, as if the rest were blanked. One pass
    over the file's words: a search per macro and body, and a count of the lines before each use
    from the file's start, took 16 of miniaudio.h's 17 CPU s (4 MB, 309 such macros, 3,050
    bodies, in llama.cpp's vendored code)."""
    wanted = {m.encode(): m for m in macros}
    uses: dict[str, list[int]] = {}
    for m in WORD_RUN.finditer(data, *(span or ())):
        macro = wanted.get(m.group())
        if macro is not None:
            uses.setdefault(macro, []).append(m.start())
    if not uses:
        return {}
    starts = [start for start, _end, _qual in bodies]
    parents: list[int] = []  # the body each one is nested in, -1 for none
    open_: list[int] = []
    for i, (start, end, _qual) in enumerate(bodies):
        while open_ and bodies[open_[-1]][1] <= start:
            open_.pop()
        parents.append(open_[-1] if open_ and bodies[open_[-1]][1] >= end else -1)
        open_.append(i)
    newlines = [m.start() for m in _NEWLINE.finditer(data)]
    out: dict[str, list[tuple[int, int]]] = {}
    for macro, positions in uses.items():
        first: dict[int, int] = {}  # body -> its first use (positions ascend)
        for position in positions:
            i = bisect.bisect_right(starts, position) - 1
            while i >= 0:  # the last body starting before the use, and those it is nested in
                if bodies[i][1] > position:
                    first.setdefault(i, position)
                i = parents[i]
        if first:
            out[macro] = [(i, bisect.bisect_left(newlines, first[i]) + 1) for i in sorted(first)]
    return out


def _string_before_macro(error) -> bool:
    """Whether an ERROR node is a string literal that a macro continues (``"%" PRIu64 "\\n"``,
    ``"not available" LOC_MARK``): the preprocessor joins them into one literal, the grammar takes
    only a literal first, and nothing is missing around it."""
    children = error.children
    if len(children) != 1:
        return False
    if children[0].type == "identifier":  # the macro, after the literal
        before = error.prev_sibling
        return before is not None and before.type in _LITERALS
    if children[0].type not in _LITERALS:
        return False
    after = error.next_sibling  # the literal, before the macro
    if after is not None and after.type == "concatenated_string" and after.children:
        after = after.children[0]
    return after is not None and after.type == "identifier"


_LITERALS = ("string_literal", "concatenated_string", "raw_string_literal")


def _unnamed_pointer_default(error) -> bool:
    """Whether an ERROR node is the `*` (or `&`) of an unnamed parameter with a default, `uint64_t* = nullptr`
    (RocksDB's virtual methods): the grammar reads such a parameter but not its declarator, and the
    parameter's type, read from its text, keeps the mark; nothing is missing."""
    parent = error.parent
    return parent is not None and parent.type == "optional_parameter_declaration" \
        and error.text.strip() != b"" and error.text.strip(b" \t\r\n*&") == b""


def _member_pointer_class(error) -> bool:
    """Whether an ERROR node is the class of a pointer to member in a declarator, ``void
    (Widget::*handler_)(int);`` as a class's member or a typedef (``typedef int (ns::S::*Getter)() const;``):
    the grammar reads it in a parameter only, and elsewhere makes an ERROR of ``Widget::`` and reads the
    rest, a pointer named ``handler_``, as it is; nothing is missing."""
    parent, after = error.parent, error.next_sibling
    if error.text.strip() in _MEMBER_FUNCTION_QUALIFIERS:
        # ... and the qualifier of the member function it points to (`() const`), after the declarator
        before = error.prev_sibling
        inner = before.child_by_field_name("declarator") if before is not None \
            and before.type == "function_declarator" else None
        first = inner.named_children[0] if inner is not None and inner.type == "parenthesized_declarator" \
            and inner.named_children else None
        return first is not None and first.type == "ERROR" and _member_pointer_class(first)
    return parent is not None and parent.type == "parenthesized_declarator" and after is not None \
        and after.type == "pointer_declarator" and _MEMBER_POINTER_CLASS.fullmatch(error.text) is not None


_MEMBER_FUNCTION_QUALIFIERS = frozenset({b"const", b"volatile", b"&", b"&&", b"noexcept", b"const &", b"const&"})


_SCOPE_NAME = rb"[A-Za-z_]\w*(?:\s*<[^;{}()]*>)?"  # `Widget`, `Table<K, V>`
_MEMBER_POINTER_CLASS = re.compile(rb"\s*(?:::)?\s*" + _SCOPE_NAME + rb"(?:\s*::\s*" + _SCOPE_NAME + rb")*\s*::\s*")


def _macro_arguments(data: bytes, open_paren: int) -> list[bytes] | None:
    """The arguments of a macro's use whose `(` is at ``open_paren``, split at top-level commas
    and stripped; None when its parentheses do not close (in 4 KB)."""
    depth, start, out = 0, open_paren + 1, []
    for i in range(open_paren, min(len(data), open_paren + 4096)):
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                out.append(data[start:i].strip())
                return out if out != [b""] else []
        elif c == 44 and depth == 1:  # ','
            out.append(data[start:i].strip())
            start = i + 1
    return None


LAUNCHERS_FILE = Path(__file__).with_name("launchers.yaml")
LAUNCHERS_SCHEMA = {"launchers": {str: int}}


@functools.cache
def kernel_launchers(path: Path = LAUNCHERS_FILE) -> dict[str, int]:
    """launchers.yaml: each host function that launches a kernel handed to it -> that argument's position."""
    return dict(load_data_file(path, LAUNCHERS_SCHEMA)["launchers"])


# what a launcher's kernel argument is written as, around the kernel's name: `&`, a cast to a pointer
# (`(void*)`, `(const void*)`, `reinterpret_cast<void*>(...)`), parentheses (`hipLaunchKernelGGL((k<T>), ...)`)
_LAUNCHED_CAST = re.compile(rb"^\(\s*(?:const\s+)?void\s*\*\s*\)|^(?:reinterpret|static)_cast\s*<[^<>()]*>")
_LAUNCHED_NAME = re.compile(rb"((?:\w+\s*::\s*)*\w+)\s*(?:<(?:[^;{}()]|\([^;{}()]*\))*>)?")


def _launched(data: bytes, body_start: int, fn: Any, position: int) -> list[str]:
    """The kernels a launcher's call (its callee ``fn``) launches: the one its argument at
    ``position`` names, or those the local it names holds (:func:`_held_kernels`); none when the
    argument is anything else (a call's result, a member, a `CUfunction` the driver loaded)."""
    call = fn.parent
    arguments = call.child_by_field_name("arguments") if call is not None else None
    args = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
    if position >= len(args):
        return []
    kernel = _kernel_argument(args[position].text)
    if kernel is None:
        return []
    return _held_kernels(data, body_start, fn.start_byte, kernel) if _WORD.fullmatch(kernel) else [kernel]


def _kernel_argument(written: bytes) -> str | None:
    """The kernel a launcher's argument names, its `&`, casts and parentheses taken off; None when it
    names none (a call's result, a member)."""
    written = written.strip()
    while True:
        before = written
        written = _LAUNCHED_CAST.sub(b"", written).strip().lstrip(b"&").strip()
        if written.startswith(b"(") and written.endswith(b")"):
            written = written[1:-1].strip()
        if written == before:
            break
    name = _LAUNCHED_NAME.fullmatch(written)
    return clean_name(name.group(1).decode()) if name is not None else None


def launcher_macros(defines: Iterable[re.Match[bytes]], launchers: Mapping[str, int]) -> dict[str, int]:
    """The file's launcher macros, name -> the position of their kernel argument: function-like macros
    that hand one of their parameters to a host launcher of ``launchers`` (launchers.yaml's, another
    launcher macro's) as its kernel, or launch it (`k<<<...>>>`): DeepEP's ``#define
    LAUNCH_KERNEL(config, kernel, ...) cudaLaunchKernelEx(config, kernel, ##__VA_ARGS__)``, and under
    ``#else`` ``kernel<<<__num_sms, __num_threads, 0, __stream>>>(__VA_ARGS__)``. A use of one
    (``LAUNCH_KERNEL(&cfg, notify_dispatch<ranks>, ...)``) launches the kernel it is handed, as a
    launcher's call does. A name defined with two positions is none. ``defines``: the file's
    function-like macros (``_FUNCTION_MACRO``'s matches)."""
    macros: list[tuple[str, tuple[str, ...], bytes, set[int]]] = []
    for m in defines:
        body = CONTINUATION.sub(b" ", m.group(3))
        params = macro_params(m)
        if any(p.encode() in body for p in params if p):
            # the parameters it launches with `<<<`: the same in every round, none without a `<<<`
            launches = (k.group(1).decode() for k in _MACRO_LAUNCH.finditer(body)) if b"<<<" in body else ()
            launched = {params.index(kernel) for kernel in launches if kernel in params}
            macros.append((m.group(1).decode(), params, body, launched))
    found: dict[str, int] = {}
    ambiguous: set[str] = set()
    known = dict(launchers)
    for _round in range(3):  # a launcher macro that uses another of the file's
        before = dict(found)
        for name, params, body, launched in macros:
            positions = {params.index(p) for p, _at in _handed_kernels(body, known) if p in params and p != "..."}
            positions.update(launched)
            if len(positions) > 1 or (name in found and positions and found[name] not in positions):
                ambiguous.add(name)
            elif positions:
                found[name] = positions.pop()
        found = {n: at for n, at in found.items() if n not in ambiguous}
        known = {**launchers, **found}
        if found == before:
            break
    return found


def _handed_kernels(body: bytes, launchers: Mapping[str, int]) -> list[tuple[str, int]]:
    """What each call of a launcher in a macro's body hands it as the kernel, as written, with the
    call's offset."""
    handed: list[tuple[str, int]] = []
    for name, position in launchers.items():
        if name.encode() not in body:
            continue
        for m in _launcher_call(name).finditer(body):
            end = _closing_paren(body, m.end() - 1, len(body))
            args = split_top_level(body[m.end():end - 1].decode(errors="replace")) if end > 0 else []
            kernel = _kernel_argument(args[position].encode()) if position < len(args) else None
            if kernel is not None:
                handed.append((kernel, m.start()))
    return handed


def macro_launcher_kernels(body: bytes, launchers: Mapping[str, int], params: Iterable[str] = ()) -> list[str]:
    """The kernels a macro's replacement text hands to a host launcher (vLLM's quick all-reduce:
    ``hipLaunchKernelGGL((allreduce_prototype_twoshot<Kernel, T>), grid, ...)``; apex's peer memory:
    ``cudaLaunchCooperativeKernel((void*)push_pull_halos_1d_kernel<T, ...>, ...)``), or through a local
    the text declares (``auto fwd_func = k<T, ...>; cudaLaunchKernel<F>(fwd_func, ...)``). A kernel
    named by a parameter of the macro is its argument's, which is not read: left out."""
    found: set[str] = set()
    for kernel, at in _handed_kernels(body, launchers):
        held = _held_kernels(body, 0, at, kernel) if _WORD.fullmatch(kernel) else [kernel]
        found.update(k for k in held if k not in params)
    return sorted(found)


def _macro_params(define: bytes) -> tuple[str, ...]:
    """The parameters of the macro a `#define` defines (none for an object-like one)."""
    m = re.match(rb"\s*#\s*define\s+\w+\(([^)\n]*)\)", define)
    return tuple(p.strip() for p in m.group(1).decode(errors="replace").split(",")) if m else ()


@functools.lru_cache(maxsize=64)
def _launcher_call(name: str) -> re.Pattern[bytes]:
    """A call of the launcher ``name`` (as written, its namespace too), template arguments allowed."""
    return re.compile(rb"(?<![\w:])" + re.escape(name.encode()) + rb"\s*(?:<[^;{}()]*>\s*)?\(")


def _cuda_qualifiers(data: bytes, start: int, end: int, metal: bool = False) -> set[str]:
    """The CUDA qualifiers written between ``start`` and ``end``: `global`, `device`, `host`; in a
    Metal file, its kernel qualifier (`kernel void f(...)`, `[[kernel]] void f(...)`) is `global`."""
    found = {(m.group(1) or b"global").decode() for m in _CUDA_QUALIFIER.finditer(data, start, end)}
    if metal and _METAL_KERNEL.search(data, start, end):
        found.add("global")
    return found


def _held_kernels(data: bytes, body_start: int, launch: int, name: str) -> list[str]:
    """The kernels a launch through a local variable may run, when the last declaration ``auto name
    =`` of the body before the launch at ``launch`` gives it one by name, ``&kernel<...>;`` or
    ``kernel;`` (``const auto``, ``auto*`` too; flash-attention's ``auto kernel =
    &flash_fwd_kernel<Kernel_traits, ...>;`` then ``kernel<<<grid, threads, smem, stream>>>(params)``),
    or either of two by a condition (``auto kernel = prefill ? &k1<T> : &k2<T>;``), with those
    assigned to it after (``if (bit == 8) { kernel = gemm_8bit_kernel; }``), or an entry of a table of
    kernels the body declares before (``FuncPtr func_map[2] = {&k<T, false>, &k<T, true>}; auto* const
    kernel = func_map[check];``: every kernel of the table); ``[name]`` itself when there is no
    declaration, or when it holds anything else (a call's result: ``auto kernel =
    get_marlin_kernel<T>(...)``)."""
    if data.find(name.encode(), body_start, launch) < 0:
        # every declaration read below (`auto name =`, `(*name)(`) writes the name before the launch; a launch
        # of a kernel by its own name (most of them) has none
        return [name]
    found = None
    for m in _held_pattern(name).finditer(data, body_start, launch):
        if not _commented(data, m.start()):
            found = m
    if found is None:
        return _pointer_kernels(data, body_start, launch, name)
    held = _HELD_KERNEL.match(data, found.end(), launch)
    either = _HELD_EITHER_KERNEL.match(data, found.end(), launch) if held is None else None
    if held is None and either is None:
        entry = _TABLE_ENTRY.match(data, found.end(), launch)
        table = _kernel_table(data, body_start, found.start(), entry.group(1).decode()) if entry else None
        if table is None and (picked := _HELD_CALL.match(data, found.end(), launch)) is not None:
            table = _picked_kernels(data, picked.group(1).decode())
        return table or [name]
    kernels = [clean_name(m.group(1).decode()) for m in (held,) if m is not None]
    kernels += [clean_name(either.group(g).decode()) for g in (1, 2)] if either is not None else []
    for m in _assigned_pattern(name).finditer(data, found.end(), launch):
        again = _HELD_KERNEL.match(data, m.end(), launch)
        if again is not None and not _commented(data, m.start()):
            kernels.append(clean_name(again.group(1).decode()))
    return sorted(set(kernels))


def _picked_kernels(data: bytes, picker: str) -> list[str] | None:
    """The kernels the function ``picker`` returns, when the file defines it and each of its returns
    names a kernel (``return q4_matmul_kernel<true, false, true>;``) or none (``return NULL;``):
    exllama's and vLLM's GPTQ launchers pick the kernel so (``fp_q4_matmul_kernel kernel =
    q4_matmul_kernel_pick(...)`` then ``kernel<<<...>>>(...)``); None when it is defined elsewhere, or
    returns anything else."""
    for m in _definition_pattern(picker).finditer(data):
        if _commented(data, m.start()):
            continue
        end = _closing_brace(data, m.end() - 1)
        kernels = set()
        for returned in _RETURN.finditer(data, m.end(), end):
            if _commented(data, returned.start()):
                continue
            named = _HELD_KERNEL.match(data, returned.end(), end)
            if named is None:
                return None
            kernel = clean_name(named.group(1).decode())
            if kernel not in _NO_KERNEL:
                kernels.add(kernel)
        return sorted(kernels) or None
    return None


def _closing_brace(data: bytes, opening: int) -> int:
    """The offset of the brace that closes the one at ``opening`` (the end of ``data`` when none does)."""
    depth = 0
    for m in _BRACE.finditer(data, opening):
        depth += 1 if m.group(0) == b"{" else -1
        if depth == 0:
            return m.start()
    return len(data)


def _pointer_kernels(data: bytes, body_start: int, launch: int, name: str) -> list[str]:
    """The kernels a function pointer the body declares (``void (*kernel)(const T*, int);``, or with
    ``= &k<T>`` after it) holds before the launch at ``launch``: its initializer's and those assigned
    to it after (apex's transducer: ``kernel = &joint_tiled_forward<scalar_t, 4, 4, 4, true>;`` in each
    branch of an if-else); ``[name]`` when there is no such declaration or nothing so named is given to it."""
    found = None
    for m in _pointer_pattern(name).finditer(data, body_start, launch):
        if not _commented(data, m.start()):
            found = m
    if found is None:
        return [name]
    end = _closing_paren(data, found.end() - 1, launch)  # past the parameter list
    if end < 0:
        return [name]
    kernels = []
    initializer = re.compile(rb"\s*=(?!=)").match(data, end, launch)
    held = _HELD_KERNEL.match(data, initializer.end(), launch) if initializer is not None else None
    if held is not None and held.group(1) not in (b"nullptr", b"NULL"):  # `= nullptr;` holds none yet
        kernels.append(clean_name(held.group(1).decode()))
    for m in _assigned_pattern(name).finditer(data, end, launch):
        again = _HELD_KERNEL.match(data, m.end(), launch)
        if again is not None and not _commented(data, m.start()):
            kernels.append(clean_name(again.group(1).decode()))
    return sorted(set(kernels)) or [name]


def _closing_paren(data: bytes, at: int, end: int) -> int:
    """The position after the `)` that closes the `(` at ``at``, before ``end``; -1 when there is none."""
    depth = 0
    for i in range(at, end):
        c = data[i]
        if c == 0x28:  # (
            depth += 1
        elif c == 0x29:  # )
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


@functools.lru_cache(maxsize=64)
def _pointer_pattern(name: str) -> re.Pattern[bytes]:
    """``(*name)(``: the declarator of the function pointer ``name``, up to its parameter list."""
    return re.compile(rb"\(\s*\*\s*" + re.escape(name.encode()) + rb"\s*\)\s*\(")


def _kernel_table(data: bytes, body_start: int, end: int, table: str) -> list[str] | None:
    """The kernels of the array ``table`` when the last declaration of it in ``data[body_start:end]``
    is initialised by a brace list of kernels named (``T table[2][2] = {{&k<T, 0>, &k<T, 1>}, {...}};``);
    None when there is none, or when an entry is anything else."""
    found = None
    for m in _table_pattern(table).finditer(data, body_start, end):
        if not _commented(data, m.start()):
            found = m
    if found is None:
        return None
    close = data.find(b";", found.end(), end)
    if close < 0:
        return None
    entries = data[found.end():close].replace(b"{", b"").replace(b"}", b"")
    kernels = set()
    for item in _split_top_level(entries):
        if not item.strip():
            continue  # a trailing comma
        named = _TABLE_KERNEL.fullmatch(item)
        if named is None:
            return None
        kernels.add(clean_name(named.group(1).decode()))
    return sorted(kernels) or None


def _split_top_level(text: bytes) -> list[bytes]:
    """``text`` split at the commas outside template arguments (`<...>`)."""
    items, depth, start = [], 0, 0
    for i, byte in enumerate(text):
        if byte == 0x3C:  # <
            depth += 1
        elif byte == 0x3E:  # >
            depth -= 1
        elif byte == 0x2C and depth == 0:  # ,
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def _commented(data: bytes, at: int) -> bool:
    """Whether a `//` comment runs over ``at`` (a commented-out line)."""
    return b"//" in data[data.rfind(b"\n", 0, at) + 1:at]


# what a local holds when it is a kernel named (its address taken or not; template arguments, which may
# hold one level of parentheses, `decltype(params)` or `sizeof(T)` (FlashMLA's `auto kernel =
# &sparse_attn_fwd_kernel<D == 576, decltype(tma_params)>;`), and are followed by the `;`, not a call's `(`)
_KERNEL_NAMED = rb"\s*&?\s*((?:\w+\s*::\s*)*\w+)\s*(?:<(?:[^;{}()]|\([^;{}()]*\))*>\s*)?"
_HELD_KERNEL = re.compile(_KERNEL_NAMED + rb";")
# ... or one of two so named, by a condition (FlashMLA's `auto kernel = IS_PREFILL ? &prefill_kernel<K> :
# &decode_kernel<K>;`)
_HELD_NAME = rb"\s*&?\s*((?:\w+\s*::\s*)*\w+)\s*(?:<(?:[^;{}()?:]|::|\([^;{}()]*\))*>\s*)?"
_HELD_EITHER_KERNEL = re.compile(rb"[^;{}?]*\?" + _HELD_NAME + rb":" + _HELD_NAME + rb";")
# ... or what a function returns: `kernel = pick_kernel(true, m_count);` (the function a name, not a member's)
_HELD_CALL = re.compile(rb"\s*((?:\w+\s*::\s*)*\w+)\s*(?:<[^;{}()<>]*>\s*)?\((?:[^;{}()]|\([^;{}()]*\))*\)\s*;")
_RETURN = re.compile(rb"\breturn\b")
_BRACE = re.compile(rb"[{}]")
_NO_KERNEL = frozenset({"NULL", "nullptr", "0"})
# a table's entry: `table[i][j];` (the table a local name)
_TABLE_ENTRY = re.compile(rb"\s*(\w+)\s*(?:\[[^\]\n;]*\]\s*)+;")
# a kernel named in a table's brace list
_TABLE_KERNEL = re.compile(_KERNEL_NAMED)


@functools.lru_cache(maxsize=64)
def _assigned_pattern(name: str) -> re.Pattern[bytes]:
    """``name =`` at a statement's start: the local ``name`` given another value."""
    return re.compile(rb"(?:^|[;{}])\s*" + re.escape(name.encode()) + rb"\s*=(?!=)", re.M)


@functools.lru_cache(maxsize=64)
def _held_pattern(name: str) -> re.Pattern[bytes]:
    """``auto name =`` (``const auto``, ``auto*``, ``auto* const``), or a type named (a function
    pointer's typedef: ``fp_kernel name =``): a declaration of the local ``name``."""
    return re.compile(rb"\b(?:const\s+)?(?!(?:else|return|case|do|goto|const)\b)[A-Za-z_]\w*\s*\*?\s*(?:const\s+)?"
                      + re.escape(name.encode()) + rb"\s*=(?!=)")


@functools.lru_cache(maxsize=64)
def _definition_pattern(name: str) -> re.Pattern[bytes]:
    """``name(...) {``: the definition of the function ``name`` (its parameters without a body)."""
    return re.compile(rb"(?<![\w.>:])" + re.escape(name.encode()) + rb"\s*\([^;{}]*\)\s*(?:const\s*)?\{")


@functools.lru_cache(maxsize=64)
def _table_pattern(name: str) -> re.Pattern[bytes]:
    """``name[...]... = {``: the array ``name`` declared with a brace list."""
    return re.compile(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\s*(?:\[[^\]\n;]*\]\s*)+=?\s*\{")


def _substitute(body: bytes, params: tuple[str, ...], args: list[bytes]) -> bytes:
    """A macro's body with its parameters replaced by a use's arguments and `##` pasted (the
    arguments are not macro-expanded themselves, and `#x` is left as written)."""
    values = {p.encode(): a for p, a in zip(params, args)}
    replaced = re.sub(rb"\b\w+\b", lambda w: values.get(w.group(0), w.group(0)), body)
    return re.sub(rb"[ \t]*##[ \t]*", b"", replaced)


def _is_call(body: bytes, start: int) -> bool:
    """Whether the name at ``start`` is called rather than declared: ``dim3 grid(n)`` declares
    ``grid``; ``return f(x)`` and ``; f(x)`` call ``f``."""
    before = body[:start].rstrip()
    if not before or not (before[-1:].isalnum() or before[-1:] == b"_"):
        return True
    word = re.search(rb"\w+$", before)
    return word is not None and word.group(0) in _BEFORE_A_CALL

def _template_type_names(node: Any) -> tuple[str, ...]:
    """The names of the type parameters of a template declaration (`T`, `Ts` of `template <typename T,
    int N, typename... Ts>`)."""
    params = node.child_by_field_name("parameters")
    names = []
    for p in params.named_children if params is not None else ():
        if p.type not in _TYPE_PARAMETERS:
            continue
        name = p.child_by_field_name("name")
        if name is None:  # `typename T`, `typename... Ts`, `template <class> class TT`: the last identifier
            name = next((c for c in reversed(p.named_children) if c.type == "type_identifier"), None)
            if name is None and p.type == "template_template_parameter_declaration":
                inner = next((c for c in reversed(p.named_children) if c.type in _TYPE_PARAMETERS), None)
                name = next((c for c in reversed(inner.named_children) if c.type == "type_identifier"), None) \
                    if inner is not None else None
        if name is not None:
            names.append(text(name))
    return tuple(names)


def _local_order(local: Local) -> tuple[str, int, str, int, str, str]:
    return local.caller, local.line, local.name, local.end, local.type, local.init


def _join(scope: tuple[tuple[str, str], ...]) -> str:
    return "::".join([n for n, _ in scope])


def _in_class(scope: tuple[tuple[str, str], ...]) -> bool:
    return bool(scope) and scope[-1][1] in ("class", "struct", "union")


def _is_macro_in_class(written: str, scope: Scope) -> bool:
    """Whether a member of the class ``scope`` written without a return type, ``written(...)``, is
    a macro's use. Only a constructor (the class's own name), a destructor (`~X`) and a conversion
    function (`operator T`) are written so in C++, so any other name is a macro's use or a misreading;
    those written as macros are taken for uses. In Triton r25.08 and vLLM 0.10.2 that is every such
    member but one: tree-sitter's misreading of a `for` in one of vLLM's CUDA class templates."""
    return _in_class(scope) and MACRO_NAME.fullmatch(written) is not None and written != scope[-1][0]


def _function_declarator(node: Any) -> Any:
    """The declarator of the function ``node`` declares; None when it declares none (a variable, and a
    pointer to a function, see :func:`_declared_function`)."""
    while node is not None:
        if node.type == "function_declarator":
            return _declared_function(node)
        if node.type in _DECLARATOR_WRAPPERS:
            node = node.child_by_field_name("declarator") or (
                node.named_children[-1] if node.named_child_count else None)
        elif node.type == "qualified_identifier":
            # `Error* f(...)` mis-split as `Error::*f` when a macro was left: follow the name
            node = node.child_by_field_name("name")
        elif node.type == "operator_cast":
            return _conversion_declarator(node)
        else:
            return None
    return None


def _conversion_declarator(cast: Any) -> Any:
    """The declarator of a conversion function's parameters and qualifiers: `operator T*() const` is an
    operator_cast whose declarator is the pointer to an abstract function declarator, `()` and `const`."""
    node = cast.child_by_field_name("declarator")
    while node is not None and node.type != "abstract_function_declarator":
        node = node.child_by_field_name("declarator")
    return node


class _ConversionName(NamedTuple):
    """What names a conversion function: `operator T*`, `S::operator bool` (the name as written, without
    the parameters and qualifiers the grammar reads inside it), where it starts."""

    text: bytes
    start_point: tuple[int, int]


def _conversion_name(fdecl: Any) -> _ConversionName | None:
    """The name of the conversion function whose declarator is ``fdecl`` (:func:`_conversion_declarator`),
    with the scopes written before it; None when ``fdecl`` is no such declarator."""
    cast = conversion_cast(fdecl)
    if cast is None:
        return None
    if b"::" in cast.text[:fdecl.start_byte - cast.start_byte]:
        return None  # `operator std::string()`: a name of which every `::` is not a scope's; not recorded
    named = cast
    while named.parent is not None and named.parent.type == "qualified_identifier" \
            and named.parent.child_by_field_name("name") == named:
        named = named.parent
    return _ConversionName(named.text[:fdecl.start_byte - named.start_byte].rstrip(), named.start_point)


def _declared_function(fdecl: Any) -> Any:
    """``fdecl``, unless the name it declares is in parentheses with a pointer or a reference: `R (*f)(args);`
    (and `R (C::*f)(args)`, `R (&f)(args)`, `R (*f[4])(args)`) declares a variable or a data member that
    points to a function, which is no function (Triton's `CUresult (*cu_init_fn_)(unsigned int);`, a
    driver entry point found by dlsym); `R (*f(params))(args)` declares the function f, which returns such
    a pointer: f's declarator. Parentheses alone leave a function: `int (isalpha)(int);`."""
    node = fdecl.child_by_field_name("declarator")
    if node is None or node.type != "parenthesized_declarator":
        return fdecl
    points = False
    while node is not None:
        if node.type == "function_declarator":
            return _declared_function(node)
        if node.type not in _DECLARATOR_WRAPPERS and node.type != "array_declarator":
            break
        points = points or node.type not in ("parenthesized_declarator", "attributed_declarator")
        node = node.child_by_field_name("declarator") or (node.named_children[-1] if node.named_child_count else None)
    return None if points else fdecl


def _function_name(fdecl: Any) -> Any:
    """What names the function ``fdecl`` declares, out of any parentheses around it (`(isalpha)`, and
    `result_type (max)()`, which the grammar misreads: :func:`extractor.cpp.signature.parenthesized_name`),
    and past a macro before the name that the grammar joined to it."""
    if fdecl.type == "abstract_function_declarator":  # a conversion function's (_conversion_declarator)
        return _conversion_name(fdecl)
    misread = parenthesized_name(fdecl)
    if misread is not None:
        return misread[1]
    joined = invented_scope(fdecl)  # `void JEMALLOC_NOTHROW f(...)`, the macro unknown to the file
    if joined is not None:
        return joined[1]
    node = fdecl.child_by_field_name("declarator")
    while node is not None and node.type == "parenthesized_declarator" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _signature(fdecl: Any) -> str:
    params = fdecl.child_by_field_name("parameters")
    if params is None:
        return ""
    written = text(params)
    sig = SPACES.sub(" ", _COMMENT.sub(" ", written) if "/" in written else written)
    return sig if len(sig) <= 200 else sig[:197] + "..."


def _leading_comment(node: Any) -> str:
    return leading_comment(node, text, "/*!<")


def _access_tags(access: str) -> list[str]:
    return [access] if access in ("private", "protected") else []


def _storage_tags(node: Any, data: bytes) -> list[str]:
    """`static` when the definition says so (internal linkage for a free function)."""
    if data.find(b"static", node.start_byte, node.end_byte) < 0:
        return []  # most definitions: no need to make a node of each child to look
    return ["static"] if any(c.type == "storage_class_specifier" and c.text == b"static"
                             for c in node.children) else []
