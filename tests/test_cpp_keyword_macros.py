"""Macros that are a piece of C++'s own syntax, as a header-only library writes its main class with them.

nlohmann's json, vendored by a great many C++ systems, writes its `basic_json` class so: a macro that is
the class's template header (`NLOHMANN_BASIC_JSON_TPL_DECLARATION`, eleven parameters), a macro that is
an access specifier (`JSON_PRIVATE_UNLESS_TESTED:`, `public` for its tests), `try` and `catch` as macros
(`if(true)` and `if(false)` when exceptions are off), `explicit` as one, a result attribute that is
MSVC's `_Check_return_` there, and `#if` groups in the middle of a declaration (a `constexpr` by C++
version, template arguments by compiler). Read as written, the grammar lost the class at its header,
read the access label as a statement's label and closed the class at a `catch`: its members became
functions of the namespace or of no scope (nlohmann's own repository: 110 definitions at global scope,
ctags recall 96.3%). The fixture is a small library of those shapes, its macros in a header of their
own as nlohmann's are."""

from __future__ import annotations

from extractor.cpp.parse import attribute_macros, join_conditional_blocks, write_keyword_macros
from extractor.model import EdgeKind

from tests.cpp_support import cpp_graph, edges

SCOPE = """#pragma once

#if defined(ACME_TESTS_PRIVATE)
    #define ACME_PRIVATE_UNLESS_TESTED public
#else
    #define ACME_PRIVATE_UNLESS_TESTED private
#endif

#if (defined(__cpp_exceptions) || defined(__EXCEPTIONS)) && !defined(ACME_NOEXCEPTION)
    #define ACME_THROW(exception) throw exception
    #define ACME_TRY try
    #define ACME_CATCH(exception) catch(exception)
#else
    #define ACME_THROW(exception) std::abort()
    #define ACME_TRY if(true)
    #define ACME_CATCH(exception) if(false)
#endif

#if defined(_MSC_VER)
    #define ACME_WARN_UNUSED_RESULT _Check_return_
#else
    #define ACME_WARN_UNUSED_RESULT [[nodiscard]]
#endif

#if ACME_USE_IMPLICIT_CONVERSIONS
    #define ACME_EXPLICIT
#else
    #define ACME_EXPLICIT explicit
#endif

#define ACME_BASIC_VALUE_TPL_DECLARATION                                \\
    template<template<typename, typename, typename...> class ObjectType, \\
             class StringType, class NumberType,                         \\
             template<typename> class AllocatorType>

#define ACME_BASIC_VALUE_TPL \\
    basic_value<ObjectType, StringType, NumberType, AllocatorType>
"""

VALUE = """#pragma once
#include <stdexcept>
#include "acme/detail/macro_scope.hpp"

namespace acme {

ACME_BASIC_VALUE_TPL_DECLARATION
class basic_value
{
  public:
    using size_type = unsigned long;

  ACME_PRIVATE_UNLESS_TESTED:
    using lexer = ::acme::detail::lexer_base<basic_value>;

    int check_invariants() const;

  public:
    ACME_WARN_UNUSED_RESULT
    static basic_value meta()
    {
        return basic_value();
    }

    int at(size_type idx) const
    {
        ACME_TRY
        {
            return element(idx);
        }
        ACME_CATCH (std::out_of_range&)
        {
            ACME_THROW(std::out_of_range("index"));
        }
    }

    template < typename ValueType, typename Fallback = int,
               typename Check = all_of<not_pointer<ValueType>,
#if defined(ACME_HAS_CPP_17)
                                       not_view<ValueType>,
#endif
                                       not_value<ValueType>> >
#if defined(ACME_HAS_CPP_14)
    constexpr
#endif
    ValueType get() const
    {
        return convert<ValueType>();
    }

    ACME_EXPLICIT operator bool() const
    {
        return at(0) != 0;
    }

    int size() const { return count(); }

  private:
    int element(size_type idx) const;
    int count() const;
};

ACME_BASIC_VALUE_TPL_DECLARATION
inline bool operator==(const ACME_BASIC_VALUE_TPL& lhs, const ACME_BASIC_VALUE_TPL& rhs)
{
    return lhs.size() == rhs.size();
}

}  // namespace acme
"""

FILES = {"include/acme/detail/macro_scope.hpp": SCOPE, "include/acme/value.hpp": VALUE}
CLASS = "cpp:acme::basic_value::"


def test_the_macros_are_read_for_what_they_are():
    macros = set(attribute_macros(SCOPE.encode()))
    assert {"ACME_BASIC_VALUE_TPL_DECLARATION(template)", "ACME_PRIVATE_UNLESS_TESTED(private)",
            "ACME_TRY(try)", "ACME_CATCH(catch)", "ACME_WARN_UNUSED_RESULT", "ACME_EXPLICIT"} <= macros
    # a type's name (`basic_value<...>`), a throw (a call), are none of these
    assert not {m for m in macros if m.startswith(("ACME_BASIC_VALUE_TPL(", "ACME_BASIC_VALUE_TPL ", "ACME_THROW"))}
    assert "ACME_BASIC_VALUE_TPL" not in macros


