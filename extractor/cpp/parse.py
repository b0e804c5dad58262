"""The one place that imports tree_sitter and its grammar wheels.

py-tree-sitter changed its query API in 0.25 and again in 0.26; it is pinned in pyproject.toml
and used only here, so an upgrade touches one module.

Macros are the real obstacle to a preprocessor-free parse: `EXPORT Error* f(...)` with
`#define EXPORT __attribute__((visibility("default")))` parses as a declaration of something else,
and no ERROR node says so. :func:`parse_source` therefore overwrites such tokens with spaces before
parsing (see macros.yaml); byte offsets and line numbers are unchanged, so every position read from
the tree is a position in the original file.
"""

from __future__ import annotations

import array
import bisect
import functools
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, AnyStr

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda

from extractor.cpp.testmacros import load_test_macros
from extractor.support.datafile import load_data_file
from extractor.support.linestart import at_line_starts, matches_at_line_starts, sub_lines
from extractor.model import Language
from extractor.native.grammar import in_document_order
from extractor.native.macros import arguments

MACROS_FILE = Path(__file__).with_name("macros.yaml")
# Every key is a list of macro names; a missing key is an empty list (a user's copy may drop one).
MACROS_SCHEMA = {f"{key}?": [str] for key in (
    "blank", "blank_cpp_only", "blank_call", "kernel_qualifier", "condition", "torch_library", "torch_library_impl",
    "pybind_module",
    "nanobind_module", "tvm_ffi_global", "tvm_ffi_global_def", "tvm_ffi_body", "tvm_ffi_def", "tvm_ffi_init_block",
    "tvm_ffi_export",
    "paddle_op", "paddle_op_kernel_setter", "paddle_op_kernel", "paddle_op_module", "torch_op_name_wrapper",
    "torch_op_registry", "torch_op_registry_op", "tvm_ffi_object_info", "tvm_ffi_object_def",
    "tvm_ffi_object_static", "tvm_ffi_object_link", "mock_method", "mock_method_n", "mock_const_method_n")}


@functools.cache
def macro_config(path: Path = MACROS_FILE) -> dict[str, tuple[str, ...]]:
    """macros.yaml as tuples (blank, blank_cpp_only, blank_call, registration macro names)."""
    raw = load_data_file(path, MACROS_SCHEMA)
    return {key.rstrip("?"): tuple(raw.get(key.rstrip("?")) or ()) for key in MACROS_SCHEMA}


@functools.cache
def _language(language: Language) -> tree_sitter.Language:
    grammar = tree_sitter_cuda.language() if language is Language.CUDA else tree_sitter_cpp.language()
    return tree_sitter.Language(grammar)


@functools.cache
def _parser(language: Language) -> tree_sitter.Parser:
    return tree_sitter.Parser(_language(language))


# a kernel launch, `kernel<<<grid, block>>>(` (`<<<` alone is also a merge conflict's marker)
_LAUNCH_SYNTAX = re.compile(rb"<<<[^;]*?>>>\s*\(")


def grammar_language(data: bytes, language: Language) -> Language:
    """The grammar a C/C++/CUDA file is read with: CUDA's for a C/C++ file that launches a kernel,
    its own otherwise. A `.h`, `.hpp` or `.cpp` only nvcc compiles may launch kernels
    (flash-attention's launch templates, CUTLASS's device adapters in vLLM), and the C++ grammar
    reads each launch as an ERROR node: the launch was lost, silently. The file keeps its language
    (its records say ``cpp``); its parse and the queries over its tree follow the grammar. Only such
    files switch: the CUDA grammar extends an older C++ grammar, which reads a few ambiguous
    declarations otherwise (`T x(a, f())` as a variable initialised by a call, not a function)."""
    if language is Language.CPP and b"<<<" in data and _LAUNCH_SYNTAX.search(data):
        return Language.CUDA
    return language


def parse_source(data: bytes, language: Language, blank: Iterable[str] = (),
                 namespaces: dict[str, str] | None = None,
                 types: Mapping[str, tuple[str, str]] | None = None,
                 lambdas: Iterable[str] = (),
                 assigns: Mapping[str, tuple[int, int, int]] | None = None) -> tree_sitter.Tree:
    """Parse C/C++ (``Language.CPP``) or CUDA (``Language.CUDA``) bytes into a syntax tree.

    Before parsing, a ``/* */`` comment on a continued line of a directive is blanked
    (:func:`blank_continued_comments`), attribute-like macros are blanked: those of macros.yaml, those the file itself
    defines with an empty or attribute-only body, and ``blank`` (macros its includes define, found
    by the graph step in a second pass); the macros that open and close namespaces (the file's
    own and ``namespaces``, its includes') are written as the namespaces they open
    (:func:`rewrite_namespace_macros`); and the uses of macros that name a type by pasting (the
    file's own and ``types``, its includes') as the name they paste (:func:`write_type_macros`); and the
    uses of macros that open a lambda (the file's own and ``lambdas``, its includes') as the lambda
    (:func:`write_lambda_macros`), and of macros that assign an argument (the file's own and ``assigns``)
    as the assignment (:func:`write_assign_macros`). Code no configuration compiles (``#if 0``) is
    blanked first (:func:`blank_disabled_groups`), its macros' definitions with it.
    """
    data = blank_disabled_groups(data)
    configured, calls = _configured_blanks(language)
    # a function-like macro of an include's that this file also defines as a function: neither (the
    # file's own are judged so by attribute_macros)
    own = frozenset(attribute_macros(data)).union(
        n for n in blank if macro_word(n) == n or n.endswith(_KEYWORD_SUFFIXES)  # (`NAME (e) {`: a catch's head)
        or not defines_function(data, macro_word(n).encode()))
    wrappers = frozenset(macro_word(n) for n in own if n.endswith(DECLARATION_WRAPPER))
    headers = frozenset(macro_word(n) for n in own if n.endswith(TEMPLATE_HEADER))
    keywords = {word: n[len(word) + 1:-1] for n in own if n.endswith(_KEYWORD_SUFFIXES) and (word := macro_word(n))}
    own_calls = frozenset(n[:-1] for n in own if n.endswith("(")) - calls  # a call: its arguments too
    own = frozenset(n for n in own if macro_word(n) == n) - configured - calls
    blanked = blank_macros(blank_continued_comments(data), configured, calls, own, own_calls)
    if wrappers:
        blanked = unwrap_declarations(blanked, wrappers)
    if headers:
        blanked = write_template_headers(blanked, headers)
    if keywords:
        blanked = write_keyword_macros(blanked, keywords)
    blanked = write_mock_methods(blanked)
    blanked = blank_specifier_macros(blanked, (*(namespaces or ()), *(types or ()), *lambdas, *(assigns or ())))
    blanked = write_parameter_macros(blanked)
    macros = file_namespace_macros(data, namespaces)
    if macros:
        blanked = rewrite_namespace_macros(blanked, macros)[0]
    pasting = {**(types or {}), **{name: (before, after) for name, before, after in type_macros(data)}}
    if pasting:
        blanked = write_type_macros(blanked, pasting)
    opening = (*lambdas, *lambda_macros(data))
    if opening:
        blanked = write_lambda_macros(blanked, opening)
    assigning = {**(assigns or {}), **{name: (params, target, value)
                                        for name, params, target, value in assign_macros(data)}}
    if assigning:
        blanked = write_assign_macros(blanked, assigning)
    blanked = keep_first_of_opening_branches(join_conditional_blocks(blank_lambda_qualifiers(blanked)))
    if is_metal(data):
        blanked = blank_metal_qualifiers(blanked)
    blanked = write_vector_types(blanked)
    rewritten = drop_operator_call_template_arguments(parenthesize_conditions(name_included_headers(blanked)))
    return _parser(language).parse(drop_extern_of_templates(drop_unread_typename(spell_conditions(rewritten))))


# Metal Shading Language (Apple's GPU kernels: `.metal` files and the headers they include) is C++14 with
# address spaces, function qualifiers and attributes. A file is Metal when it includes Metal's standard
# library or writes what only Metal does (an attribute of a kernel's parameter, a `threadgroup` variable);
# `metal::` alone is no sign: host code calls its own `metal::device(...)`.
_METAL = re.compile(rb"#\s*include\s*<metal_\w+>|using\s+namespace\s+metal\s*;|\[\[\s*(?:kernel\s*\]\]|"
                    rb"(?:buffer|texture|sampler|threadgroup|host_name)\s*\(|"
                    rb"\w*(?:thread|simdgroup|quadgroup|grid)\w*\s*\]\])|(?<![\w:.])threadgroup\s+[A-Za-z_]")
# its address spaces and function qualifiers, where they qualify what follows (a type, a declarator) or,
# after a member function's parameters, the object (`) const thread {`): blanked, the rest parses as C++
# (`device const T* a [[buffer(0)]]` -> `       const T* a [[buffer(0)]]`)
_METAL_QUALIFIER = re.compile(rb"(?<![\w:.\[])(?:device|constant|threadgroup|thread|threadgroup_imageblock|ray_data|"
                              rb"object_data|kernel|vertex|fragment|visible|mesh|object)"
                              rb"(?=[ \t\r\n]+[A-Za-z_:]|\s*[{;])")


@functools.lru_cache(maxsize=2)  # parse_source and the scanner both ask, for the same bytes
def is_metal(data: bytes) -> bool:
    """Whether ``data`` is Metal Shading Language (``_METAL``)."""
    return (b"metal" in data or b"[[" in data or b"threadgroup" in data) and _METAL.search(data) is not None


def blank_metal_qualifiers(data: bytes) -> bytes:
    """``data`` (Metal) with its address spaces and function qualifiers written as spaces: byte
    offsets and lines stay the same, and the scan tells a kernel by the original bytes
    (extractor.cpp.scan)."""
    return _METAL_QUALIFIER.sub(lambda m: b" " * len(m.group(0)), data)


# a directive's physical line that a backslash continues (the directive's own `#...` line included)
_CONTINUED_LINE = re.compile(rb"#(?:[^\n]*\\\r?\n)+")
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/")


def blank_continued_comments(data: bytes) -> bytes:
    """``data`` with each ``/* ... */`` on a line of a directive that a backslash continues written
    as spaces: tree-sitter ends a macro's body at such a comment and reads the lines after it as
    code (nlohmann's ``#define NLOHMANN_JSON_NAMESPACE_END }  /* namespace ... */``, continued, left a stray
    ``}`` and an ERROR node behind). The preprocessor reads such a comment as one space; byte offsets
    and lines stay the same."""
    if b"/*" not in data or b"\\" not in data:
        return data
    parts: list[bytes] = []
    kept = 0
    for m in matches_at_line_starts(_CONTINUED_LINE, data):
        lines = m.group(0)
        if b"/*" not in lines:
            continue
        blanked = _BLOCK_COMMENT.sub(lambda c: b" " * len(c.group(0)), lines)
        if blanked != lines:
            parts += (data[kept:m.start()], blanked)
            kept = m.end()
    if not parts:
        return data
    parts.append(data[kept:])
    return b"".join(parts)


# an extended lambda's execution space (`[=] __device__ (T& dst) {...}`, `[v]__host__ __device__(int i) {`),
# its `]` matched too: a pattern that begins with a literal is searched for fast, one that begins with a
# lookbehind (`(?<=\])`) is tried at every byte
_LAMBDA_QUALIFIERS = re.compile(rb"\](\s*)((?:__host__|__device__)(?:\s+(?:__host__|__device__))*)(?=\s*[({])")


def blank_lambda_qualifiers(data: bytes) -> bytes:
    """``data`` with the execution space of each extended lambda (nvcc's ``--extended-lambda``:
    ``[=] __device__ (fp8_type& dst, const T& src) {...}``, vLLM's fp8 quantization kernels,
    ThunderKittens' ``apply(dst, src, [val]__device__(int row, int col, auto& v) {...})``) written
    as spaces: the CUDA grammar knows no qualifier there, and read the lambda, and often the call
    that takes it, as ERROR nodes. Bytes and lines stay in place."""
    if b"__device__" not in data and b"__host__" not in data:
        return data
    return _LAMBDA_QUALIFIERS.sub(lambda m: b"]" + m.group(1) + blank_span(m.group(2)), data)


# The vector types of POWER's AltiVec/VSX and IBM Z's vector extension: `vector float`, `__vector unsigned
# char`, `vector bool int`: a context-sensitive keyword before the element type's words (`__vector` before
# any type's name)
_VECTOR_WORDS = rb"(?:__bool|bool|signed|unsigned|char|short|int|long|float|double|__pixel|pixel)\b"
_VECTOR_TYPE = re.compile(rb"\b(?:__vector|vector)(?:[ \t]+" + _VECTOR_WORDS + rb")+|\b__vector[ \t]+[A-Za-z_]\w*")
_BLANKS = re.compile(rb"[ \t]+")


