"""Conditional groups that tree-sitter cannot read as written, in shapes NVIDIA's libraries use for
optional bfloat16 support (FasterTransformer's torch ops and decoders): a group that continues an
if-else chain, and a group whose two branches each open the block that follows it. No preprocessor
is run: the file is read as the preprocessor would read it with the condition holding."""

from __future__ import annotations

import pytest

from extractor.cpp.facts import CppFacts
from extractor.cpp.parse import join_conditional_blocks, keep_first_of_opening_branches, parse_source
from extractor.cpp.scan import scan_cpp
from extractor.model import Language, ParsedFile
from extractor.native.calls import each_call


def _scan(code: str) -> CppFacts:
    data = code.encode()
    return scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))


ELSE_CHAIN = """\
namespace ops {
int pick(int t) {
    if (t == 0) {
        return 1;
    }
#ifdef ENABLE_BF16
    else if (t == 2) {  // bf16
        return 2;
    }
#endif
    else {
        return 3;
    }
}

int after(int t) { return pick(t); }
}  // namespace ops
"""


def test_a_group_that_continues_an_if_else_chain_keeps_the_function_and_its_namespace_whole():
    facts = _scan(ELSE_CHAIN)
    # before: `pick` ended at the group, its `}` closed the namespace, and `after` lost its namespace
    assert {d.qual: d.line for d in facts.defs if d.kind == "function"} == {"ops::pick": 2, "ops::after": 16}
    assert ("ops::after", "pick", 16) in set(each_call(facts.calls))
    assert facts.errors == 0


def test_only_the_directives_of_such_a_group_are_blanked_in_place():
    joined = join_conditional_blocks(ELSE_CHAIN.encode())
    assert len(joined) == len(ELSE_CHAIN) and joined.count(b"\n") == ELSE_CHAIN.count("\n")
    assert b"#ifdef" not in joined and b"#endif" not in joined and b"else if (t == 2)" in joined
    # a group that opens with anything else is left as written
    other = ELSE_CHAIN.replace("    else if (t == 2) {  // bf16", "    if (t == 2) {")
    assert join_conditional_blocks(other.encode()) == other.encode()


BRANCHES_OPEN_BLOCKS = """\
namespace fast {

template<typename T>
void Decoder<T>::forward(int x)
{
    if (x > 1) {
        float alpha = 1.0f;
#ifdef ENABLE_BF16
        if (x == 2) {
            widen(x);
#else
        if (false) {
#endif
            gemm_fp32(x);
        }
        else {
            gemm(x);
        }
    }
    finish(x);
}

template<typename T>
void Decoder<T>::setup()
{
    forward(1);
}

}  // namespace fast
"""


def test_a_group_whose_branches_each_open_a_block_is_read_with_its_first_branch():
    facts = _scan(BRANCHES_OPEN_BLOCKS)
    # both branches kept leave one `{` too many: `setup` was read inside `forward`'s body, silently (a
    # `}` missing at the end; in FasterTransformer's decoders the whole file became one ERROR node)
    assert {d.qual for d in facts.defs if d.kind == "function"} == {"fast::Decoder::forward",
                                                                    "fast::Decoder::setup"}
    calls = set(each_call(facts.calls))
    assert {("fast::Decoder::forward", callee) for callee in ("widen", "gemm_fp32", "gemm", "finish")} <= \
        {(caller, callee) for caller, callee, _line in calls}
    assert ("fast::Decoder::setup", "forward", 26) in calls


HEADS = """\
namespace fs {
Status MakeDirectory(const std::string& dir) {
#ifdef _WIN32
  if (_wmkdir(wide(dir)) == -1)
#else
  if (mkdir(dir.c_str(), 0700) == -1)
#endif
  {
    return Status(errno);
  }
  return Status::Success;
}

#if ACME_HAS_THREE_WAY_COMPARISON
inline std::partial_ordering operator<=>(const Kind lhs, const Kind rhs) noexcept
#else
inline bool operator<(const Kind lhs, const Kind rhs) noexcept
#endif
{
  return order(lhs) < order(rhs);
}

Status DeletePath(const std::string& path) {
  return remove(path);
}
}  // namespace fs
"""


