"""C/C++ signatures as data: parameters and return types read from the syntax tree, and the
schema strings of torch operators (`ops.def("rms_norm(Tensor! out, float eps=1e-6) -> ()")`).

Parameters are :class:`extractor.cpp.facts.Param` facts (the graph step turns them into
:class:`extractor.model.Parameter`): the type is the declaration's own text with the name cut out
(`const torch::Tensor& input` -> `const torch::Tensor&`), whitespace normalised, so two releases
compare equal when only formatting changed. Attribute macros were blanked before parsing
(`__restrict__`), so they are not part of a type.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from extractor.cpp.facts import Param
from extractor.cpp.names import MACRO_NAME, split_top_level

_ATTRIBUTE = re.compile(rb"\[\[.*?\]\]", re.S)
_NAME_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "array_declarator", "function_declarator",
    "parenthesized_declarator", "attributed_declarator", "variadic_declarator", "init_declarator"})
_PARAMETERS = frozenset({"parameter_declaration", "optional_parameter_declaration",
                         "variadic_parameter_declaration", "optional_type_parameter_declaration"})
# Specifiers before a function's declarator that are not part of its return type.
_NOT_RETURN_TYPES = frozenset({"storage_class_specifier", "virtual", "attribute_specifier",
                               "attribute_declaration", "explicit_function_specifier",
                               "ms_declspec_modifier", "comment", "friend"})
_NOT_RETURN_WORDS = frozenset({"static", "inline", "extern", "virtual", "explicit", "constexpr",
                               "consteval", "friend", "mutable", "thread_local", "register",
                               "__global__", "__device__", "__host__", "__forceinline__",
                               "__inline__", "__noinline__"})
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_SPACES = re.compile(r"\s+")
_AROUND_PUNCT = re.compile(r"\s*([*&<>,()\[\]])\s*")
_PUNCT_BEFORE_WORD = re.compile(r"([*&>\])])(?=[A-Za-z_])")
_PUNCT = frozenset("*&<>,()[]")


@functools.lru_cache(maxsize=8192)  # parameter types repeat (`torch::Tensor&`, `int64_t`)
def normalise_type(text: str) -> str:
    """`const  torch::Tensor &` -> `const torch::Tensor&`; `std::map< int , T >` -> `std::map<int,T>`."""
    if "/" in text:
        text = _COMMENT.sub(" ", text)
    text = " ".join(text.split())
    if _PUNCT.isdisjoint(text):
        return text  # `int`, `const char`: most parameter types, no regex needed
    text = _AROUND_PUNCT.sub(r"\1", text)
    # a word after `*`/`&` keeps a space: `int* const`, `T& const`-like qualifiers stay readable
    return _PUNCT_BEFORE_WORD.sub(r"\1 ", text)


def _name_node(declarator: Any) -> Any:
    """The identifier a (possibly nested) declarator declares, or None for an unnamed one."""
    node = declarator
    while node is not None:
        if node.type in ("identifier", "field_identifier"):
            return node
        if node.type not in _NAME_WRAPPERS:
            return None
        inner = node.child_by_field_name("declarator")
        if inner is None:  # reference_declarator, variadic_declarator: the name is the last child
            # (an attributed_declarator's is the first: `n [[buffer(2)]]`, a Metal kernel's parameter)
            named = [c for c in node.named_children if c.type not in ("type_qualifier", "attribute_declaration")]
            inner = named[-1] if named else None
        node = inner
    return None


def parameters(fdecl: Any) -> tuple[Param, ...]:
    """Each parameter of a ``function_declarator`` (default None when there is none); `(void)`
    is no parameters, a C-style `...` is ``Param("...", "...")``."""
    plist = fdecl.child_by_field_name("parameters")
    if plist is None:
        return ()
    out: list[Param] = []
    for child in plist.children:
        if child.type == "...":
            out.append(Param("...", "..."))
            continue
        if child.type not in _PARAMETERS:
            continue
        default_node = child.child_by_field_name("default_value")
        end = child.end_byte
        if default_node is not None:
            end = default_node.start_byte
        name_node = _name_node(child.child_by_field_name("declarator"))
        raw = child.text
        base = child.start_byte
        if name_node is not None and name_node.end_byte <= end:
            text = raw[:name_node.start_byte - base] + raw[name_node.end_byte - base:end - base]
            name = name_node.text.decode("utf-8", "replace")
        else:
            text, name = raw[:end - base], ""
        if b"[[" in text:  # attributes are no part of the type (`[[maybe_unused]] int`, `uint n [[buffer(2)]]`)
            text = _ATTRIBUTE.sub(b" ", text)
        text_s = text.decode("utf-8", "replace").rstrip().removesuffix("=").rstrip()
        type_text = normalise_type(text_s)
        if type_text == "void" and not name:
            continue
        default = normalise_default(default_node.text.decode("utf-8", "replace")) if default_node is not None else None
        out.append(Param(name, type_text, default))
    return tuple(out)


def declared_variable(declaration: Any, declarator: Any) -> tuple[str, str]:
    """(name, type) of one declarator of a variable's declaration, a class's field or a range-for
    (`const Model* m = ...` -> (`m`, `const Model*`)), the type normalised; ("", "") when it declares
    no single named object (an array, a structured binding). `Model m(x);`, which tree-sitter may read
    as a function declarator, declares `m`."""
    words = _type_words(declaration.named_children, declaration.child_by_field_name("declarator"))
    suffix = ""
    function = ""  # `R (*f)(args)`: what a pointer to a function returns, and its parameters
    node = declarator
    while node is not None:
        kind = node.type
        if kind in ("identifier", "field_identifier", "type_identifier"):  # a typedef's: a type_identifier
            return node.text.decode("utf-8", "replace"), _written_type(words, suffix, function)
        if kind == "function_declarator" and (pointed := _points_to_function(node)) is not None:
            words, function, suffix = [" ".join(words) + suffix], pointed, ""
        if kind == "pointer_declarator":
            suffix += "*"
        elif kind == "reference_declarator":
            suffix += "&"
            named = [c for c in node.named_children if c.type != "type_qualifier"]
            node = named[-1] if named else None
            continue
        elif kind == "parenthesized_declarator":
            # `(C::*f)`: the grammar leaves `C::` an ERROR before the pointer to a member
            named = node.named_children
            suffix += "".join(c.text.decode("utf-8", "replace") for c in named[:-1] if c.type == "ERROR")
            node = named[-1] if named else None
            continue
        elif kind not in ("init_declarator", "function_declarator"):
            return "", ""
        node = node.child_by_field_name("declarator")
    return "", ""


def _type_words(children: Any, declarator: Any) -> list[str]:
    """The words of a declaration's type as written before its ``declarator``: specifiers,
    attributes and template parameter lists left out."""
    words = []
    for child in children:
        if declarator is not None and child.start_byte >= declarator.start_byte:
            break
        if child.type in _NOT_RETURN_TYPES or child.type in ("template_parameter_list", "template"):
            continue
        text = child.text.decode("utf-8", "replace")
        if text not in _NOT_RETURN_WORDS:
            words.append(text)
    return words


def normalise_default(text: str) -> str:
    return _SPACES.sub(" ", _COMMENT.sub(" ", text)).strip()


def parenthesized_name(fdecl: Any) -> tuple[Any, Any] | None:
    """(the return type, the name) of ``T (name)(params)``, T a typedef's name, which the grammar reads as a
    function ``T`` of one unnamed parameter of type ``name`` that returns a function (no C++ function does):
    Catch2's ``static constexpr result_type (max)() {``, written so that Windows' ``max`` macro does not
    expand. None for any other ``fdecl``, and where ``T`` is written as macros are: uriparser's
    ``URI_FUNC(ParseAuthority)(...)`` names its function by the macro, as written."""
    inner = fdecl.child_by_field_name("declarator")
    if inner is None or inner.type != "function_declarator":
        return None
    returned, params = inner.child_by_field_name("declarator"), inner.child_by_field_name("parameters")
    if returned is None or returned.type != "identifier" or params is None or params.named_child_count != 1 \
            or MACRO_NAME.fullmatch(returned.text.decode("utf-8", "replace")) is not None:
        return None
    param = params.named_children[0]
    if param.type != "parameter_declaration" or param.named_child_count != 1 \
            or param.named_children[0].type != "type_identifier":
        return None
    return returned, param.named_children[0]


def invented_scope(fdecl: Any) -> tuple[Any, Any] | None:
    """(the word before the name, the name) where the grammar joined two words before ``fdecl``'s
    parameters by a `::` it invented: `void JEMALLOC_NOTHROW f(...)` read as `JEMALLOC_NOTHROW::f`, the
    macro unknown to the file; None for any other ``fdecl``."""
    named = fdecl.child_by_field_name("declarator")
    if named is None or named.type != "qualified_identifier" or not any(c.is_missing for c in named.children):
        return None
    scope, name = named.child_by_field_name("scope"), named.child_by_field_name("name")
    return None if scope is None or name is None else (scope, name)


def conversion_cast(fdecl: Any) -> Any:
    """The `operator_cast` whose parameters and qualifiers ``fdecl`` holds (a conversion function's, `operator
    T*() const`: through the abstract pointer and reference declarators of its type); None for any other."""
    cast = fdecl.parent
    while cast is not None and cast.type != "operator_cast":
        if cast.type not in ("abstract_pointer_declarator", "abstract_reference_declarator"):
            return None
        cast = cast.parent
    return cast


def return_type(definition: Any, fdecl: Any) -> str:
    """The return type of the function ``definition`` (a function_definition, declaration or
    field_declaration node) whose declarator is ``fdecl``; "" for constructors and destructors."""
    if fdecl.type == "abstract_function_declarator":  # a conversion function: `operator T*() const` returns T*
        cast = conversion_cast(fdecl)
        if cast is None or not cast.children:  # what follows the `operator` keyword, qualifiers too
            return ""
        return normalise_type(cast.text[cast.children[0].end_byte - cast.start_byte:fdecl.start_byte - cast.start_byte]
                              .decode("utf-8", "replace"))
    trailing = next((c for c in fdecl.named_children if c.type == "trailing_return_type"), None)
    if trailing is not None:
        inner = trailing.named_children[-1] if trailing.named_child_count else trailing
        return normalise_type(inner.text.decode("utf-8", "replace"))
    misread = parenthesized_name(fdecl)
    if misread is not None:
        return misread[0].text.decode("utf-8", "replace")
    declarator = definition.child_by_field_name("declarator")
    words = _type_words(definition.children, declarator)
    if not words:
        return ""
    joined = invented_scope(fdecl)
    if joined is not None:
        # `ZSTDLIB_API ZSTD_bounds f(...)`, the export macro unknown to the file: the grammar takes the macro for
        # the type and joins the type to the name; the type is the word before the name
        scope = joined[0].text.decode("utf-8", "replace")
        if MACRO_NAME.fullmatch(words[-1]) and not MACRO_NAME.fullmatch(scope):
            words[-1] = scope
    suffix = ""
    function = ""  # `R (*f(params))(args)`: f returns a pointer to a function, of these parameters
    node = declarator
    while node is not None and node != fdecl:
        if node.type == "function_declarator":
            pointed = _points_to_function(node)
            if pointed is None:
                break
            words, function, suffix = [" ".join(words) + suffix], pointed, ""
        elif node.type == "pointer_declarator":
            quals = " ".join(c.text.decode() for c in node.named_children if c.type == "type_qualifier")
            suffix += "*" + (f" {quals}" if quals else "")
        elif node.type == "reference_declarator":
            suffix += node.children[0].text.decode() if node.children else "&"
        inner = node.child_by_field_name("declarator")
        if inner is None:
            named = [c for c in node.named_children if c.type != "type_qualifier"]
            inner = named[-1] if named else None
        node = inner
    return _written_type(words, suffix, function)


def _points_to_function(node: Any) -> str | None:
    """The parameter list, as written, of the function that the function_declarator ``node`` points to
    (`R (*f)(args)`, the name in parentheses: ``(args)``); None when ``node`` declares a function itself."""
    inner = node.child_by_field_name("declarator")
    if inner is None or inner.type != "parenthesized_declarator":
        return None
    params = node.child_by_field_name("parameters")
    return params.text.decode("utf-8", "replace") if params is not None else "()"


def _written_type(words: list[str], suffix: str, function: str) -> str:
    """A type from its words and declarator marks; with ``function`` (a parameter list), a pointer (the marks)
    to a function of those parameters that returns the words: `R(*)(args)`."""
    return normalise_type(" ".join(words) + (f"({suffix}){function}" if function else suffix))


# -- torch operator schemas --------------------------------------------------------------------

_SCHEMA = re.compile(r"^\s*([\w:]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", re.S)


def parse_schema(schema: str) -> dict[str, Any] | None:
    """`name.overload(Type name=default, *, Type kw) -> Ret` as ``{"name", "overload", "params",
    "returns"}``; params are ``[name, type, default, keyword_only]``; None when it is not a schema."""
    m = _SCHEMA.match(schema)
    if not m:
        return None
    name, overload, args, returns = m.groups()
    params: list[list[Any]] = []
    keyword_only = False
    for arg in split_top_level(args):
        arg = arg.strip()
        if not arg:
            continue
        if arg == "*":
            keyword_only = True
            continue
        text, eq, default = arg.partition("=")
        text = text.strip()
        type_text, _, pname = text.rpartition(" ")
        if not type_text:  # `Tensor` alone: an unnamed argument
            type_text, pname = pname, ""
        params.append([pname, _SPACES.sub(" ", type_text).strip(), default.strip() if eq else None,
                       keyword_only])
    return {"name": name.rsplit("::", 1)[-1], "overload": overload or "", "params": params,
            "returns": _SPACES.sub(" ", returns).strip()}