def test_the_class_keeps_its_members_and_their_access(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    assert "include/acme/value.hpp" not in {d.path for d in graph.diagnostics if d.code == "parse-errors"}
    nodes = {n.id: n for n in graph.nodes}
    members = {i.removeprefix(CLASS) for i in nodes if i.startswith(CLASS)}
    assert {"meta", "at", "get", "operator bool", "size", "check_invariants", "element", "count"} <= members
    assert "template" in nodes["cpp:acme::basic_value"].tags
    # no member read as a function of the namespace or of no scope
    assert not {i for i in nodes if i.removeprefix("cpp:").split("::")[-1] in members and not i.startswith(CLASS)}
    access = {name: nodes[CLASS + name].api.split(":")[0] for name in ("check_invariants", "at", "element")}
    assert access == {"check_invariants": "internal", "at": "public", "element": "internal"}
    calls = edges(graph, EdgeKind.CALLS)
    assert (CLASS + "at", CLASS + "element") in calls  # inside the `try`
    assert (CLASS + "size", CLASS + "count") in calls  # after the `catch`
    assert (CLASS + "operator bool", CLASS + "at") in calls
    # the free operator after the class, with the same header, is the namespace's and a template
    assert "template" in nodes["cpp:acme::operator=="].tags


def test_a_keyword_is_written_only_where_its_use_is_and_where_it_fits():
    keywords = {"ACME_TRY": "try", "ACME_CATCH": "catch", "PRIV": "private", "ACME_PRIVATE": "private"}
    data = (b"  ACME_TRY\n  {\n  }\n  ACME_CATCH (std::exception& e) {}\n"
            b"  ACME_PRIVATE:\n  PRIV:\n  ACME_PRIVATE::x = 1;\n#define T ACME_TRY {\n  ACME_TRY;\n")
    written = write_keyword_macros(data, keywords)
    assert len(written) == len(data)
    assert written.splitlines() == [
        b"  try     ", b"  {", b"  }", b"  catch      (std::exception& e) {}",
        b"  private     :",
        b"  PRIV:",  # `private` does not fit in four bytes
        b"  ACME_PRIVATE::x = 1;",  # a scope's name, no label
        b"#define T ACME_TRY {",  # a directive
        b"  ACME_TRY;"]  # no block after it


def test_a_group_in_the_middle_of_a_declaration_is_read_through():
    data = VALUE.encode()
    joined = join_conditional_blocks(data)
    assert len(joined) == len(data)
    lines = [line.strip() for line in joined.decode().splitlines()]
    assert lines[37:46] == ["typename Check = all_of<not_pointer<ValueType>,", "", "not_view<ValueType>,", "",
                            "not_value<ValueType>> >", "", "constexpr", "", "ValueType get() const"]
    # a constructor's member initializers by configuration (Triton's `InferenceResponse`)
    ctor = b"R::R(int a)\n  : a_(a), b_(0)\n#ifdef ACME_STATS\n  ,\n  stats_(0)\n#endif\n{\n}\n"
    assert join_conditional_blocks(ctor) == ctor.replace(b"#ifdef ACME_STATS", b" " * 17).replace(b"#endif", b" " * 6)
    # ... and the first of them (fmt's `format_arg_store(const Args&... args)` / `:` / `#if` / a base's)
    first = b"S(int a)\n  :\n#if ACME_OLD_GCC\n  Base(*this),\n#endif\n  a_(a) {}\n"
    assert join_conditional_blocks(first) == first.replace(b"#if ACME_OLD_GCC", b" " * 16).replace(b"#endif", b" " * 6)
    # between declarations, a group whose body ends a statement, and one after a macro's use on a line of
    # its own (fmt's `FMT_GCC_PRAGMA("GCC push_options")`): as written
    for kept in ("int a;\n#ifdef X\nint b\n#endif\n;\n", "f(a,\n#ifdef X\n  b);\n#endif\n",
                 "class C {\n public:\n#ifdef X\n  int debug() const\n#endif\n};\n",
                 'ACME_PRAGMA("push_options")\n#ifndef __OPTIMIZE__\nACME_PRAGMA("optimize")\n#endif\n',
                 "ACME_BEGIN_NAMESPACE\n#ifdef ACME_MODULE\nACME_EXPORT_BEGIN\n#endif\n"):
        assert join_conditional_blocks(kept.encode()) == kept.encode(), kept


def test_a_class_the_grammar_closes_early_keeps_the_members_before_the_brace():
    # `try`/`catch` macros of a library outside the system, unread: the grammar closed the class at the
    # `catch`'s block and read the next member as a function returning the class, `class value {...}
    # size() const {...}`, which no C++ is; the class and the members it holds are the class's
    from extractor.cpp.scan import scan_source
    from extractor.model import Language

    code = b"""namespace acme {
class value {
  public:
    int at(int idx) const
    {
        TRY_IT
        {
            return element(idx);
        }
        CATCH_IT (std::out_of_range&)
        {
            fail();
        }
    }

    int size() const
    {
        return count();
    }
};
}
"""
    quals = {(d.qual, d.line) for d in scan_source(code, Language.CPP).defs}
    assert {("acme::value", 2), ("acme::value::at", 4)} <= quals
    assert ("acme::size", 16) in quals  # after the brace: as the grammar read it
