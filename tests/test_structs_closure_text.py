"""What extractor.structs.closure reads from a header's text alone: its patterns, written to start
with a literal (fast for the regex engine), find what their plain forms find."""

from __future__ import annotations

import random
import re

from extractor.structs import closure
from extractor.structs.closure import declared_names, identifiers, scan_text, without_comments

# Fragments of C/C++ with the cases the rewritten patterns must tell apart: a keyword glued to a
# word before it, at the text's start, after a newline or punctuation; comments and literals that
# hold `//` and `/*`.
FRAGMENTS = [b"typedef int T;", b"mytypedef int U;", b"typedef void (*Fn)(int);", b"using A = int;",
             b"xusing B = int;", b"using typename ns::C;", b"using ns::D;", b"enum E { E1, E2 = 3 };",
             b"enum class F : int { F1 };", b"inum G { G1 };", b"\n", b" ", b";", b"(", b"_", b"x",
             b"// typedef int H;\n", b"/* using I = int; */", b'"// not a comment"', b"'/'", b'R"(/* raw */)"',
             b"/", b"*", b"#define J 1\n", b"struct K { int k; };", b"\t", b"1"]


def _texts(count: int) -> list[bytes]:
    rng = random.Random(11)
    return [b"".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 25))) for _ in range(count)]


def _plain(pattern: re.Pattern[bytes]) -> re.Pattern[bytes]:
    """The pattern as first written: ``\\bword`` where it now reads ``word(?<!\\wword)``."""
    return re.compile(re.sub(rb"^(\w+)\(\?<!\\w\1\)", rb"\\b\1", pattern.pattern), pattern.flags)


def test_the_patterns_that_start_with_a_word_find_what_their_word_boundary_forms_find():
    rewritten = [p for p in (*closure._DECLARES, closure._ENUM_BODY) if p.pattern[:1].isalpha()]
    assert len(rewritten) == 5  # typedef twice, using twice, enum
    texts = _texts(4000)
    for pattern in rewritten:
        plain = _plain(pattern)
        assert plain.pattern.startswith(rb"\b") and plain.pattern != pattern.pattern
        found = 0
        for text in texts:
            assert pattern.findall(text) == plain.findall(text), text
            found += len(plain.findall(text))
        assert found > 100, pattern.pattern