def write_vector_types(data: bytes) -> bytes:
    """``data`` with each vector type of POWER's AltiVec/VSX and IBM Z's vector extension written as one
    name of as many bytes, its blanks underscores: ``vector float srcv[8];`` as ``vector_float srcv[8];``,
    ``__vector signed short`` as ``__vector_signed_short``. The grammar knows neither keyword: each
    declaration was an ERROR node (ggml's POWER9 quantization branch: 779 in one file; vLLM's VSX and
    s390x CPU types: 127), or a parameter named after its element type (``FP32Vec4(__vector float data)``:
    a ``float`` of type ``__vector``). Bytes and lines stay in place."""
    if b"vector" not in data:
        return data
    return _VECTOR_TYPE.sub(lambda m: _BLANKS.sub(lambda b: b"_" * len(b.group(0)), m.group(0)), data)


# a conditional group with no other directive inside: `#if...` line, body lines, `#endif` line (found at
# line starts, extractor.support.linestart: the engine tries a pattern that begins `^[ \t]*#` at every byte)
_LONE_GROUP = re.compile(rb"#[ \t]*if(?:n?def)?\b([^\n\\]*)\n((?:(?![ \t]*#)[^\n]*\n)*?)"
                         rb"[ \t]*#[ \t]*endif\b[^\n\\]*$", re.M)
_GROUP_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_BLOCK_OPENING = re.compile(
    rb"\s*(?:(?:inline\s+)?namespace(?:\s+[A-Za-z_][\w:\s]*?)?|(extern)\s*\"C(?:\+\+)?\")\s*\{\s*")
_BLOCK_CLOSING = re.compile(rb"\s*\}\s*;?\s*")
_ELSE_FIRST = re.compile(rb"\s*else\b")
_Group = tuple[int, re.Match[bytes]]  # a conditional group's line start, its match (from the `#`)


def join_conditional_blocks(data: bytes) -> bytes:
    """``data`` with the directives blanked around a namespace block that one conditional group
    opens and a later group of the same condition closes, as the preprocessor reads it when the
    condition holds (nlohmann's ``#ifndef JSON_HAS_CPP_17`` / ``namespace {`` / ``#endif`` ...
    ``#ifndef JSON_HAS_CPP_17`` / ``}`` / ``#endif``). tree-sitter reads each group
    as a whole and recovers from the lone brace as it can: in nlohmann's json.hpp the anonymous
    namespace took the closing brace of the enclosing ``nlohmann`` one, and the 300 definitions
    after it nested under ``nlohmann::nlohmann``. Bytes and lines stay in place.

    An ``extern "C" {`` so opened (``#ifdef __cplusplus``) is paired but left as written:
    tree-sitter reads that idiom well enough, and in a file it cannot parse (the MSVC ``__asm``
    blocks of whisper.cpp's miniaudio.h) the joined block's ``}`` closed a block of the error's
    instead, and 39 functions were lost.

    A group that continues an if-else chain (``}`` / ``#ifdef ENABLE_BF16`` / ``else if (bf16) {
    ... }`` / ``#endif`` / ``else { ... }``) is joined too: tree-sitter reads the group as a
    statement of its own, the ``else`` after it as no statement, and closed the function (and then
    the namespace) early, silently: FasterTransformer's torch ops lost their namespace for the
    rest of the file.

    A group left empty (its body only blanks and comments, once attribute macros are blanked:
    ``__global__ __launch_bounds__(n)`` / ``#ifdef KITTENS_BLACKWELL`` / ``__cluster_dims__(c)`` /
    ``#endif`` / ``void kernel(...)``) has its directives blanked too: it means nothing either way,
    and in the middle of a declaration tree-sitter split the declaration at it (ThunderKittens'
    kernel lost its ``__global__``).

    So is a group whose body is a piece of a declaration or an expression (no ``;``, ``{`` or ``}``
    in it) where one is being written, after code that ends with no ``;``, ``{``, ``}`` or ``:``:
    nlohmann's ``template <...>`` / ``#if defined(JSON_HAS_CPP_14)`` / ``constexpr`` / ``#endif`` /
    ``auto get() const``, and its template arguments added by C++ version (``detail::negation<...>,``
    in a group of its own). The grammar takes a directive only between declarations and statements;
    in the middle of one, each was an ERROR node, and nlohmann's ``basic_json`` closed at a brace of
    its members', the members after it read as functions of no class. The body is read, as the
    preprocessor reads it when the condition holds."""
    if b"#" not in data or b"endif" not in data:
        return data
    opened: list[tuple[bytes, _Group | None]] = []  # (condition, namespace's group)
    pairs: list[tuple[_Group, _Group]] = []
    joined: list[_Group] = []  # groups that continue an if-else chain
    for group in at_line_starts(_LONE_GROUP, data):
        m = group[1]
        body = _GROUP_COMMENT.sub(b" ", m.group(2))
        if _ELSE_FIRST.match(body) or not body.strip() or (
                _FRAGMENT.fullmatch(_NO_BRACES.sub(b" ", m.group(2))) and _within_declaration(data, group[0], body)):
            joined.append(group)
            continue
        condition = b" ".join(_GROUP_COMMENT.sub(b" ", m.group(0)[:m.start(2) - m.start()]).split())
        if opening := _BLOCK_OPENING.fullmatch(body):
            opened.append((condition, group if opening.group(1) is None else None))
        elif _BLOCK_CLOSING.fullmatch(body) and opened and opened[-1][0] == condition:
            first = opened.pop()[1]
            if first is not None:
                pairs.append((first, group))
    if not pairs and not joined:
        return data
    out = bytearray(data)
    for line_start, m in (*(group for pair in pairs for group in pair), *joined):
        for start, end in ((line_start, m.start(2) - 1), (m.end(2), m.end())):
            out[start:end] = blank_span(data[start:end])
    return bytes(out)