def test_branches_that_each_write_the_head_of_the_body_after_them_are_read_with_the_first():
    # Triton's LocalFileSystem (`if (_wmkdir(...) == -1)` / `#else` / `if (mkdir(...) == -1)` / `#endif` /
    # `{`) and nlohmann's comparison operators: read twice, the body after the group ran over the next
    # function, whose calls became the first's
    facts = _scan(HEADS)
    assert facts.errors == 0
    assert {(d.qual, d.line) for d in facts.defs if d.kind == "function"} == {
        ("fs::MakeDirectory", 2), ("fs::operator<=>", 15), ("fs::DeletePath", 23)}
    calls = {(caller, callee) for caller, callee, _line in each_call(facts.calls)}
    assert ("fs::DeletePath", "remove") in calls and ("fs::MakeDirectory", "mkdir") not in calls
    assert ("fs::MakeDirectory", "_wmkdir") in calls


def test_branches_that_are_pieces_of_one_expression_are_read_with_the_first():
    # vLLM's allspark loads: the instruction strings of an `asm volatile(` by CUDA version, the `#if`
    # continued over two lines; and a template's parameter by configuration (vLLM's SM100 MLA kernel)
    code = """\
namespace ld {
template <typename T>
__device__ void load16(T& r0, const void* ptr, bool guard) {
  asm volatile(
      "{.reg .pred p;\\n"
#if __CUDACC_VER_MAJOR__ >= 11 && \\
    __CUDA_ARCH__ >= 750
      " @p ld.global.cg.L2::128B.b16 {%0}, [%1];}\\n"
#else
      " @p ld.global.ca.b16 {%0}, [%1];}\\n"
#endif
      : "=h"(r0)
      : "l"(ptr), "r"((int)guard));
}

template <
    class TileShape,
#ifdef CPASYNC
    bool kIsCpAsync = true
#else
    bool kIsCpAsync = false
#endif
>
struct Kernel {
  void run() { load16(x, p, true); }
};
}  // namespace ld
"""
    kept = keep_first_of_opening_branches(code.encode()).decode().splitlines()
    assert kept[7].strip() == '" @p ld.global.cg.L2::128B.b16 {%0}, [%1];}\\n"' and kept[9].strip() == ""
    assert kept[18].strip() == "bool kIsCpAsync = true" and kept[20].strip() == ""
    facts = _scan(code)
    assert facts.errors == 0
    assert {d.qual for d in facts.defs} >= {"ld::load16", "ld::Kernel", "ld::Kernel::run"}


@pytest.mark.parametrize("code", [
    # branches that open no block, or different numbers of blocks: tree-sitter reads both, as before
    "#ifdef A\nint x = 1;\n#else\nint x = 2;\n#endif\n",
    # heads with no body after them
    "#ifdef A\nint f(int a)\n#else\nint f(long a)\n#endif\n;\n",
    # pieces of an expression between statements (after a `;`), or after a macro's use on its own line
    "x = 1;\n#ifdef A\n  f(a)\n#else\n  g(a)\n#endif\n;\n",
    "ACME_PRAGMA(push)\n#ifdef A\nACME_PRAGMA(a)\n#else\nACME_PRAGMA(b)\n#endif\n",
    "#ifdef A\nif (a) {\n#else\nif (b) { c(); }\n#endif\n",
    # braces in comments and strings count for nothing
    "#ifdef A\nf(\"{\"); // {\n#else\ng();\n#endif\n",
])
def test_groups_whose_branches_do_not_open_the_same_blocks_are_left_as_written(code):
    assert keep_first_of_opening_branches(code.encode()) == code.encode()