def test_comments_are_blanked_and_literals_kept_as_the_first_form_did():
    first_form = re.compile(rb'R"([^()\\ \n]{0,16})\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                            rb"'(?:\\.|[^'\\\n])+'|(//[^\n]*|/\*(?:.|\n)*?\*/)")
    for text in _texts(4000):
        expected = first_form.sub(lambda m: b" " if m.group(2) is not None else m.group(0), text) \
            if b"/" in text else text
        assert without_comments(text) == expected, text


def test_declared_names_of_a_small_header():
    text = (b"mytypedef int U;\ntypedef int T; xusing B = int;\nusing A = int;\n"
            b"// typedef int H;\nenum E { E1, E2 = 3 };\nstruct K { int k; };\n#define J 1\n")
    names = declared_names(text)
    assert {"T", "A", "E1", "E2", "K", "J"} <= names
    assert "H" not in names  # in a comment
    # glued to a word before the keyword, `mytypedef int U;` and `xusing B = int;` are statements at
    # namespace scope whose declarators end with U and B: read as variables' names
    assert {"U", "B"} <= names


def test_declared_names_are_no_words_of_paths_scoped_enumerators_or_missed_braced_defaults():
    # `enum` of an include's path once made the identifiers of the namespace that follows, up to its
    # first `}`, enumerators (torch's nn/options/loss.h "declared" kMean and reduction that way)
    text = (b"#include <torch/enum.h>\n#include \"util/enum.hpp\"\nnamespace nn {\n"
            b"TORCH_ARG(reduction_t, reduction) = torch::kMean;\n"
            b"struct Options { int k; };\n}\nenum class Mode { fast, slow };\nenum Plain : int { p1, p2 = 3 };\n"
            b"at::Tensor nll_loss(const at::Tensor& self, const std::optional<at::Tensor>& weight={}, int r=1);\n"
            b"int pad(int x, std::array<int, 2> p = { 1, 2 });\n")
    names = declared_names(text)
    assert {"nn", "Options", "Mode", "Plain", "p1", "p2", "nll_loss", "pad"} <= names
    # a macro's arguments in the namespace are no enumerators; a scoped enum's are named through its name
    assert not {"reduction_t", "reduction", "kMean", "fast", "slow"} & names


def test_identifiers_leave_out_messages_but_not_strings_that_name_something():
    text = (b'static_assert(sizeof(int) == 4, "use the FORWARD_DEFAULT_ARGS macro");\n'
            b'const char* m = R"x(RAW_NAME)x" "tail"_sv; char c = \'q\'; // COMMENT_NAME\n'
            b'_Pragma("omp parallel num_threads(ARCHDIFF_THREADS)")\n#pragma push_macro("PUSHED")\n'
            b'void f() __attribute__((alias("aliased_target")));\nint used_name;\n')
    names = identifiers(text)
    assert not {"FORWARD_DEFAULT_ARGS", "RAW_NAME", "tail", "COMMENT_NAME"} & names
    # a pragma's text expands macros, an alias names a symbol, push_macro a macro; a literal's
    # suffix is an operator's name
    assert {"ARCHDIFF_THREADS", "PUSHED", "aliased_target", "used_name", "m", "_sv", "q"} <= names
    assert identifiers(b"int a; // b\n") == {"a"}  # without a quote: the comments only


def test_a_scan_reads_directives_at_line_starts_only():
    text = b"#ifndef G_H\n#define G_H\n  #include \"a.h\"\nint x; # include <b.h>\n#if X\n#include <c.h>\n#endif\n" \
           b"#undef Y\n#pragma pack(push, 1)\n#pragma pack(pop)\n#endif\n"
    scan = scan_text(text)
    assert scan.includes == (('"', "a.h", True), ("<", "c.h", False))
    assert scan.undefines == frozenset({"Y"}) and scan.pack_balanced and scan.changes_context
    assert not scan_text(b"int a; # pragma pack(1)\n").changes_context  # not at a line's start


def test_a_variable_is_a_name_where_it_stands_at_namespace_scope():
    text = (b"namespace ns {\nconst int kTop = 4;\nint g_plain, g_second = 2;\nFoo g_obj{1};\n"
            b"int g_attr __attribute__((unused));\nint g_call = compute(1);\nC10_DEFINE_bool(flag, true, \"x\");\n"
            b"struct A { const int kMember = 1;\n"
            b"  int f() const { const int kLocal = 2; return kLocal; } };\n"
            b"inline int g(int x, const int y = 3) {\n  const auto kInG = x;\n  return kInG;\n}\n"
            b"TORCH_LIBRARY(aten, m) {\n  const int kInMacroBlock = 1;\n}\n"
            b"namespace inner __attribute__((visibility(\"default\"))) {\nconst char* const kInner = \"{\";\n}\n"
            b"const int arr[] = {1, 2};\nstruct Fwd;\nstruct Held held;\n}\n")
    names = declared_names(text)
    assert "held" in names and not {"Fwd", "Held"} & names  # a class declared, not defined, is not a name
    # a namespace's (an attribute's parentheses in its head included), and a macro's block, which
    # may be one: kept, every declarator of a statement; a class's member, a function's locals and
    # parameters, a macro call's and an initializer's names: not
    assert {"kTop", "g_plain", "g_second", "g_obj", "g_attr", "g_call", "kInner", "arr", "kInMacroBlock"} <= names
    assert not {"kMember", "kLocal", "kInG", "y", "compute", "C10_DEFINE_bool", "flag"} & names
    # braces that do not balance outside the directives (`#if` branches that each open a
    # namespace): every statement counts
    unbalanced = declared_names(text + b"#if X\nnamespace a {\n#else\nnamespace b {\n#endif\n")
    assert {"kMember", "kLocal", "kInG"} <= unbalanced


def test_any_name_of_files_answers_what_the_union_of_their_names_answers(tmp_path):
    """The planner asks whether some files declare (or mention) one of a few names: told file by
    file and stopped at the first, the answer is the one the union of the files' names gives, and
    the files after that first are not read at all."""
    rng = random.Random(5)
    files = []
    for i, text in enumerate(_texts(60)):
        path = tmp_path / f"h{i}.h"
        path.write_bytes(text)
        files.append(str(path))
    words = sorted({w for f in files for w in closure.Includes([tmp_path]).mentioned_in([f])} | {"absent"})
    includes = closure.Includes([tmp_path])
    asked = 0
    for _ in range(400):
        chosen = rng.sample(files, rng.randrange(0, 8))
        names = frozenset(rng.sample(words, rng.randrange(0, 4)))
        assert includes.declares_any(chosen, names) == bool(includes.declared_in(chosen) & names), (chosen, names)
        assert includes.mentions_any(chosen, names) == bool(includes.mentioned_in(chosen) & names), (chosen, names)
        asked += bool(includes.declared_in(chosen) & names)
    assert asked > 20  # the questions answered yes, not only no
    first, second = tmp_path / "first.h", tmp_path / "second.h"
    first.write_bytes(b"struct Graph { int n; };\n")
    second.write_bytes(b"struct Node { int n; };\n")
    fresh = closure.Includes([tmp_path])
    assert fresh.declares_any([str(first), str(second)], frozenset({"Graph"}))
    assert str(second) not in fresh._declared  # stopped at the first file that answers
    assert not fresh.declares_any([str(first), str(second)], frozenset({"Value"}))
    assert str(second) in fresh._declared