_FRAGMENT = re.compile(rb"[^;{}]*")  # no statement or declaration ends or opens a block here
_BEFORE_FRAGMENT = 2048  # bytes read back for the code before a group
_CODE_BEFORE = re.compile(rb"//[^\n]*|/\*.*?\*/|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.S | re.M)


def _within_declaration(data: bytes, line_start: int, body: bytes) -> bool:
    """Whether the code before ``line_start`` (comments and directives aside) leaves a declaration or an
    expression unfinished, so that the group's ``body`` continues it. It does not when it ends with
    ``;``, ``{``, ``}``, ``:`` (a label) or ``\\``; nor with ``)`` or a word spelled as macros are, the
    end of a macro's use on a line of its own (fmt's ``FMT_GCC_PRAGMA("GCC push_options")``, then a group
    of another), unless the body continues a list (``,``, a constructor's ``:``) as a group of member
    initializers does."""
    before = _CODE_BEFORE.sub(b" ", data[max(0, line_start - _BEFORE_FRAGMENT):line_start]).rstrip()
    if before[-1:] == b":" and before[:-1].rstrip()[-1:] == b")":
        return True  # a constructor's member initializers begin (fmt's `format_arg_store(...) :` / a group)
    if not before or before[-1:] in (b";", b"{", b"}", b":", b"\\"):
        return False
    if before[-1:] == b")" or _MACRO_LIKE_END.search(before):
        return body.lstrip()[:1] in (b",", b":")
    return True


_MACRO_LIKE_END = re.compile(rb"(?<![\w])[A-Z_][A-Z0-9_]*\Z")


# a conditional group of two branches with no other directive inside: `#if...`, first branch, `#else`, second, `#endif`
# (found at line starts, as _LONE_GROUP is)
_TWO_BRANCHES = re.compile(rb"#[ \t]*if(?:n?def)?\b(?:[^\n\\]|\\\r?\n|\\.)*\n((?:(?![ \t]*#)[^\n]*\n)*?)"
                           rb"[ \t]*#[ \t]*else\b[^\n\\]*\n((?:(?![ \t]*#)[^\n]*\n)*?)"
                           rb"[ \t]*#[ \t]*endif\b[^\n\\]*$", re.M)
_NO_BRACES = re.compile(rb"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_INITIALIZER_LIST = re.compile(rb"\s*:(?!:)")  # a constructor's member initializers begin here


def keep_first_of_opening_branches(data: bytes) -> bytes:
    """``data`` with the second branch of each two-branch conditional group blanked, and its three
    directives, where both branches open (or close) the same number of blocks, that number not
    zero: `#ifdef ENABLE_BF16` / `if (is_bf16) { to_fp32();` / `#else` / `if (false) {` /
    `#endif`, the block's body and its `}` after the group (FasterTransformer's decoders, vLLM's
    ROCm skinny GEMMs' `while (m < Mrndp) {` / `while (m < M) {`). The preprocessor reads one
    branch; tree-sitter reads both, one `{` too many, and the rest of the file nested in the
    block, silently (a missing `}` at the end) or as one ERROR node, namespace and all. The first
    branch is kept, as the preprocessor reads the group when its condition holds. Bytes and lines
    stay in place.

    So with parentheses, where both branches open the same blocks (none, mostly) and the same
    parentheses: a declarator the branches write with and without an attribute (`__global__ void` /
    `#if __CUDA_ARCH__ >= 1000` / `__launch_bounds__(512, 4) cvt_fp16_to_fp4(` / `#else` /
    `cvt_fp16_to_fp4(` / `#endif`, rtp-llm's FP4 kernels, TensorRT-LLM's): read twice, the kernel
    was an ERROR node, no definition, and its launches bound to nothing.

    So, too, where each branch begins a constructor's member initializer list (`#ifdef
    ROCKSDB_USE_STD_SEMAPHORES` / `: sem_(starting_count)` / `#else` / `: count_(starting_count)`): read
    twice, the constructor and the class's later members were ERROR nodes, and the functions after the
    class lost their namespace.

    So, too, where both branches are pieces of one declaration or expression (no ``;``, ``{`` or ``}``
    outside literals), in the middle of one (:func:`_within_declaration`): vLLM's allspark loads, an
    ``asm volatile(`` whose instruction strings differ by CUDA version (an `#if` continued over two
    lines), 26 ERROR nodes in one header."""
    if b"#" not in data or b"else" not in data or (b"{" not in data and b"(" not in data):
        return data
    out: bytearray | None = None
    for line_start, m in at_line_starts(_TWO_BRANCHES, data):
        first, second = (_NO_BRACES.sub(b" ", m.group(i)) for i in (1, 2))
        opened = first.count(b"{") - first.count(b"}")
        if opened != second.count(b"{") - second.count(b"}"):
            continue
        parens = first.count(b"(") - first.count(b")")
        initializers = _INITIALIZER_LIST.match(first) is not None and _INITIALIZER_LIST.match(second) is not None
        if opened == 0 and not initializers and (parens == 0 or parens != second.count(b"(") - second.count(b")")) \
                and not _heads_of_one_body(first, second, data, m.end()) \
                and not (_FRAGMENT.fullmatch(first) and _FRAGMENT.fullmatch(second)
                         and _within_declaration(data, line_start, first)):
            continue
        out = bytearray(data) if out is None else out
        for start, end in ((line_start, m.start(1)), (m.end(1), m.end())):
            out[start:end] = blank_span(data[start:end])
    return data if out is None else bytes(out)


_BODY_AFTER = re.compile(rb"\s*\{")


def _heads_of_one_body(first: bytes, second: bytes, data: bytes, end: int) -> bool:
    """Whether two branches each write the head of the function or statement whose body follows the group:
    nlohmann's ``#if JSON_HAS_THREE_WAY_COMPARISON`` / ``inline std::partial_ordering operator<=>(...)
    noexcept`` / ``#else`` / ``inline bool operator<(...) noexcept`` / ``#endif`` / ``{``, Triton's
    ``#ifdef _WIN32`` / ``if (_wmkdir(...) == -1)`` / ``#else`` / ``if (mkdir(...) == -1)`` / ``#endif`` /
    ``{``. Read twice, the first head was a declaration missing its ``;`` (a statement, in a body) and the
    block after it an ERROR node: nlohmann's namespace was lost for the rest of the file, and Triton's
    ``MakeDirectory`` ran over the two functions after it, their calls its own."""
    return (b";" not in first and b";" not in second and b"(" in first and b"(" in second
            and first.count(b"(") == first.count(b")") and second.count(b"(") == second.count(b")")
            and _BODY_AFTER.match(data, end + 1) is not None)


# a conditional directive (found at line starts): its word, the rest of its line
_CONDITIONAL = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)")
# `#if 0`, `#if (false)`, `#if 1`... (found anywhere first: a file without one is passed as it is)
_CONSTANT_IF = re.compile(rb"#[ \t]*if[ \t(]+(?:0|1|false|true)[ \t)]*(?:$|//|/\*)", re.M)
_DIRECTIVE_COMMENT = re.compile(rb"//.*|/\*.*?\*/")


@functools.lru_cache(maxsize=2)  # a file's parse and its scan's text (extractor.cpp.scan.scan_cpp) both ask
def blank_disabled_groups(data: bytes) -> bytes:
    """``data`` with the code no configuration compiles blanked: the body of an ``#if 0`` (or
    ``#if false``) up to its ``#elif``, ``#else`` or ``#endif``, and the ``#elif``/``#else``
    branches of an ``#if 1``. Such code is often not C++ at all (ScyllaDB keeps Cassandra's Java
    under ``#if 0``: 131 ERROR nodes in ``type_parser.hh``, the class lost and its members read as
    functions of its namespace), and what it defines is no definition of the system's (universal-ctags
    skips it too, its ``--if0=no``). The directives stay, and so do bytes and lines; a group whose ``#endif`` is
    missing is left as written."""
    if b"#" not in data or _CONSTANT_IF.search(data) is None:
        return data
    spans: list[tuple[int, int]] = []
    # per open conditional: (constant of its `#if` or None, where the branch being blanked starts or None)
    stack: list[tuple[bytes | None, int | None]] = []
    for line_start, m in at_line_starts(_CONDITIONAL, data):
        word, after = m.group(1), m.end() + 1  # the branch's body starts on the next line
        if word.startswith(b"if"):
            condition = _DIRECTIVE_COMMENT.sub(b"", m.group(2)).strip(b" \t\r()") if word == b"if" else b""
            constant = {b"0": b"0", b"false": b"0", b"1": b"1", b"true": b"1"}.get(condition)
            stack.append((constant, after if constant == b"0" else None))
        elif not stack:
            continue  # an `#else` or `#endif` of an `#if` before the file (or in a comment)
        elif word == b"endif":
            blanked_from = stack.pop()[1]
            if blanked_from is not None:
                spans.append((blanked_from, line_start))
        else:  # `#elif` or `#else`: the branch before it ends, the one after it is live or dead
            constant, blanked_from = stack[-1]
            if blanked_from is not None:
                spans.append((blanked_from, line_start))
            stack[-1] = (constant, after if constant == b"1" else None)
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        if start < end:
            out[start:end] = blank_span(data[start:end])
    return bytes(out)


# -- namespace macros --------------------------------------------------------------------------

# `#define NAME body` or `#define NAME(param) body`, continuation lines included (from a line start)
_DEFINE_JOINED = re.compile(rb"#[ \t]*define[ \t]+(\w+)(?:\([ \t]*(\w*)[ \t]*\))?((?:[^\n\\]|\\\r?\n|\\.)*)", re.M)
_NAMESPACE_STEP = re.compile(r"\s*(inline\s+)?namespace\s+(?:([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)|([^{}]*?))\s*\{")
_CLOSING = re.compile(r"\s*(?:\}\s*)+")
_NOTHING = "0"  # what a macro defined as nothing does to namespaces (no kind of namespace_macros)
# C linkage by macro (nlohmann's JSON_HEDLEY_BEGIN_C_DECLS, Abseil's ABSL_INTERNAL_BEGIN_EXTERN_C, stb's STBIWDEF):
# `extern "C" {`, a block that a closing macro ends, or `extern "C"` before one declaration
C_BLOCK, C_PREFIX = 'C{', 'C'
_C_LINKAGE = re.compile(r'\s*extern\s*"C"\s*(\{)?\s*')
_C_LINKAGE_BODY = re.compile(rb'extern\s*"C"')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ALIAS_BODY = re.compile(rb"[ \t]*[A-Za-z_]\w*[ \t]*")  # another macro's name: it may open or close one
ALIAS_PREFIX = "__adns"  # a reserved identifier (double underscore): no code names a namespace so


def namespace_macros(data: bytes) -> dict[str, str]:
    """The macros this file defines that open or close namespaces, name -> what they do:
    ``"=a::b"`` opens namespace ``a::b`` (``"="`` opens only inline namespaces, which add nothing
    to a name), ``"("`` opens the namespace its argument names, ``"}"`` closes what an opening
    macro opened, ``C_BLOCK`` opens a block of C linkage (``extern "C" {``) and ``C_PREFIX`` gives one
    declaration C linkage (``extern "C"``). Every definition of a name must agree (one per ``#if``
    branch is usual; one defined as nothing in another, as a C compiler has them, agrees with those
    that add nothing to a name). Inline namespaces are left out of the path: a name declared in one is
    found without it.

    ``#define PROTOBUF_NAMESPACE_OPEN namespace google { namespace protobuf {``, fmt's
    ``FMT_BEGIN_NAMESPACE``, nlohmann's ``NLOHMANN_JSON_NAMESPACE_BEGIN`` (an inline namespace named
    by another macro), pybind11's ``PYBIND11_NAMESPACE_BEGIN(name)``: tree-sitter reads such a
    name as a function's return type and the whole namespace body as that function's."""
    if b"namespace" not in data and b"}" not in data and b'"C"' not in data or b"define" not in data:
        return {}
    return dict(_namespace_macros(data))


@functools.lru_cache(maxsize=2)
def _namespace_macros(data: bytes) -> tuple[tuple[str, str], ...]:
    bodies: dict[str, list[tuple[str | None, str | None]]] = {}  # name -> (param, body text; None: no namespace)
    for m in matches_at_line_starts(_DEFINE_JOINED, data):
        body = m.group(3)
        param = m.group(2).decode() if m.group(2) is not None else None
        if b"namespace" not in body and b"}" not in body and not _ALIAS_BODY.fullmatch(body) \
                and not _C_LINKAGE_BODY.search(body):
            # no namespace macro; or one defined as nothing (its "" text) in this branch
            nothing = not _COMMENT.sub(" ", CONTINUATION.sub(b" ", body).decode("utf-8", "replace")).strip()
            bodies.setdefault(m.group(1).decode(), []).append((param, "" if nothing else None))
            continue
        text = _COMMENT.sub(" ", re.sub(r"\\\r?\n", " ", body.decode("utf-8", "replace")))
        bodies.setdefault(m.group(1).decode(), []).append((param, text))
    # A body may use other namespace macros of the file (TensorRT-LLM's opens its ABI's inline one):
    # what they do is written out in it, for a few rounds
    known: dict[str, str] = {}
    for _round in range(3):
        spelled = {name: "}" if kind == "}" else "inline namespace _ {" if kind == "=" else
                   'extern "C" {' if kind == C_BLOCK else 'extern "C"' if kind == C_PREFIX else
                   f"namespace {kind[1:]} {{" for name, kind in known.items() if kind != "("}
        word = re.compile(r"\b(" + "|".join(map(re.escape, spelled)) + r")\b") if spelled else None
        for name, found in bodies.items():
            if name in known:
                continue
            kinds = {_NOTHING if text == "" else
                     _namespace_body(word.sub(lambda w: spelled[w.group(1)], text) if word else text, param)
                     if text is not None else "" for param, text in found}
            # Defined as nothing in one branch and as an inline namespace or its end in the other (Abseil's
            # ABSL_NAMESPACE_BEGIN, by ABSL_OPTION_USE_INLINE_NAMESPACE), a macro adds nothing to a name either
            # way: read as the namespace (a file whose uses do not balance is parsed as written).
            if len(kinds) == 2 and _NOTHING in kinds and kinds & {"=", "}", C_BLOCK, C_PREFIX}:
                kinds.discard(_NOTHING)
            if len(kinds) == 1 and not kinds & {"", _NOTHING}:
                known[name] = kinds.pop()
    return tuple(sorted(known.items()))


def _namespace_body(text: str, param: str | None) -> str:
    """What a macro body does to namespaces (see :func:`namespace_macros`); "" when anything else."""
    if not text.strip():
        return ""
    if _CLOSING.fullmatch(text):
        return "}"
    linkage = _C_LINKAGE.fullmatch(text)
    if linkage is not None:
        return "" if param is not None else C_BLOCK if linkage.group(1) else C_PREFIX
    names: list[str] = []
    position = 0
    while position < len(text.rstrip()):
        step = _NAMESPACE_STEP.match(text, position)
        if step is None:
            return ""
        inline, name = step.group(1), step.group(2)
        if name is None and not inline:
            return ""  # a namespace named by an expression: not read
        if name is not None and not inline:
            names.append(re.sub(r"\s+", "", name))
        position = step.end()
    if param is not None:
        return "(" if names == [param] else ""
    return "=" + "::".join(names)


def file_namespace_macros(data: bytes, given: dict[str, str] | None = None) -> dict[str, str]:
    """The namespace macros a parse of ``data`` rewrites: its own, those its includes define, and
    the test suites of testmacros.yaml that it uses (Boost's headers are not in the system)."""
    own = namespace_macros(data)
    suites = {name: kind for name, word, kind in _suite_macros() if word in data}
    return {**suites, **(given or {}), **own} if given or suites else own


@functools.cache
def _suite_macros() -> tuple[tuple[str, bytes, str], ...]:
    return tuple((name, name.encode(), kind) for name, kind in sorted(load_test_macros().suites.items()))


def rewrite_namespace_macros(data: bytes, macros: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """``data`` with each use of a namespace macro written as what it does, in as many bytes (no
    byte or line moves): ``namespace a::b{`` for an opening one, padded with spaces; when that is
    longer than the use, ``namespace __adns0{`` and the alias's path in the returned map (the
    scanner names definitions by the path, :func:`extractor.cpp.scan.scan_cpp`); ``}`` for a
    closing one. The uses are rewritten only when every opening use fits and the file closes as
    many as it opens; otherwise the file is parsed as written."""
    names = sorted(n for n in macros if n.encode() in data)
    if not names:
        return data, {}
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")
    aliases: dict[str, str] = {}  # path -> alias
    edits: list[tuple[int, int, bytes]] = []
    opened = closed = 0
    for m in pattern.finditer(data):
        start, end = m.start(), m.end()
        if in_directive(data, start):
            continue
        kind = macros[m.group().decode()]
        if kind in (C_BLOCK, C_PREFIX):
            text = b'extern "C"{' if kind == C_BLOCK else b'extern "C"'
            if len(text) > end - start:
                return data, {}
            opened += kind == C_BLOCK
            edits.append((start, end, text))
            continue
        if kind == "(" or (kind == "}" and data[end:end + 64].lstrip(b" \t").startswith(b"(")):
            after = _skip_parenthesised(data, end)
            # the first argument (Boost's BOOST_FIXTURE_TEST_SUITE(name, Fixture) names the namespace first)
            argument = data[end:after].strip().strip(b"()").split(b",", 1)[0].strip()
            end = after
        if kind == "}":
            closed += 1
            edits.append((start, end, b"}"))
            continue
        opened += 1
        path = argument.decode("ascii", "replace") if kind == "(" else kind[1:]
        if kind == "(" and not re.fullmatch(r"[A-Za-z_]\w*", path):
            return data, {}
        # only inline namespaces: a block that names nothing (C++ linkage is every block's)
        text = f"namespace {path}{{".encode() if path else b'extern "C++"{'
        if len(text) > end - start:
            alias = aliases.setdefault(path, f"{ALIAS_PREFIX}{len(aliases)}")
            text = f"namespace {alias}{{".encode()
        if len(text) > end - start or b"\n" in data[start:start + len(text)]:
            return data, {}
        edits.append((start, end, text))
    if opened != closed:
        return data, {}
    out = bytearray(data)
    for start, end, text in edits:
        out[start:end] = blank_span(data[start:end])
        out[start:start + len(text)] = text
    return bytes(out), {alias: path for path, alias in aliases.items()}


@functools.cache
def _configured_blanks(language: Language) -> tuple[frozenset[str], frozenset[str]]:
    """(macros.yaml's names to blank for ``language``, its call macros)."""
    cfg = macro_config()
    names = set(cfg["blank"]) | (set(cfg["blank_cpp_only"]) if language is not Language.CUDA else set())
    return frozenset(names), frozenset(cfg["blank_call"])


# -- macro blanking ----------------------------------------------------------------------------

# at the start of a line (extractor.support.linestart)
# (the body over its continued lines: a run of blanks taken whole, as in _FUNCTION_DEFINE below)
_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)(?![\w(])[ \t]*((?:[^\n\\ \t]|[ \t]++|\\\r?\n|\\.)*?)[ \t]*(?:\r?$)",
                     re.M)
_ATTRIBUTE_GROUP = re.compile(
    rb"__attribute__\s*\(\(.*\)\)|__declspec\s*\(\s*\w+\s*\)|\[\[.*?\]\]|__launch_bounds__\s*\([^()]*\)"
    # a pragma operator: a loop-unrolling macro (`#define PRAGMA_UNROLL _Pragma("unroll")`, CUTE's and
    # lmdeploy's) stands alone before a `for`, where tree-sitter reads its name as a statement missing
    # its `;` and the loop as an ERROR
    rb'|_Pragma\s*\(\s*"(?:[^"\\\n]|\\.)*"\s*\)|__pragma\s*\((?:[^()]|\([^()]*\))*\)'
    # an alignment specifier: RocksDB's `#define ALIGN_AS(n) alignas(n)` (or nothing) before a class's name,
    # `class ALIGN_AS(CACHE_LINE_SIZE) LRUCacheShard final : ...`, took the class's name and members
    rb'|\b(?:alignas|_Alignas)\s*\((?:[^()]|\([^()]*\))*\)'
    # an exception specification: Catch's `#define CATCH_NOEXCEPT noexcept` or `throw()` by compiler,
    # `#define CATCH_NOEXCEPT_IS(x) noexcept(x)` (`virtual ~E() CATCH_NOEXCEPT {}` lost the class's members)
    # (`throw()` as written: a parameter taken out of `throw(e)` leaves `throw( )`, no specification)
    rb'|\bthrow\s*\(\)|\bnoexcept\s*\((?:[^()]|\([^()]*\))*\)')
# A body that is a pragma directive (`#define CUTE_UNROLL #pragma unroll`, which nvcc takes): no syntax
_PRAGMA_BODY = re.compile(rb"#\s*pragma\b[^\\]*")
# `#define NAME(params) body` (its continued lines too), and a body that is a static assertion. The body
# stops where only blanks are left on its last line; it takes a run of blanks whole (`[ \t]++`): the end
# test is then made at the run's start, not at each of its bytes (a run of n, before a continuation's
# aligned `\`, cost n*n/2), and no end falls inside a run that the run's start does not meet first
_FUNCTION_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)\(((?:[\w\s,.]|\\\r?\n)*)\)"
                              rb"[ \t]*((?:[^\n\\ \t]|[ \t]++|\\\r?\n|\\.)*?)[ \t]*(?:\r?$)", re.M)
