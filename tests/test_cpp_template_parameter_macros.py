"""A macro's use as a template's whole parameter: Highway's `template <class D, HWY_IF_V_SIZE_LE_D(D, 16)>`
(an `enable_if` the macro writes), fmt's `FMT_ENABLE_IF(...)`. Each was an ERROR node to the grammar: 4,964
in Highway's headers, 3,340 of numpy's 6,513, and a definition after one could lose its namespace (numpy's
vendored `Zero` at global scope). Written as `class=void`, padded, newlines kept."""

from __future__ import annotations

from extractor.cpp.parse import write_parameter_macros
from extractor.cpp.scan import scan_source
from extractor.model import Language

OPS = b"""namespace hwy {
namespace HWY_NAMESPACE {

template <class D, HWY_IF_V_SIZE_LE_D(D, 16), HWY_IF_NOT_FLOAT_NOR_SPECIAL_D(D)>
HWY_API VFromD<D> Zero(D d) {
  return MakeZero(d);
}

template <class D,
          HWY_IF_LANES_GT_D(D,
                            1)>
HWY_API VFromD<D> One(D d) {
  return Set(d, 1);
}

template <typename T, typename = std::enable_if_t<(kLanes > 0)>>
T Lanes(T t) { return Count(t); }

}  // namespace HWY_NAMESPACE
}  // namespace hwy
"""


def test_definitions_after_a_parameter_macro_keep_their_namespace_and_no_error_is_left():
    facts = scan_source(OPS, Language.CPP)
    assert facts.errors == 0
    assert [(d.qual, d.line) for d in facts.defs if d.kind == "function"] == [
        ("hwy::HWY_NAMESPACE::Zero", 5), ("hwy::HWY_NAMESPACE::One", 12), ("hwy::HWY_NAMESPACE::Lanes", 17)]


def test_only_a_whole_parameter_written_as_macros_are_is_rewritten():
    written = write_parameter_macros(OPS)
    assert len(written) == len(OPS) and written.count(b"\n") == OPS.count(b"\n")
    assert written.split(b"\n")[3] == b"template <class D, class=void               , class=void" + b" " * 23 + b">"
    assert b"std::enable_if_t<(kLanes > 0)>" in written
    for kept in (b"template <int N = MAX_OF(1, 2)> void g();", b"template <class T, X_Y(T)> struct S {};",
                 b"#define T template <class D, HWY_IF_F16_D(D)>\n", b"template <class D, HWY_IF_F16_D(D) void f();",
                 b"template <class D, IF_X(D,\n 1)>\nV f();"):  # no room before its line break: lines stay
        assert write_parameter_macros(kept) == kept, kept
