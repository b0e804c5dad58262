"""A vendored library's headers are probed with their own library root searched, and the tree's
own headers with the roots their includes need.

The include directories found in the tree skip vendored code (``third_party``, examples, tests),
yet its headers are probed: xformers ships CUTLASS under ``third_party/cutlass/include``, whose
``cute/arch/mma_sm80.hpp`` includes ``<cute/config.hpp>``; those probes failed on that include
and told the user to fetch CUTLASS. A header's own ``include``/``src``/``csrc`` ancestors are
searched now. A tree written here: a vendored library whose header includes a sibling by its
library path, and a header of the project that includes it the way the build would
(``-Ithird_party/tinylib/include``, which the tree cannot show)."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.model import Language
from extractor.structs.header import HeaderProbe
from extractor.structs.probe import own_include_roots


def _tree(root):
    lib = root / "third_party" / "tinylib" / "include" / "tinylib"
    lib.mkdir(parents=True)
    (lib / "config.h").write_text("#pragma once\n#include <cstdint>\nnamespace tinylib { using index_t = int64_t; }\n")
    (lib / "ring.h").write_text("#pragma once\n#include <tinylib/config.h>\n"
                                "namespace tinylib {\nstruct Ring {\n  index_t head;\n  int32_t tail;\n};\n}\n")
    own = root / "csrc"
    own.mkdir()
    (own / "queue.h").write_text("#pragma once\n#include <tinylib/ring.h>\n"
                                 "struct Queue {\n  tinylib::Ring ring;\n  char tag;\n};\n")
    (own / "queue.cpp").write_text('#include "queue.h"\nint size() { return sizeof(Queue); }\n')


def _extract(tmp_path, write) -> tuple[dict, dict]:
    """(bundle, struct records by qualified name) of the tree ``write`` puts in ``tmp_path/proj``."""
    write(tmp_path / "proj")
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    bundle = extract_system([str(tmp_path / "proj")], options=options).bundle
    return bundle, {s["qualname"]: s for s in bundle["structs"]}


def _laid_out(record: dict, size: int, members: list[tuple[str, int]]) -> bool:
    return record["method"] != "unresolved" and record["size"] == size and \
        [(m["name"], m["offset"]) for m in record["members"]] == members


def test_a_vendored_header_finds_its_siblings_by_its_library_path(tmp_path):
    _bundle, structs = _extract(tmp_path, _tree)
    assert _laid_out(structs["tinylib::Ring"], 16, [("head", 0), ("tail", 8)])
    # the project's own header finds the library through the root its include needs (below)
    queue = structs["Queue"]
    assert queue["method"] != "unresolved" and queue["size"] == 24


def test_only_the_roots_the_tree_s_directories_leave_out_are_added(tmp_path):
    root = tmp_path / "proj"
    _tree(root)
    vendored = root / "third_party" / "tinylib" / "include"
    probes = [HeaderProbe("third_party/tinylib/include/tinylib/ring.h", vendored / "tinylib" / "ring.h",
                          Language.CPP, ()),
              HeaderProbe("csrc/queue.h", root / "csrc" / "queue.h", Language.CPP, ())]
    ring, queue = own_include_roots(probes, [root, root / "csrc"], [root])
    assert ring.flags.include_dirs == (vendored,)
    assert queue is probes[1]  # csrc is searched already: the probe is unchanged


def _grpc_like(root):
    """A tree whose own code includes a vendored library by its library path (grpcio's
    ``#include "absl/strings/string_view.h"``, the library under ``third_party/abseil-cpp``)."""
    lib = root / "third_party" / "tinyabseil-cpp" / "tinyabsl" / "strings"
    lib.mkdir(parents=True)
    (lib / "view.h").write_text("#pragma once\n#include <cstddef>\nnamespace tinyabsl {\n"
                                "struct View {\n  const char* data;\n  size_t size;\n};\n}\n")
    core = root / "src" / "core"
    core.mkdir(parents=True)
    (core / "slice.h").write_text('#pragma once\n#include "tinyabsl/strings/view.h"\n'
                                  "struct Slice {\n  tinyabsl::View view;\n  int refs;\n};\n")
    (core / "slice.cc").write_text('#include "slice.h"\nint f() { return sizeof(Slice); }\n')
    # two files end with "dup/one.h": which one the build means, the tree cannot say
    for side in ("a", "b"):
        dup = root / "third_party" / side / "dup"
        dup.mkdir(parents=True)
        (dup / "one.h").write_text("#pragma once\nstruct One { int x; };\n")
    (core / "pair.h").write_text('#pragma once\n#include "dup/one.h"\nstruct Pair {\n  One one;\n  int y;\n};\n')
    # a copy of a header the host compiler has (<sys/types.h>): the system's stays the one found
    libc = root / "third_party" / "fakelibc" / "sys"
    libc.mkdir(parents=True)
    (libc / "types.h").write_text("#pragma once\ntypedef struct { char c[8]; } pid_t;\n")
    (core / "proc.h").write_text("#pragma once\n#include <sys/types.h>\n"
                                 "struct Proc {\n  pid_t pid;\n  int state;\n};\n")


def test_a_library_the_tree_s_code_includes_by_its_library_path_is_searched(tmp_path):
    bundle, structs = _extract(tmp_path, _grpc_like)
    assert _laid_out(structs["Slice"], 24, [("view", 0), ("refs", 16)])
    pair = structs["Pair"]  # the include's file is not one: no root is guessed
    assert pair["method"] == "unresolved" and pair["missing"] == "dup/one.h"
    assert structs["Proc"]["size"] == 8  # the system's 4-byte pid_t, not the copy's 8 chars
    assert bundle["stats"]["structs"]["include_dirs_vendored"] == 1  # tinyabseil-cpp alone