CONTINUATION = re.compile(rb"\\\r?\n")
_STATIC_ASSERT_BODY = re.compile(rb"(?:static_assert|_Static_assert)\s*\([^;]*\)\s*;?")
# MSVC's attribute, whose argument may be a call: `__declspec(deprecated(hint))`
_DECLSPEC_GROUP = re.compile(rb"__declspec\s*\((?:[^()]|\([^()]*\))*\)")
# how a declaration wrapper is listed among a file's attribute macros (CppFacts.defines): `NAME(decl)`
DECLARATION_WRAPPER = "(decl)"
# ... and a macro that is a template's header (`#define TPL_DECLARATION template<class T, ...>`): `NAME(template)`
TEMPLATE_HEADER = "(template)"
# ... and a macro that is a keyword, listed with it: an access specifier (`#define PRIVATE_UNLESS_TESTED
# private`: `NAME(private)`), `try` and `catch` where exceptions are on (`NAME(try)`, `NAME(catch)`); each
# keyword with what follows its use
_ACCESS = frozenset({b"public", b"protected", b"private"})
_KEYWORD_USES = {**{label: rb"\s*:(?!:)" for label in _ACCESS}, b"try": rb"\s*\{", b"catch": rb"\s*\("}
_KEYWORD_SUFFIXES = tuple(f"({keyword.decode()})" for keyword in sorted(_KEYWORD_USES))
_WORD = re.compile(rb"\b[A-Za-z_]\w*\b")
# ... and pointer qualifiers: ggml's GGML_RESTRICT is `__restrict__`, `__restrict`, `restrict` or nothing;
# and specifiers a library's macro adds where the compiler has them (fmt's FMT_CONSTEXPR, moodycamel's
# MOODYCAMEL_NOEXCEPT, `_NOEXCEPT` under MSVC), and the calling conventions of Windows-aware headers
# (OpenCL's CL_API_CALL, Vulkan's VKAPI_CALL): left as a word, the grammar reads the macro as a type; and the
# qualifiers a header adds by option (zlib's `z_const` is `const` under ZLIB_CONST, nothing by default), and the
# pointer qualifiers of 16-bit memory models (zlib's and Windows' FAR: `far`, `_far` or nothing), and `_Restrict`
# (brotli's BROTLI_RESTRICT, for compilers that spell `restrict` so), and the virt-specifiers a header adds where
# the compiler has them (Catch's CATCH_OVERRIDE, `override` or nothing)
_ALLOWED_WORDS = frozenset({b"inline", b"static", b"extern", b"explicit", b"__attribute__", b"__declspec",
                            b"restrict", b"__restrict", b"_Restrict", b"__inline", b"__forceinline", b"_Noreturn",
                            b"constexpr", b"noexcept", b"_NOEXCEPT", b"const", b"volatile", b"override", b"final",
                            b"far", b"_far", b"__far", b"near", b"_near", b"__near", b"huge", b"_huge", b"__huge",
                            b"__stdcall", b"__cdecl", b"__fastcall", b"__vectorcall", b"__thiscall", b"_stdcall",
                            b"_cdecl"})
# The keywords of C and C++ that the grammar reads itself (it does not read `_Complex`, `_Imaginary` or
# `_Thread_local`). A header may define one for an old compiler (zlib's `#ifndef STDC` / `#define const`, a
# Windows header's `#define inline __inline`), but blanking it would only take it out of every signature
# that writes it (`const Bytef *dictionary` read as `Bytef*` in grpc's vendored zlib): such a name is never
# an attribute macro.
KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class"
    " compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype"
    " default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline"
    " int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public"
    " register reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast"
    " struct switch template this thread_local throw true try typedef typeid typename union unsigned using virtual"
    " void volatile wchar_t while xor xor_eq _Alignas _Alignof _Atomic _Bool _Generic _Noreturn"
    " _Static_assert".encode().split())


def attribute_macros(data: bytes) -> list[str]:
    """Object-like macros this file defines that expand to nothing, to attributes or to pragmas only;
    and, written ``NAME(``, function-like ones that expand to a ``static_assert`` (DeepEP's
    ``EP_STATIC_ASSERT(cond, reason)``), to attributes only or to nothing (ggml's
    ``GGML_ATTRIBUTE_FORMAT(...)``), whose uses are blanked with their arguments: in a class body
    the grammar reads such a call as an ERROR that takes the class's members out of it, and an
    assertion defines nothing (FlashInfer's ``__global__ ..._LAUNCH_BOUNDS(n) void K(...)`` lost
    the kernel after it).

    Written ``NAME(decl)``, function-like macros that wrap a declaration in attributes only
    (ggml's ``#define GGML_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))``): a use
    ``GGML_DEPRECATED(GGML_API double f(int), "use g")`` is an ERROR to the grammar, and the
    declaration inside it is lost; such a use is unwrapped (:func:`unwrap_declarations`).

    A name qualifies only if every ``#define`` of it does (``#define X`` in one ``#if`` branch and
    ``#define X 1`` in another would make blanking it break the other branch's uses).
    """
    return list(_attribute_macros(data))


