"""A definition the source's scan found under other scopes than the compiler gives it (the parser
lost its way around a macro or a skipped block) is the layout the compiler made at that line, not
one more, unresolved, record."""

from __future__ import annotations

import shutil

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system


@pytest.fixture(autouse=True)
def _gxx() -> None:
    """Every test here compiles: without g++ it fails with its name, never skips."""
    assert shutil.which("g++"), "g++ is required (Debian package g++)"


# A conditional block that keeps an old, unbalanced signature for reference: the compiler skips it,
# tree-sitter parses it, and the structs after it are scanned under the wrong scopes (inside
# `reset`, or outside `proj`), beside a recovered parse that finds `proj::` (torch's TensorImpl.h
# and ivalue.h: 135 of the tree's struct records were such phantoms, each also costing a compile
# after every includer's lines, trying to lay out a name no compile can give). torch's is an `#if 0`,
# which the scan no longer reads at all (parse.blank_disabled_groups); an option no build sets is the
# same shape to the scan.
LOST_SCOPE = """\
#pragma once
#define MY_API __attribute__((visibility("default")))
namespace proj {
struct Options { int level; };
// the old signature, kept for reference
#ifdef PROJ_OLD_SIGNATURE
  void reset(const Options& options) const {
#endif
struct MY_API Meta {
  int version;
  long stamp;
};
struct Plain { char c; };
}  // namespace proj
"""


def test_a_definition_scanned_under_the_wrong_scopes_is_the_one_the_compiler_laid_out_at_its_line(tmp_path):
    src = tmp_path / "proj" / "src"
    src.mkdir(parents=True)
    (src / "meta.h").write_text(LOST_SCOPE)
    (src / "use.cc").write_text('#include "meta.h"\n')
    bundle = extract_system([str(tmp_path / "proj")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    records = {(s["qualname"], s["line"]): s["method"] for s in bundle["structs"] if s["path"] == "src/meta.h"}
    assert records == {("proj::Options", 4): "probe-g++", ("proj::Meta", 9): "probe-g++",
                       ("proj::Plain", 13): "probe-g++"}


def test_the_scan_keeps_one_definition_where_its_second_parse_finds_the_scopes_the_first_lost():
    """The C/C++ scan parses such a file again with the conditional directives blanked; a definition
    the first parse placed outside the scopes the second finds around it (same kind, same line) is
    the second's, and the calls made in its body go with it: one graph node, not two."""
    from extractor.cpp.parse import parse_source
    from extractor.cpp.scan import scan_cpp
    from extractor.model import Language, ParsedFile

    text = LOST_SCOPE.replace("struct Options { int level; };\n",
                              "struct Options { int level; };\ninline int helper(int x) { return __builtin_abs(x); }\n")
    data = text.encode()
    facts = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert sorted((d.kind, d.qual) for d in facts.defs if d.kind != "namespace") == [
        ("function", "proj::helper"), ("function", "proj::reset"), ("struct", "proj::Options"),
        ("struct", "proj::reset::Meta"), ("struct", "proj::reset::Plain")]
    assert facts.calls == (("proj::helper", (("__builtin_abs", 5),)),)
