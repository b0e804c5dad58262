"""A macro from a header outside the system, written where only specifiers or attributes can be.

Velox writes folly's `FOLLY_ALWAYS_INLINE` before its members (`FOLLY_ALWAYS_INLINE void call(...)`) and
does not hold folly: no definition says what the word is, the grammar read it as a type and the member
as an ERROR, and in `BaseVector.h` the class's 80 members after the first such use became functions
of the namespace. A word spelled as macros are, followed on its line by a keyword that begins a
declaration, can be nothing but such a macro: it is blanked there, as the macros a file defines so
are. (folly's own are listed in macros.yaml now; the fixture's are named otherwise, as another library's
would be.)"""

from __future__ import annotations

from extractor.cpp.parse import blank_specifier_macros
from extractor.cpp.scan import scan_source
from extractor.model import Language
from extractor.native.calls import each_call

VECTOR = b"""#pragma once
#include <acme/Portability.h>

namespace facebook::velox {

#define VELOX_TYPE_WIDTH int

/// Get / set the CUDA virtual size of a vector: ACME_EXPORT static words in a doc comment stay.
class BaseVector {
 public:
  ACME_ALWAYS_INLINE bool isNullAt(int idx) const {
    return checkNull(idx);
  }

  ACME_ALWAYS_INLINE virtual void setNull(int idx, bool isNull) {
    markNull(idx, isNull);
  }

  ACME_ALWAYS_INLINE static std::optional<int>
  compareNulls(bool thisNull, bool otherNull) {
    return compareOf(thisNull, otherNull);
  }

  static constexpr const char* kName = "NOT static";

  VELOX_TYPE_WIDTH width() const { return widthOf(this); }

  LUALIB_API static BaseVector* create(int size);

  int encoding() const { return encodingOf(this); }

  ACME_ALWAYS_INLINE Status validate(const Options& options) const {
    return validateOf(this, options);
  }

  ACME_ALWAYS_INLINE std::pair<int, int>
  span(int from, int length) const {
    return spanOf(from, length);
  }
};

ACME_ALWAYS_INLINE inline int countNulls(const BaseVector& v) { return v.size(); }

}  // namespace facebook::velox
"""


def test_members_after_an_unknown_specifier_macro_stay_in_their_class():
    facts = scan_source(VECTOR, Language.CPP)
    assert facts.errors == 0
    functions = [(d.qual, d.line) for d in facts.defs if d.kind == "function"]
    assert functions == [
        ("facebook::velox::BaseVector::isNullAt", 11), ("facebook::velox::BaseVector::setNull", 15),
        ("facebook::velox::BaseVector::compareNulls", 20), ("facebook::velox::BaseVector::width", 26),
        ("facebook::velox::BaseVector::create", 28), ("facebook::velox::BaseVector::encoding", 30),
        ("facebook::velox::BaseVector::validate", 32), ("facebook::velox::BaseVector::span", 37),
        ("facebook::velox::countNulls", 42)]
    calls = {(caller, callee) for caller, callee, _line in each_call(facts.calls)}
    assert ("facebook::velox::BaseVector::isNullAt", "checkNull") in calls
    assert ("facebook::velox::BaseVector::compareNulls", "compareOf") in calls
    assert ("facebook::velox::BaseVector::validate", "validateOf") in calls
    assert [d.returns for d in facts.defs if d.qual.endswith("::validate")] == ["Status"]
    assert ("facebook::velox::BaseVector::span", "spanOf") in calls


def test_read_as_written_the_same_class_loses_its_members(monkeypatch):
    """What the scan saw before: the fixture is a real test of the blanking."""
    from extractor.cpp import parse

    monkeypatch.setattr(parse, "blank_specifier_macros", lambda data, keep=(): data)
    facts = scan_source(VECTOR, Language.CPP)
    assert facts.errors > 0
    assert "facebook::velox::BaseVector::compareNulls" not in {d.qual for d in facts.defs}


def test_only_the_macro_word_is_blanked_and_nothing_else():
    blanked = blank_specifier_macros(VECTOR)
    assert len(blanked) == len(VECTOR)
    assert b"ACME_ALWAYS_INLINE" not in blanked and b"LUALIB_API" not in blanked
    # a doc comment's words, a literal's, the file's own macro and its definition, the include: as written
    for kept in (b"ACME_EXPORT static words", b'"NOT static"', b"VELOX_TYPE_WIDTH width()",
                 b"#define VELOX_TYPE_WIDTH int", b"<acme/Portability.h>"):
        assert kept in blanked, kept
    # a name spelled otherwise, or with no declaration's keyword after it on its line
    # a word spelled as macros are after it (`BOOL WINAPI DllMain(...)`: the first word a type), a
    # qualified function's name (`HRESULT Widget::Draw()`)
    for kept in (b"Widget int x;\n", b"FOO_BAR\nint x;\n", b"FOO_BAR(x) int y;\n", b"return A_B + int(c);\n",
                 b"BOOL WINAPI DllMain(void* h);\n", b"HRESULT Widget::Draw();\n", b"UINT32 __stdcall f();\n"):
        assert blank_specifier_macros(kept) == kept, kept
    # C's layout, the name on the line after the type and its `*` (numpy's `NPY_NO_EXPORT PyObject *` / `name(`)
    assert blank_specifier_macros(b"NPY_NO_EXPORT PyObject *\nPyArray_New(int n)\n{") == \
        b"              PyObject *\nPyArray_New(int n)\n{"
    assert blank_specifier_macros(b"return A * B\n(c);\n") == b"return A * B\n(c);\n"
    assert blank_specifier_macros(b"ACME_ALWAYS_INLINE void f();\n", keep=("ACME_ALWAYS_INLINE",)) == \
        b"ACME_ALWAYS_INLINE void f();\n"