def attribute_aliases(data: bytes) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Macros this file defines, none of its attribute macros, whose every definition is attribute-like
    but for the names of other macros, or their uses: c-ares' ``#define CARES_EXTERN
    CARES_SYMBOL_SCOPE_EXTERN``, whose name another header defines as a visibility attribute; jemalloc's
    ``#define JEMALLOC_ALWAYS_INLINE JEMALLOC_ATTR(always_inline) static inline`` (a use listed as
    ``JEMALLOC_ATTR(``); and, listed as ``NAME(``, function-like ones, DuckDB's ``#define
    DUCKDB_GUARDED_BY(x) DUCKDB_THREAD_ANNOTATION_ATTRIBUTE(guarded_by(x))``. Each with those names,
    sorted; such a macro is an attribute macro when the system defines every one of them as one
    (:func:`extractor.cpp.includes.system_attribute_aliases`)."""
    if b"define" not in data:
        return ()
    own = _attribute_macros(data)
    good = {n.encode() for n in own if macro_word(n) == n}
    known = set(_configured_words()) | good | {n.encode() for n in own if n.endswith("(")}
    found = [(name.decode(), words) for name, values in _object_like_bodies(data).items()
             if name not in good and (words := _alias_of(name, values, known))]
    if b"(" in data:
        functions: dict[bytes, list[bytes]] = {}
        for name, written in _function_like_bodies(data).items():
            for params, body in written:
                body = _DECLSPEC_GROUP.sub(b" ", body)
                # a parameter outside the uses of other macros: no attribute body
                outside = set(_WORD.findall(_CALL_IN_BODY.sub(b" ", _ATTRIBUTE_GROUP.sub(b" ", body))))
                functions.setdefault(name, []).append(
                    b"" if outside.intersection(p.strip() for p in params.split(b",")) else body)
        found += [(name.decode() + "(", words) for name, values in functions.items()
                  if name + b"(" not in known and b"" not in values and (words := _alias_of(name + b"(", values, known))]
    return tuple(sorted(found))


def _alias_of(name: bytes, values: list[bytes], known: set[bytes]) -> tuple[str, ...]:
    """The other macros' names (and uses, ``NAME(``) that the definitions ``values`` of ``name`` are
    attribute-like but for, sorted; none when one of them is not attribute-like so, or names it."""
    words: set[bytes] = set()
    for value in values:
        unknown = _alias_words(value, known)
        if unknown is None:
            return ()
        words |= unknown
    if not words or name in words or len(words) > _ALIAS_WORDS:
        return ()
    return tuple(sorted(w.decode() for w in words))


_ALIAS_WORDS = 4  # more names than that in one macro's definitions: no attribute alias
_CALL_IN_BODY = re.compile(rb"\b([A-Z_][A-Z0-9_]*)\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
_MACRO_NAME = re.compile(rb"[A-Z_][A-Z0-9_]*")  # as macros are named: a lower-case word is a type or a variable


def _alias_words(body: bytes, known: set[bytes]) -> frozenset[bytes] | None:
    """The names in ``body`` that keep it from being an attribute body, when all of them could be
    macros (none: it is one); None when something else does."""
    body = re.sub(rb"//.*|/\*.*?\*/", b"", body)
    if not body.strip():
        return frozenset()
    if body.endswith(b"\\"):
        return None
    if _PRAGMA_BODY.fullmatch(body.strip()):
        return frozenset()
    rest = _ATTRIBUTE_GROUP.sub(b" ", body)
    # a use of another function-like macro (jemalloc's `JEMALLOC_ATTR(always_inline) static inline`) is
    # listed as `NAME(`: an attribute body when the system defines that name as an attribute macro
    unknown = {m.group(1) + b"(" for m in _CALL_IN_BODY.finditer(rest)
               if m.group(1) not in known and m.group(1) + b"(" not in known} if b"(" in rest else set()
    if unknown:
        rest = _CALL_IN_BODY.sub(b" ", rest)
    for token in rest.split():
        if _WORD.fullmatch(token) is None:
            return None
        if token in _ALLOWED_WORDS or token in known or token.startswith(b"__") and token.endswith(b"__"):
            continue
        if _MACRO_NAME.fullmatch(token) is None:
            return None
        unknown.add(token)
    return frozenset(unknown)


@functools.cache
def _configured_words() -> frozenset[bytes]:
    return frozenset(n.encode() for key in ("blank", "blank_cpp_only") for n in macro_config()[key])


@functools.lru_cache(maxsize=2)  # the file's attribute macros, its aliases and its lambda macros read them
def _object_like_bodies(data: bytes) -> dict[bytes, list[bytes]]:
    """Each object-like macro ``data`` defines (no keyword), with the body of each of its definitions
    (shared by its callers: read, never changed)."""
    bodies: dict[bytes, list[bytes]] = {}
    for m in matches_at_line_starts(_DEFINE, data):
        if m.group(1) not in KEYWORDS:
            # continued lines too (Abseil's and BoringSSL's `_Pragma("GCC diagnostic push") \` / `_Pragma(...)`)
            bodies.setdefault(m.group(1), []).append(CONTINUATION.sub(b" ", m.group(2)))
    return bodies


@functools.lru_cache(maxsize=2)  # the file's attribute macros, its aliases and its assigning macros read them
def _function_like_bodies(data: bytes) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """Each function-like macro ``data`` defines (no keyword), with the parameters as written and the body
    (its continued lines joined) of each of its definitions (shared by its callers: read, never changed)."""
    definitions: dict[bytes, list[tuple[bytes, bytes]]] = {}
    for m in matches_at_line_starts(_FUNCTION_DEFINE, data):
        if m.group(1) not in KEYWORDS:
            definitions.setdefault(m.group(1), []).append((CONTINUATION.sub(b" ", m.group(2)),
                                                           CONTINUATION.sub(b" ", m.group(3))))
    return definitions


@functools.lru_cache(maxsize=2)  # parse_source and the scanner's facts both ask, for the same bytes
def _attribute_macros(data: bytes) -> tuple[str, ...]:
    if b"define" not in data:
        return ()
    bodies = _object_like_bodies(data)
    known = set(_configured_words())
    good: set[bytes] = set()
    definitions = _function_like_bodies(data)
    function_like: dict[bytes, bytes] = {}  # name: how its uses are read
    # Rounds, so that a body that uses another such macro qualifies once that one has: `#define A
    # __attribute__((x))` + `#define B A`, nlohmann's deprecation attribute in a diagnostic-suppressing
    # wrapper, Clang's `#define NO_THREAD_SAFETY_ANALYSIS THREAD_ANNOTATION_ATTRIBUTE__(...)`
    for _ in range(4):
        qualified = len(good) + len(function_like)
        for name, values in bodies.items():
            if name not in good and all(_is_attribute_body(_expanded(v, function_like), known | good)
                                        for v in values):
                good.add(name)
        for name, written in definitions.items():
            if name in function_like or name in bodies:
                continue
            kinds = {_function_macro_kind(params, _expanded(body, function_like), known | good)
                     for params, body in written}
            # every #define of one kind, and no function of that name in another branch
            if len(kinds) == 1 and None not in kinds and not defines_function(data, name):
                function_like[name] = kinds.pop()  # type: ignore[assignment]
        if len(good) + len(function_like) == qualified:
            break  # a round that qualifies none leaves every body as it read it: the next would qualify none
    for name, values in bodies.items():
        if name not in good and (kind := _syntax_macro_kind([_GROUP_COMMENT.sub(b" ", v).strip() for v in values])):
            good.add(name + kind)
    good |= {name + kind for name, kind in function_like.items()}
    # nlohmann's `#define JSON_CATCH(exception) catch(exception)`, `if(false)` when exceptions are off: read as
    # the build with exceptions, as C++ compilers build
    good |= {name + b"(catch)" for name, written in definitions.items()
             if name not in function_like and any(_is_catch(params, body) for params, body in written)}
    return tuple(sorted(n.decode() for n in good))


def _syntax_macro_kind(bodies: list[bytes]) -> bytes | None:
    """How an object-like macro that is a piece of C++'s syntax is listed (``bodies``: its definitions'
    bodies, comments out): a template's header (:data:`TEMPLATE_HEADER`); an access specifier, defined by
    the build (nlohmann's `public` for its tests, `private` else), as its last definition's (an `#else`
    branch's: the build without the option the `#if` tests); `try` where exceptions are on (nlohmann's
    `JSON_TRY`, `if(true)` when they are off). None for any other macro."""
    if all(_is_template_header(body) for body in bodies):
        return TEMPLATE_HEADER.encode()
    if all(body in _ACCESS for body in bodies):
        return b"(" + bodies[-1] + b")"
    return b"(try)" if b"try" in bodies else None


def _is_catch(params: bytes, body: bytes) -> bool:
    """Whether a function-like macro's body is a handler's head of its one parameter: ``catch(exception)``."""
    param = params.strip()
    m = re.fullmatch(rb"catch\s*\(\s*(\w+|__VA_ARGS__)\s*\)", _GROUP_COMMENT.sub(b" ", body).strip())
    return m is not None and (m.group(1) == param or (param == b"..." and m.group(1) == b"__VA_ARGS__"))


def _is_template_header(body: bytes) -> bool:
    """Whether a macro's body (comments out) is a template's header and nothing else (``template<class T,
    int N>``): its angle brackets close at its end and nowhere before (those in parentheses aside)."""
    if not body.startswith(b"template") or not body.endswith(b">"):
        return False
    rest = body[len(b"template"):].lstrip()
    if not rest.startswith(b"<"):
        return False
    angles = parens = 0
    for i, byte in enumerate(rest):
        if byte == 0x28:  # (
            parens += 1
        elif byte == 0x29:  # )
            parens -= 1
        elif parens == 0 and byte == 0x3C:  # <
            angles += 1
        elif parens == 0 and byte == 0x3E:  # >
            angles -= 1
            if angles == 0:
                return i == len(rest) - 1
    return False


def _expanded(body: bytes, function_like: dict[bytes, bytes]) -> bytes:
    """A macro's body with its uses of function-like attribute macros blanked and of declaration
    wrappers unwrapped (as :func:`parse_source` reads them), when it has any."""
    if not function_like or b"(" not in body:
        return body
    calls = frozenset(n.decode() for n, kind in function_like.items() if kind == b"(")
    wrappers = frozenset(n.decode() for n, kind in function_like.items() if kind != b"(")
    return unwrap_declarations(blank_macros(body, frozenset(), calls), wrappers) if wrappers else \
        blank_macros(body, frozenset(), calls)


def defines_function(data: bytes, name: bytes) -> bool:
    """Whether ``data`` defines a function ``name`` (``name(...) {``): ggml's OpenCL backend defines
    ``static void dump_tensor(...) {...}`` in one ``#if`` branch and ``#define dump_tensor(tensor)``
    in the other, and blanking the macro's uses would blank the function and its calls. A use after a
    declarator's parameters or its qualifiers defines nothing: it is the attribute of the function
    whose body follows (Clang's thread-safety macros: ``void lock() ACQUIRE() {``, ``bool f() const
    TRY_ACQUIRE(true) {``)."""
    pattern = re.compile(rb"\b" + re.escape(name) + rb"\s*\((?:[^(){};]|\([^(){};]*\))*\)\s*\{")
    return any(_AFTER_DECLARATOR.search(data, max(0, found.start() - _LOOK_BEHIND), found.start()) is None
               for found in pattern.finditer(data))


# what a function's declarator ends with, right before a use of an attribute macro
_AFTER_DECLARATOR = re.compile(rb"(?:\)|\bconst|\bvolatile|\bnoexcept|\boverride|\bfinal)\s*\Z")
_LOOK_BEHIND = 64  # bytes: the word or `)` before a use, and the blanks between


def _function_macro_kind(params: bytes, body: bytes, known: set[bytes]) -> bytes | None:
    """How a function-like macro's uses are read: blanked with their arguments (``(``: its body
    is a static assertion, attributes only or nothing), unwrapped (:data:`DECLARATION_WRAPPER`),
    or as written (None)."""
    if _STATIC_ASSERT_BODY.fullmatch(body.strip()) or _is_attribute_body(_DECLSPEC_GROUP.sub(b" ", body), known):
        return b"("
    if _is_declaration_wrapper(params, body, known):
        return DECLARATION_WRAPPER.encode()
    return None


def _is_declaration_wrapper(params: bytes, body: bytes, known: set[bytes]) -> bool:
    """Whether a function-like macro's body is its first parameter, once, beside attributes only (its
    other parameters only inside them)."""
    first = params.split(b",", 1)[0].strip()
    if not first or first == b"...":
        return False
    body = re.sub(rb"//.*|/\*.*?\*/", b"", body)
    word = re.compile(rb"\b" + re.escape(first) + rb"\b")
    if len(word.findall(body)) != 1:
        return False
    return _is_attribute_body(_DECLSPEC_GROUP.sub(b" ", word.sub(b" ", body)), known)


def _is_attribute_body(body: bytes, known: set[bytes]) -> bool:
    return _alias_words(body, known) == frozenset()


@functools.lru_cache(maxsize=1024)
def _blank_pattern(names: frozenset[str], call_names: frozenset[str]) -> re.Pattern[bytes] | None:
    words = sorted(names | call_names)
    if not words:
        return None
    # A trie-shaped pattern: the regex engine's plain alternation of 80 words costs as much as
    # the parse itself on CUDA-heavy trees.
    return re.compile(rb"\b" + _trie_pattern([w.encode() for w in words]) + rb"\b")


def _trie_pattern(words: list[bytes]) -> bytes:
    trie: dict = {}
    for w in words:
        node = trie
        for byte in w:
            node = node.setdefault(bytes([byte]), {})
        node[b""] = {}

    def render(node: dict) -> bytes:
        end = b"" in node
        branches = [re.escape(ch) + render(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        if end:
            return b"(?:" + body + b")?"
        return body

    return b"(?:" + render(trie) + b")"


def blank_macros(data: bytes, names: frozenset[str], call_names: frozenset[str],
                 more: frozenset[str] = frozenset(), more_calls: frozenset[str] = frozenset()) -> bytes:
    """``data`` with each listed token (and a call macro's parenthesised arguments) turned into
    spaces, except inside preprocessor directives. Newlines are kept, so lines do not move.

    ``more`` and ``more_calls`` are further names (a file's own macros) matched by a pattern of
    their own: the configured names' pattern is compiled once per process, not once per file
    with macros of its own or per set of its includes' macros (2 ms each). Every match is blanked in a copy
    of the original bytes, so the result is the same as one pattern of all the names."""
    patterns = [p for p in (_blank_pattern(names, call_names), _blank_pattern(more, more_calls)) if p is not None]
    out: bytearray | None = None
    calls = {n.encode() for n in call_names | more_calls}
    for pattern in patterns:
        for m in pattern.finditer(data):
            start, end = m.start(), m.end()
            if in_directive(data, start):
                continue
            if m.group(0) in calls:
                end = _skip_parenthesised(data, end)
            if out is None:
                out = bytearray(data)
            out[start:end] = blank_span(data[start:end])
    return data if out is None else bytes(out)


# A word spelled as macros are, then on the same line a keyword that begins a declaration, or a type
# not spelled so and a function's name (on that line or the next): no C or C++ reads a name there but a
# macro that expands to specifiers or attributes (folly's `FOLLY_ALWAYS_INLINE void call(...)` and
# `FOLLY_ALWAYS_INLINE Status call(...)`, Lua's `LUALIB_API int luaopen_bit(...)`), or to nothing. (Not
# before a word spelled as macros are, which may be the macro where the first word is a type: `BOOL WINAPI
# DllMain(...)`.)
_SPECIFIER_MACRO = re.compile(
    rb"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|[A-Z][A-Z0-9]+)[ \t]+(?=(?:void|bool|char|short|int|long|float|double"
    rb"|signed|unsigned|static|inline|virtual|explicit|constexpr|consteval|constinit|extern|friend|template"
    rb"|typedef|thread_local|__global__|__device__|__host__|__forceinline__|__inline__)\b"
    rb"|(?![A-Z][A-Z0-9_]*\b)[A-Za-z]\w*(?:::\w+)*(?:<[^;{}()\n]*>)?"
    rb"(?:[ \t]*[*&]+[ \t]*(?:\r?\n[ \t]*)?|[ \t]+|[ \t]*\r?\n[ \t]*)(?:operator\b|\w+[ \t]*\())")
_DEFINED = re.compile(rb"#[ \t]*define[ \t]+(\w+)")


def blank_specifier_macros(data: bytes, keep: Iterable[str] = ()) -> bytes:
    """``data`` with each word written as macros are where only a specifier or attribute macro can be
    (:data:`_SPECIFIER_MACRO`: before a declaration's keyword, or before a type and a function's name)
    blanked there, outside directives, string literals and comments: a macro from a header outside the
    system (folly's, which Velox uses and does not hold), which the grammar read as a type, and the member
    or function after it as an ERROR (217 of Velox's files). Not the file's own macros (read from their
    definitions) nor ``keep``. Bytes and lines stay."""
    if _SPECIFIER_MACRO.search(data) is None:
        return data
    own = {m.group(1) for m in matches_at_line_starts(_DEFINED, data)} | {n.encode() for n in keep}
    out: bytearray | None = None
    comments: list[int] | None = None  # the block comments' starts and ends, in order
    for m in _SPECIFIER_MACRO.finditer(data):
        start = m.start(1)
        if m.group(1) in own or in_directive(data, start):
            continue
        line = data[data.rfind(b"\n", 0, start) + 1:start]
        if line.count(b'"') - line.count(b'\\"') & 1 or b"//" in line:  # in a literal, or a comment
            continue
        if comments is None:
            comments = [at for c in _GROUP_COMMENT.finditer(data) if c.group().startswith(b"/*") for at in c.span()] \
                if b"/*" in data else []
        if bisect.bisect_right(comments, start) & 1:  # in a block comment: a doc comment's words are kept
            continue
        out = bytearray(data) if out is None else out
        out[start:m.end(1)] = b" " * (m.end(1) - start)
    return data if out is None else bytes(out)


# a template's parameter list opens here; a function-like macro's use as one whole parameter (group 1: its name)
_TEMPLATE_OPEN = re.compile(rb"\btemplate[ \t]*<")
_PARAMETER_MACRO = re.compile(rb"\s*([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])\s*\(.*\)\s*", re.S)
_A_PARAMETER = b"class=void"
_TEMPLATE_PUNCTUATION = re.compile(rb"[()<>,;{}]")
# such a use after a `<` or a `,`, anywhere: a file with none has no template to read again (most files)
_PARAMETER_MACRO_USE = re.compile(rb"[<,]\s*[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\s*\(")


def write_parameter_macros(data: bytes) -> bytes:
    """``data`` with each use of a macro written as macros are (ALL_CAPS) that is a template's whole
    parameter (Highway's `template <class D, HWY_IF_V_SIZE_LE_D(D, 16)>`, an `enable_if` a macro
    writes) written as a parameter the grammar reads, `class=void`, padded with spaces to the use's
    length, newlines kept. Read as written, each was an ERROR node (4,964 in Highway's headers, the
    most of numpy's). A list that does not close before a `;`, `{` or `}` is left as written."""
    if b"template" not in data or _PARAMETER_MACRO_USE.search(data) is None:
        return data
    out: bytearray | None = None
    for m in _TEMPLATE_OPEN.finditer(data):
        if in_directive(data, m.start()):
            continue
        for start, end in _template_parameters(data, m.end()):
            use = _PARAMETER_MACRO.fullmatch(data, start, end)
            # (room for the parameter on the use's first line: no line of the file moves)
            if use is None or b"\n" in data[use.start(1):use.start(1) + len(_A_PARAMETER)] \
                    or end - use.start(1) < len(_A_PARAMETER):
                continue
            span_start, span_end = use.start(1), data.rindex(b")", start, end) + 1
            out = bytearray(data) if out is None else out
            out[span_start:span_end] = _A_PARAMETER + blank_span(data[span_start + len(_A_PARAMETER):span_end])
    return data if out is None else bytes(out)


def _template_parameters(data: bytes, start: int) -> list[tuple[int, int]]:
    """The spans of the parameters of the template parameter list that opens before ``start``, split at
    its top-level commas; none when it does not close before a `;`, `{` or `}` (or within 4 KB)."""
    angles, parens, begin = 1, 0, start
    spans: list[tuple[int, int]] = []
    for m in _TEMPLATE_PUNCTUATION.finditer(data, start, start + 4096):  # only where the nesting can change
        c, i = m.group(), m.start()
        if c == b"(":
            parens += 1
        elif c == b")":
            parens -= 1
            if parens < 0:
                return []
        elif parens:
            continue
        elif c == b"<":
            angles += 1
        elif c == b">":
            angles -= 1
            if not angles:
                return spans + [(begin, i)]
        elif c == b"," and angles == 1:
            spans.append((begin, i))
            begin = i + 1
        elif c in b";{}":
            return []
    return []


def macro_word(listed: str) -> str:
    """The macro's name, as a file's attribute macros list it (``NAME``, ``NAME(``, ``NAME(decl)``)."""
    return listed.split("(", 1)[0]


def unwrap_declarations(data: bytes, names: frozenset[str]) -> bytes:
    """``data`` with each use of a declaration wrapper (:func:`attribute_macros`) outside directives
    written as the declaration it wraps: the name, its parenthesis and the arguments after the
    first turned into spaces (newlines kept, so lines do not move). A use whose parentheses do not
    close is left as written."""
    pattern = _blank_pattern(names, frozenset())
    if pattern is None:
        return data
    out = bytearray(data)
    for m in pattern.finditer(data):
        if in_directive(data, m.start()):
            continue
        opening = _skip_blanks(data, m.end())
        if data[opening:opening + 1] != b"(":
            continue
        comma, closing = _first_argument_end(data, opening)
        if closing < 0:
            continue
        for start, end in ((m.start(), opening + 1), (comma, closing + 1)):
            out[start:end] = blank_span(data[start:end])
    return bytes(out)


_A_TEMPLATE_HEADER = b"template<class...>"


def write_template_headers(data: bytes, names: frozenset[str]) -> bytes:
    """``data`` with each use of a template-header macro (:data:`TEMPLATE_HEADER`) outside directives
    written as a template's header of as many bytes, ``template<class...>`` and blanks: nlohmann's json
    writes ``NLOHMANN_BASIC_JSON_TPL_DECLARATION`` (eleven template parameters) before ``class basic_json``
    and its free operators, and the grammar read the word as a type and lost the class, whose hundreds
    of members became functions of the namespace. The parameters' names are not written; a use too
    short for the header (with the blanks after it on its line) is left as written."""
    pattern = _blank_pattern(names, frozenset())
    if pattern is None:
        return data
    out = bytearray(data)
    for m in pattern.finditer(data):
        end = m.end()
        while end < len(data) and data[end] in b" \t":
            end += 1
        if end - m.start() < len(_A_TEMPLATE_HEADER) or in_directive(data, m.start()):
            continue
        out[m.start():end] = _A_TEMPLATE_HEADER.ljust(end - m.start())
    return bytes(out)


def write_keyword_macros(data: bytes, keywords: Mapping[str, str]) -> bytes:
    """``data`` with each use of a keyword macro (``keywords``: its name, its keyword) outside directives
    written as its keyword, padded to the name's length, where the keyword's use is: ``NAME:`` for an
    access specifier, ``NAME {`` for ``try``, ``NAME (`` for ``catch``. nlohmann's json writes
    ``JSON_PRIVATE_UNLESS_TESTED:`` in its class, which the grammar read as a statement's label, and
    ``JSON_TRY {...} JSON_CATCH (std::out_of_range&) {...}`` in its members, where its recovery closed the
    class: each time, the class's members after it were read as functions of its namespace. A keyword
    longer than the name is left as written."""
    out: bytearray | None = None
    for keyword, follows in _KEYWORD_USES.items():
        names = sorted(name for name, written in keywords.items() if written == keyword.decode())
        if not names:
            continue
        pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?=" + follows + rb")")
        for m in pattern.finditer(data):
            if len(keyword) > m.end() - m.start() or in_directive(data, m.start()):
                continue
            if out is None:
                out = bytearray(data)
            out[m.start():m.end()] = keyword.ljust(m.end() - m.start())
    return data if out is None else bytes(out)


@functools.cache
def _mock_macros() -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """googletest's mock macros (macros.yaml): a pattern of their uses, and each one's kind."""
    config = macro_config()
    kinds = {name: kind for kind in ("mock_method", "mock_method_n", "mock_const_method_n") for name in config[kind]}
    if not kinds:
        return None, kinds
    return re.compile(r"\b(" + "|".join(sorted(kinds, key=lambda n: (-len(n), n))) + r")[ \t]*\("), kinds


# a mock's qualifiers as gmock takes them, in the order C++ writes them
_MOCK_SPECS = {"const": "const", "volatile": "volatile", "ref(&)": "&", "ref(&&)": "&&", "noexcept": "noexcept",
               "override": "override", "final": "final"}


def write_mock_methods(data: bytes) -> bytes:
    """``data`` with each use of a googletest mock macro outside directives written as the member it
    declares, on the use's first line, its other lines kept empty (every line after it keeps its
    number): ``MOCK_METHOD((std::pair<int, Loc>), Match, (const Key& key), (const, override));`` as
    ``std::pair<int, Loc> Match(const Key& key) const override;``, the older ``MOCK_METHOD1(Match,
    Loc(const Key& key));`` as ``Loc Match(const Key& key);``. gmock is outside the system; its macros
    declare the mocked method (and helpers of gmock's own, not written). Read as written, the mock
    declared no member and the new form was ERROR nodes (rtp-llm's 84 mocks). A use whose arguments do
    not read so is left as written."""
    text, uses = _mock_uses(data)
    out: list[str] = []
    pos = 0
    kinds = _mock_macros()[1]
    for m in uses:
        if m.start() < pos:
            continue
        args, end = arguments(text, m.end())
        written = _mock_declaration(kinds[m.group(1)], args) if args is not None else None
        if written is None or len(written) > end - m.start():
            continue
        out += [text[pos:m.start()], written, "\n" * text.count("\n", m.start(), end)]
        pos = end
    if not out:
        return data
    out.append(text[pos:])
    return "".join(out).encode("utf-8", "surrogateescape")


def mock_lines(data: bytes) -> frozenset[int]:
    """The lines where uses of googletest's mock macros begin, outside directives (:func:`write_mock_methods`)."""
    text, uses = _mock_uses(data)
    return frozenset(text.count("\n", 0, m.start()) + 1 for m in uses)


def _mock_uses(data: bytes) -> tuple[str, list[re.Match[str]]]:
    """``data`` as text and the uses of googletest's mock macros in it outside directives (none, and no
    text, in a file that names none)."""
    pattern = _mock_macros()[0]
    if pattern is None or b"MOCK_" not in data:
        return "", []
    text = data.decode("utf-8", "surrogateescape")
    return text, [m for m in pattern.finditer(text) if not in_directive(text, m.start())]


def _mock_declaration(kind: str, args: tuple[str, ...]) -> str | None:
    """The member a mock macro's arguments declare, on one line (None when they are not its form)."""
    if kind == "mock_method":
        if len(args) not in (3, 4) or not _SIMPLE_NAME.fullmatch(args[1]):
            return None
        returns, name, params = _unparenthesized(args[0]), args[1], args[2]
        if not (params.startswith("(") and params.endswith(")")):
            return None
        given = {"".join(spec.split()) for spec in _unparenthesized(args[3]).split(",")} if len(args) == 4 else set()
        return " ".join([returns, name + params, *(spec for key, spec in _MOCK_SPECS.items() if key in given)])
    # gmock takes the signature as `...`: a return type with a comma need not be parenthesized
    signature = ", ".join(args[1:])
    if len(args) < 2 or not _SIMPLE_NAME.fullmatch(args[0]) or not signature.endswith(")"):
        return None
    opening = _parameters_opening(signature)
    if opening <= 0:
        return None
    const = " const" if kind == "mock_const_method_n" else ""
    return f"{signature[:opening].strip()} {args[0]}{signature[opening:]}{const}"


_SIMPLE_NAME = re.compile(r"[A-Za-z_]\w*")


def _unparenthesized(arg: str) -> str:
    """An argument gmock asks to be parenthesized (a type with commas in it), without its parentheses."""
    arg = arg.strip()
    return arg[1:-1].strip() if arg.startswith("(") and arg.endswith(")") else arg


def _parameters_opening(signature: str) -> int:
    """Where a function type's parameter list opens (``Loc(const Key& key)``: 3): the `(` matching its last `)`."""
    depth = 0
    for i in range(len(signature) - 1, -1, -1):
        if signature[i] == ")":
            depth += 1
        elif signature[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


_NOT_NEWLINE = re.compile(rb"[^\n]")


def blank_span(span: bytes) -> bytes:
    """``span`` as spaces, its newlines kept: no line of the file moves."""
    return _NOT_NEWLINE.sub(b" ", span)


def _skip_blanks(data: bytes, pos: int) -> int:
    while data[pos:pos + 1] in (b" ", b"\t", b"\r", b"\n"):
        pos += 1
    return pos


def _first_argument_end(data: bytes, opening: int) -> tuple[int, int]:
    """(where the first argument of the call whose ``(`` is at ``opening`` ends, where its ``)`` is);
    (-1, -1) when it does not close. Comments, string and character literals are skipped."""
    depth, comma, i = 0, -1, opening
    while i < len(data):
        c = data[i]
        if data.startswith(b"//", i):
            i = data.find(b"\n", i)
            if i < 0:
                break
        elif data.startswith(b"/*", i):
            i = data.find(b"*/", i + 2) + 1
            if i <= 0:
                break
        elif c in b"\"'":
            i += 1
            while i < len(data) and data[i] != c and data[i] != 0x0A:
                i += 2 if data[i] == 0x5C else 1  # a backslash escapes what follows
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return (i if comma < 0 else comma), i
        elif c == 0x2C and depth == 1 and comma < 0:  # `,`
            comma = i
        i += 1
    return -1, -1


@functools.cache
def _condition_pattern() -> re.Pattern[bytes] | None:
    names = macro_config()["condition"]
    if not names:
        return None
    return re.compile(rb"\bif([ \t]+)(" + _trie_pattern(sorted(n.encode() for n in names)) + rb")([ \t]+)\{")


def parenthesize_conditions(data: bytes) -> bytes:
    """``data`` with ``if NAME {`` written ``if(NAME){`` for the condition macros of macros.yaml
    (Ascend C's ``ASCEND_IS_AIV``): the blanks around the name become the parentheses the
    grammar needs, so no byte moves. A use with no blank to spare stays as written."""
    pattern = _condition_pattern()
    if pattern is None or b"if" not in data:
        return data

    def parenthesized(m: re.Match[bytes]) -> bytes:
        before, name, after = m.group(1), m.group(2), m.group(3)
        return b"if(" + before[1:] + name + after[:-1] + b"){"

    return pattern.sub(parenthesized, data)


# `__has_include(<optional>)`, `__has_include_next("x.h")`: the header named, on one line
_HAS_INCLUDE = re.compile(rb"\b__has_include(?:_next)?[ \t]*\([ \t]*(<[^<>\n]*>|\"[^\"\n]*\")")


def name_included_headers(data: bytes) -> bytes:
    """``data`` with the header a ``__has_include(...)`` names written as one identifier of as many
    bytes (``<jsoncpp/json/json.h>`` becomes ``_____________________``): the grammar's
    conditions take no header name or string there, and the ``#if`` it stood in, with its
    ``#include``s, became an ERROR. No byte moves."""
    if b"__has_include" not in data:
        return data
    return _HAS_INCLUDE.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + b"_" * len(m.group(1)), data)


# `operator()<...>(`: the call operator named with template arguments (nested once at most)
_OPERATOR_CALL_ARGUMENTS = re.compile(rb"\boperator\s*\(\s*\)(\s*<(?:[^<>;{}()]|<[^<>;{}()]*>)*>)(?=\s*\()")


def drop_operator_call_template_arguments(data: bytes) -> bytes:
    """``data`` with the template arguments of ``operator()<...>(`` blanked: an explicit
    specialization of a member call operator (Catlass's kernels: ``template <> void
    operator()<AscendC::AIC>(Params const &params)``) or a call naming its arguments is an ERROR
    for the grammar, whose recovery can move the class's members out of it. Without them it is
    the operator's definition (or call), where it stands; no byte moves."""
    if b"operator" not in data:
        return data
    return _OPERATOR_CALL_ARGUMENTS.sub(
        lambda m: m.group(0)[:m.start(1) - m.start(0)] + blank_span(m.group(1)), data)


# an #if or #elif condition, its continuation lines included, up to a comment; found from its `#`
# at the start of a line (extractor.support.linestart)
_CONDITION = re.compile(rb"#[ \t]*(?:el)?if(?![\w])(?:[^\n\\/]|\\\r?\n|\\(?!\r?\n)|/(?![/*]))*")
_ALTERNATIVE_OPERATOR = re.compile(rb"(?<![\w])(?:or|and|not)(?![\w])")
_OPERATOR_SPELLING = {b"or": b"||", b"and": b"&& ", b"not": b"!  "}


def spell_conditions(data: bytes) -> bytes:
    """``data`` with its ``#if``/``#elif`` conditions written so that the grammar reads them, padded to
    the same length, so that no byte moves:

    - their alternative operators (``or``, ``and``, ``not``: C++ spellings of ``||``, ``&&`` and ``!``)
      written with symbols. tree-sitter's C++ grammar reads them in code but not in a condition, where
      each made an ERROR node and a "definitions there may be missing" warning: 13 of deepspeed 0.19.8's
      C++ files (``#if defined(__AVX512__) or defined(__AVX256__)``);
    - their string literals written as one identifier (``"-Wcast-qual"`` becomes ``____________``), as a
      header ``__has_include`` names is (:func:`name_included_headers`): Hedley's
      ``JSON_HEDLEY_HAS_WARNING("-Wc++98-compat")``, Clang's ``__has_warning("-Wfoo")``. The grammar's
      conditions take no string; nlohmann's single-header json had 236 ERROR nodes so, and each had
      its file scanned again without its conditionals. So is a header's name in angle brackets that is
      a macro's whole argument (fmt's ``FMT_HAS_INCLUDE(<fcntl.h>)``, a library's own spelling of
      ``__has_include``)."""
    if b"if" not in data:
        return data
    out: bytearray | None = None
    for m in matches_at_line_starts(_CONDITION, data):
        condition = m.group(0)
        if b"\"" in condition or b"<" in condition:
            for string in _CONDITION_STRING.finditer(condition):
                if out is None:
                    out = bytearray(data)
                start = m.start() + string.start()
                out[start:start + len(string.group(0))] = b"_" * len(string.group(0))
        for word in _ALTERNATIVE_OPERATOR.finditer(condition):
            if out is None:
                out = bytearray(data)
            start = m.start() + word.start()
            out[start:start + len(word.group(0))] = _OPERATOR_SPELLING[word.group(0)]
    return data if out is None else bytes(out)


_CONDITION_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"|(?<=\()[ \t]*<[^<>()\n]*>(?=[ \t]*\))')


_AFTER_USING = re.compile(rb"\busing[ \t\r\n]+\Z")
# A template-id's arguments, one level of nested angle brackets deep (``Shape<_1, Int<4>>``).
_TEMPLATE_ARGS = rb"<[^<>;{}]*(?:<[^<>;{}]*>[^<>;{}]*)*>"
_QUALIFIED = (rb"(?:::\s*)?\w+(?:\s*" + _TEMPLATE_ARGS + rb")?"
              rb"(?:\s*::\s*(?:template\s+)?\w+(?:\s*" + _TEMPLATE_ARGS + rb")?)+")
_TYPENAME = re.compile(rb"\btypename\b")
# What follows the keyword of a dependent type made into a value: ``Q::Name{`` or ``Q::Name(``.
_AS_VALUE = re.compile(rb"\s+" + _QUALIFIED + rb"\s*([{(])")
_BEFORE_VALUE = re.compile(rb"(?:[=(,{?]|\breturn)\s*\Z")  # an expression may start here
_BEFORE_CALL = re.compile(rb"(?:=|\breturn)\s*\Z")  # ... and no parameter's declaration can


# `#define STACK_OF(type) struct stack_st_##type`: a macro of one parameter that names a type by pasting it
_TYPE_MACRO = re.compile(rb"#[ \t]*define[ \t]+(\w+)\([ \t]*(\w+)[ \t]*\)[ \t]*(?:(?:struct|union|enum)[ \t]+)?"
                         rb"(\w+(?:[ \t]*##[ \t]*\w+){1,2})[ \t]*(?://[^\n]*|/\*[^\n]*?\*/[ \t]*)?\r?$", re.M)
_ANY_FUNCTION_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)\(", re.M)


@functools.lru_cache(maxsize=2)  # parse_source and the scanner's facts both ask, for the same bytes
def type_macros(data: bytes) -> tuple[tuple[str, str, str], ...]:
    """The macros this file defines that name a type by pasting their one parameter between two
    pieces: (name, what comes before the argument, what comes after). BoringSSL's and OpenSSL's
    ``#define STACK_OF(type) struct stack_st_##type``: read as written, ``int f(STACK_OF(X509) *sk);``
    and every function with such a parameter were no definitions at all, and no ERROR node said so.
    Every ``#define`` of the name must be of that form, with the same pieces."""
    if b"##" not in data:
        return ()
    definitions: dict[bytes, int] = {}
    for m in matches_at_line_starts(_ANY_FUNCTION_DEFINE, data):
        definitions[m.group(1)] = definitions.get(m.group(1), 0) + 1
    pieces: dict[bytes, list[tuple[bytes, bytes]]] = {}
    for m in matches_at_line_starts(_TYPE_MACRO, data):
        name, param, body = m.groups()
        parts = [part.strip() for part in body.split(b"##")]
        if parts.count(param) == 1:  # `before##type`, `type##after` or both
            at = parts.index(param)
            pieces.setdefault(name, []).append((b"".join(parts[:at]), b"".join(parts[at + 1:])))
    # (no keyword: dmlc-core's `#define noexcept(a) noexcept_##a` is for a compiler without it)
    return tuple(sorted((name.decode(), found[0][0].decode(), found[0][1].decode()) for name, found in pieces.items()
                        if len(found) == definitions.get(name) and len(set(found)) == 1 and name not in KEYWORDS))


def _uses(data: bytes, names: Iterable[str], after: bytes) -> Iterator[re.Match[bytes]]:
    """Each use of one of the macros ``names`` in ``data`` outside preprocessor lines: the name (group 1),
    not part of a longer name or a member's, followed by what ``after`` matches."""
    present = sorted(n for n in names if n.encode() in data)
    if present:
        pattern = re.compile(rb"(?<![\w.:>])(" + b"|".join(re.escape(n.encode()) for n in present) + rb")" + after)
        yield from (m for m in pattern.finditer(data) if not in_directive(data, m.start()))


def write_type_macros(data: bytes, macros: Mapping[str, tuple[str, str]]) -> bytes:
    """``data`` with each use ``NAME(Arg)`` of a type-naming macro (:func:`type_macros`) outside
    preprocessor lines written as the type name it pastes (``stack_st_Arg``), padded with spaces to
    the use's length (no byte or line moves; the ``struct`` a C type needs is left out, as C++ reads
    it). A use whose argument is no name, or whose name does not fit, is left as written."""
    out: bytearray | None = None
    for m in _uses(data, macros, rb"[ \t]*\([ \t]*(\w+)[ \t]*\)"):
        before, after = macros[m.group(1).decode()]
        written = before.encode() + m.group(2) + after.encode()
        if len(written) > m.end() - m.start():
            continue
        if out is None:
            out = bytearray(data)
        out[m.start():m.end()] = written.ljust(m.end() - m.start())
    return data if out is None else bytes(out)


# the end of a body that opens a lambda: its captures, then maybe its parameters, specifiers, a return type
_LAMBDA_HEAD = re.compile(rb"\[[^\[\]]*\]\s*(?:\([^()]*\)\s*)?(?:(?:noexcept|mutable|constexpr)\b\s*)*"
                          rb"(?:->\s*[\w:]+\s*)?(?://[^\n]*|/\*[^\n]*?\*/\s*)?\Z")


@functools.lru_cache(maxsize=2)  # parse_source and the scanner's facts both ask, for the same bytes
def lambda_macros(data: bytes) -> tuple[str, ...]:
    """The object-like macros this file defines whose every body ends by opening a lambda, so that a use
    ``NAME { body };`` is a statement whose body is the lambda's: folly's ``SCOPE_EXIT`` (``auto
    FB_ANONYMOUS_VARIABLE(SCOPE_EXIT_STATE) = ::folly::detail::ScopeGuardOnExit() + [&]() noexcept``), the
    ``DEFER`` and ``defer`` of many code bases. Read as written, the use was an ERROR node; in a class's
    method it took the class's other members out of it (folly: 100 of the 101 files that use one)."""
    if b"define" not in data or b"]" not in data:
        return ()
    return tuple(sorted(name.decode() for name, bodies in _object_like_bodies(data).items()
                        if all(_LAMBDA_HEAD.search(body) is not None for body in bodies)))


def write_lambda_macros(data: bytes, names: Iterable[str]) -> bytes:
    """``data`` with each use ``NAME {`` of a lambda-opening macro (:func:`lambda_macros`) outside
    preprocessor lines written as the lambda it opens, ``[]`` padded with spaces to the name's length (no
    byte or line moves): the grammar reads the use as the lambda expression it is."""
    out: bytearray | None = None
    for m in _uses(data, (n for n in names if len(n) >= 2), rb"(?=\s*\{)"):
        if out is None:
            out = bytearray(data)
        out[m.start():m.end()] = b"[]".ljust(m.end() - m.start())
    return data if out is None else bytes(out)


# an assignment at a statement's start (`lhs = ...`, not `==`) and a value a variable is given whole
# (`auto&& r = (rexpr);`), in a macro's body, each of one parameter's
_ASSIGNED = "(?:^|[;{{}}])\\s*{0}\\s*=(?!=)"
_GIVEN = "=\\s*\\(?\\s*{0}\\s*\\)?\\s*;"
_MACRO_USE = re.compile(r"\s*(\w+)\s*\((.*)\)\s*;?\s*", re.S)


@functools.lru_cache(maxsize=2)  # parse_source and the scanner's facts both ask, for the same bytes
def assign_macros(data: bytes) -> tuple[tuple[str, int, int, int], ...]:
    """The function-like macros this file defines that assign one of their arguments the value of
    another: (name, how many parameters, the position of the one assigned, of the value's). Arrow's
    ``ARROW_ASSIGN_OR_RAISE(lhs, rexpr)`` (``auto&& r = (rexpr); <return on error>; lhs =
    std::move(r).ValueUnsafe();``, through an ``_IMPL`` macro it hands its parameters to), TensorFlow's
    ``TF_ASSIGN_OR_RETURN``, googletest users' ``ASSERT_OK_AND_ASSIGN``: a use ``ARROW_ASSIGN_OR_RAISE(auto
    reader, Open(path));`` declares a variable in a macro's argument, which is no expression, and
    tree-sitter made an ERROR node of it and often of the rest of the file (Arrow's
    hash_aggregate_test.cc: one function found of its hundreds). Every definition of the name must agree."""
    if b"define" not in data or b"=" not in data:
        return ()
    definitions = {name.decode(): [([p.strip() for p in params.decode("utf-8", "replace").split(",")],
                                     _COMMENT.sub(" ", body.decode("utf-8", "replace"))) for params, body in written]
                   for name, written in _function_like_bodies(data).items()}
    found: dict[str, tuple[int, int, int] | None] = {}

    def roles(name: str, depth: int) -> tuple[int, int, int] | None:
        if name not in found:
            found[name] = None  # (a macro that reaches itself assigns nothing)
            ways = {_assigning(params, body, roles, depth) for params, body in definitions[name]}
            found[name] = ways.pop() if len(ways) == 1 else None
        return found[name]

    def _assigning(params: list[str], body: str, inner: Any, depth: int) -> tuple[int, int, int] | None:
        if not all(p.isidentifier() for p in params):
            return None
        target = [i for i, p in enumerate(params) if re.search(_ASSIGNED.format(re.escape(p)), body)]
        value = [i for i, p in enumerate(params) if re.search(_GIVEN.format(re.escape(p)), body)]
        if len(target) == 1 and len(value) == 1 and target[0] < value[0]:
            return len(params), target[0], value[0]
        # a body that hands its parameters on to another such macro of the file
        use = _MACRO_USE.fullmatch(body)
        if use is None or depth > 4 or use.group(1) not in definitions:
            return None
        handed = inner(use.group(1), depth + 1)
        written = b"(" + use.group(2).encode() + b")"
        spans = _argument_spans(written, 0)
        if handed is None or spans is None or spans[-1][1] != len(written) or len(spans) - 1 != handed[0]:
            return None
        args = [written[start:end].decode().strip() for start, end in spans[:-1]]
        at = [params.index(args[i]) if args[i] in params else -1 for i in handed[1:]]
        return (len(params), at[0], at[1]) if -1 not in at and at[0] < at[1] else None

    return tuple(sorted((name, *way) for name in definitions if (way := roles(name, 0)) is not None))


def write_assign_macros(data: bytes, macros: Mapping[str, tuple[int, int, int]]) -> bytes:
    """``data`` with each use of an assigning macro (:func:`assign_macros`) outside preprocessor lines
    written as the assignment it makes, every byte in place: ``ARROW_ASSIGN_OR_RAISE(auto reader,
    Open(path));`` as ``                      auto reader= Open(path);;``: the name and its `(` blanked,
    the comma after the assigned argument an `=`, the other arguments and commas blanked, the `)` a
    `;` (an empty statement after it, where the use had its own). A use whose arguments are not the
    macro's number, or do not close within 16 KB, is left as written."""
    out: bytearray | None = None
    for m in _uses(data, macros, rb"\s*\("):
        if out is not None and out[m.start()] == 32:
            continue  # (inside a use written already)
        spans = _argument_spans(data, m.end() - 1)
        params, target, value = macros[m.group(1).decode()]
        if spans is None or len(spans) - 1 != params:
            continue
        if out is None:
            out = bytearray(data)
        close = spans[-1][0]
        out[m.start():m.end()] = b" " * (m.end() - m.start())
        for i, (start, end) in enumerate(spans[:-1]):
            after = spans[i + 1][0] - 1 if i + 1 < params else close  # this argument's comma, or the `)`
            if i not in (target, value):
                out[start:end] = blank_span(data[start:end])
            if i + 1 < params:
                out[after:after + 1] = b"=" if i == target else b" "
        out[close:close + 1] = b";"
    return data if out is None else bytes(out)


def _argument_spans(data: bytes, open_paren: int) -> list[tuple[int, int]] | None:
    """The (start, end) of each argument of the use whose `(` is at ``open_paren``, split at commas
    outside parentheses and literals, then (the `)`, the `)` + 1); None when it does not close in 16 KB."""
    spans: list[tuple[int, int]] = []
    depth, start, i, end = 0, open_paren + 1, open_paren, min(len(data), open_paren + 16384)
    while i < end:
        c = data[i]
        if c in b"\"'":
            i = _literal_end(data, i, end)
            continue
        if c == 40:  # (
            depth += 1
        elif c == 41:  # )
            depth -= 1
            if depth == 0:
                return spans + [(start, i), (i, i + 1)]
        elif c == 44 and depth == 1:  # ,
            spans.append((start, i))
            start = i + 1
        i += 1
    return None


_RAW_STRING_OPENING = re.compile(rb'(?<![\w])(?:u8|[uUL])?R"([^()\\\s"]{0,16})\(')


def _literal_end(data: bytes, at: int, end: int) -> int:
    """Past the string or character literal that opens at ``at`` (or the end of its line); a raw
    string literal (``R"(...)"``, ``R"x(...)x"``) runs to its closing delimiter, over lines."""
    if at and data[at - 1] == 82:  # R, maybe after an encoding prefix
        for start in range(at - 1, max(-1, at - 4), -1):
            raw = _RAW_STRING_OPENING.match(data, start)
            if raw is not None and raw.start(1) == at + 1:
                close = data.find(b")" + raw.group(1) + b'"', raw.end(), end)
                return end if close < 0 else close + len(raw.group(1)) + 2
    quote, i = data[at], at + 1
    while i < end and data[i] != quote and data[i] != 10:
        i += 2 if data[i] == 92 else 1  # a backslash escapes the next byte
    return i + 1


# `extern template ...;` at the start of a line: an explicit instantiation declaration
_EXTERN_TEMPLATE = re.compile(rb"^([ \t]*)extern(?=\s+template\b)", re.M)


def drop_extern_of_templates(data: bytes) -> bytes:
    """``data`` with the ``extern`` of each explicit instantiation declaration (``extern template bool
    F<char>(char);``, ``extern template class std::vector<int>;``) turned into spaces: tree-sitter's C++
    grammar reads ``template ...;``, an explicit instantiation, but the ``extern`` before it made an
    ERROR node of the declaration (Abseil's str_format/arg.h, 50 of them), and of what followed."""
    if b"extern" not in data or b"template" not in data:
        return data
    return _EXTERN_TEMPLATE.sub(lambda m: m.group(1) + b"      ", data)


def drop_unread_typename(data: bytes) -> bytes:
    """``data`` with the ``typename`` keywords that tree-sitter's C++ grammar does not read turned
    into spaces (no byte moves); it made each an ERROR node:

    - that of ``using typename Base::Name;`` (a dependent base's member type brought into a class
      template): CUTLASS, torch's headers, lmdeploy's attention kernels;
    - that of a dependent type made into a value, ``typename KT::TileShape{}`` or
      ``return typename Kernel::Arguments{...}`` (the grammar reads ``KT::TileShape{}``): CUTLASS's
      and CuTe's kernels, in flashinfer (29 files), flash-attention and DeepSpeed."""
    if b"typename" not in data:
        return data
    spans = []
    for m in _TYPENAME.finditer(data):
        before = data[max(0, m.start() - 64):m.start()]  # the look-behind patterns end at the keyword
        if _AFTER_USING.search(before):
            spans.append(m.span())
            continue
        value = _AS_VALUE.match(data, m.end())
        if value is not None and (_BEFORE_VALUE if value.group(1) == b"{" else _BEFORE_CALL).search(before):
            spans.append(m.span())
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    return bytes(out)


def used_outside_directives(data: bytes, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that appear in ``data`` as words other than in preprocessor lines."""
    candidates = sorted(n for n in set(names) if n.encode() in data)
    if not candidates:
        return []
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in candidates) + rb")\b")
    used: set[str] = set()
    for m in pattern.finditer(data):
        word = m.group(0).decode()
        if word not in used and not in_directive(data, m.start()):
            used.add(word)
            if len(used) == len(candidates):
                break
    return sorted(used)


# A preprocessor line and the lines its trailing backslashes continue: the places
# :func:`in_directive` says yes to, found for a whole file at once (from the `#`, with only these
# blanks before it on its line: extractor.support.linestart).
_DIRECTIVE_LINES = re.compile(rb"#(?:[^\n]*\\\n)*[^\n]*")
_DIRECTIVE_BLANKS = b" \t\r\x0b\x0c"
WORD_RUN = re.compile(rb"\w+")  # a word: a whole run of word bytes, what \bNAME\b matches


def word_hashes(data: bytes) -> bytes:
    """The crc32 of every word ``data`` uses outside preprocessor lines, sorted, as little-endian
    uint32s: what :func:`used_outside_directives` would look for, small enough to keep in the
    per-file facts (torch's 9,351 headers: 848k distinct words per file summed, 3.4 MB), so the
    graph step re-reads only the files that may use a macro their includes define. A hash only
    rules words out; a file it does not rule out is read and checked exactly."""
    code = sub_lines(_DIRECTIVE_LINES, b" ", data, _DIRECTIVE_BLANKS) if b"#" in data else data
    hashes = array.array("I", sorted({zlib.crc32(word) for word in WORD_RUN.findall(code)}))
    if sys.byteorder == "big":
        hashes.byteswap()
    return hashes.tobytes()


def hashed_words(words: bytes) -> frozenset[int]:
    """The hashes :func:`word_hashes` stored."""
    hashes = array.array("I", words)  # "I" is 4 bytes wherever CPython runs
    if sys.byteorder == "big":
        hashes.byteswap()
    return frozenset(hashes)


def word_hash(name: str) -> int:
    """The hash :func:`word_hashes` stores for the word ``name``."""
    return zlib.crc32(name.encode())


def in_directive(data: AnyStr, pos: int) -> bool:
    """Whether ``pos`` is on a preprocessor line of ``data`` (bytes, or text as decoded), or on a line
    that continues one."""
    newline, hash_, backslash = ("\n", "#", "\\") if isinstance(data, str) else (b"\n", b"#", b"\\")
    line_start = data.rfind(newline, 0, pos) + 1
    while True:
        if data[line_start:pos].lstrip().startswith(hash_):
            return True
        # A continuation line of a multi-line directive (`\` at the end of the line before).
        if line_start < 2 or data[line_start - 2:line_start - 1] != backslash:
            return False
        pos = line_start - 1
        line_start = data.rfind(newline, 0, pos) + 1


def _skip_parenthesised(data: bytes, pos: int) -> int:
    i = _skip_blanks(data, pos)
    if data[i:i + 1] != b"(":
        return pos
    depth = 0
    while i < len(data):
        c = data[i:i + 1]
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return pos


# -- queries -----------------------------------------------------------------------------------

@functools.cache
def _query(language: Language, pattern: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(language), pattern)


def capture_nodes(node: Any, language: Language, pattern: str) -> dict[str, list[Any]]:
    """Nodes captured by a tree-sitter query ``pattern`` under ``node``, by capture name, each
    name's in document order (:func:`extractor.native.grammar.in_document_order`)."""
    return in_document_order(tree_sitter.QueryCursor(_query(language, pattern)).captures(node))


# -- one query per file -------------------------------------------------------------------------
# A query runs over every node of the tree in C; even one that captures nothing costs about a
# sixth of the parse. So the per-file scanners of C/C++/CUDA share one query, run once per tree,
# with a capture name per use:
#   extractor.cpp.scan: ``callee`` (the function of every call that names one: an identifier,
#     qualified or templated, or a field expression), ``kernel`` (CUDA launches),
#     ``error`` (ERROR nodes), ``type`` (class/struct/union definitions, for those in functions),
#     ``local``, ``range`` and ``lambda`` (declarations, for a body's variables; range-for loops and
#     lambdas' parameter lists: the declared types of the objects of member calls);
#   extractor.telemetry.cpp_scan: ``define`` (#define), ``init`` (declarators initialised with a
#     string or braces: constants, label maps), ``literal_call`` (calls with a string argument);
#   extractor.concepts.scan: ``concept.<kind>`` for every node its facts come from (includes,
#     ``extern "C"`` blocks, namespaces, classes, structs, function definitions, calls, qualified
#     names, type names, strings). Its own query cost as much again as this one: 1,500 of
#     grpcio's files, 1.14-1.19 CPU s for the two queries, 0.72-0.75 s for one.
_STRING = "[(string_literal) (concatenated_string) (raw_string_literal)]"
CONCEPT_CAPTURES = ("include", "linkage", "namespace", "class", "struct", "function", "call", "qualified", "type",
                    "string")
_CONCEPT_NODES = ("preproc_include", "linkage_specification", "namespace_definition", "class_specifier",
                  "struct_specifier", "function_definition", "call_expression", "qualified_identifier",
                  "type_identifier", "string_literal")
_FILE_PATTERNS = (
    "(call_expression function: [(identifier) (qualified_identifier) (template_function) (field_expression)] @callee)",
    "(ERROR) @error",
    "[(class_specifier body: (_)) (struct_specifier body: (_)) (union_specifier body: (_))] @type",
    "(declaration) @local",
    "(for_range_loop) @range",
    "(lambda_expression declarator: (_) @lambda)",  # abstract_function_declarator; CUDA: lambda_declarator
    "(catch_clause) @catch",
    "(preproc_def) @define",
    f"(init_declarator value: [{_STRING[1:-1]} (argument_list) (initializer_list)]) @init",
    f"(call_expression arguments: (argument_list {_STRING})) @literal_call",
    "(field_initializer_list) @member_inits",
    *(f"({node}) @concept.{name}" for node, name in zip(_CONCEPT_NODES, CONCEPT_CAPTURES)),
)
# the CUDA grammar's `kernel<<<grid, block>>>(args)`: a call with a kernel_call_syntax child
_CUDA_PATTERNS = ("(call_expression function: (_) @kernel (kernel_call_syntax))",)
_last_file: tuple[tree_sitter.Tree, dict[str, list[tree_sitter.Node]]] | None = None


def file_nodes(tree: tree_sitter.Tree, language: Language) -> dict[str, list[tree_sitter.Node]]:
    """The nodes of ``tree`` the per-file scanners read, by capture name (see above); computed
    once per tree (the last tree's are kept: the scanners of one file run one after the other).
    A node captured by several matches (a call with two string arguments) is listed once per match."""
    global _last_file
    last = _last_file
    if last is not None and last[0] is tree:
        return last[1]
    patterns = _FILE_PATTERNS + (_CUDA_PATTERNS if language is Language.CUDA else ())
    found = capture_nodes(tree.root_node, language, " ".join(patterns))
    _last_file = (tree, found)
    return found


def parse_raw(data: bytes, language: Language) -> tree_sitter.Tree:
    """The grammar alone, no macro blanking: the baseline the benchmark compares against."""
    return _parser(language).parse(data)
