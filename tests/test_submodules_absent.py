"""Git submodules that a tree's .gitmodules declares and the tree does not hold (a clone without
--recurse-submodules, an export of the tree: flash-attention's vendored CUTLASS) are said, at the
line of their path, never silently absent; one held, or one whose path leaves the tree, is not."""

from __future__ import annotations

import os
from pathlib import Path

from extractor.context import ExtractOptions
from extractor.run.diagnosis import group_diagnostics
from extractor.run.pipeline import extract_system

GITMODULES = '''\
[submodule "csrc/cutlass"]
\tpath = csrc/cutlass
\turl = https://github.com/NVIDIA/cutlass.git
[submodule "third_party/aiter"]
\tpath = third_party/aiter
\turl = https://github.com/ROCm/aiter.git
\tbranch = main
[submodule "csrc/composable_kernel"]
\tpath = csrc/composable_kernel
\turl = https://github.com/ROCm/composable_kernel.git
[submodule "escape"]
\tpath = ../outside
\turl = https://example.com/outside.git
[submodule "linked"]
\tpath = vendored/linked
\turl = https://example.com/linked.git
'''


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "csrc" / "flash_attn").mkdir(parents=True)
    (root / "csrc" / "flash_attn" / "flash_api.cpp").write_text('#include "cutlass/cutlass.h"\nvoid fwd() {}\n')
    (root / "csrc" / "cutlass").mkdir()  # checked out without its files, as git leaves it
    (root / "csrc" / "composable_kernel" / "include").mkdir(parents=True)  # held
    (root / "csrc" / "composable_kernel" / "include" / "ck.hpp").write_text("namespace ck {}\n")
    (root / "vendored").mkdir()
    os.symlink(root / "csrc", root / "vendored" / "linked")  # a link: not followed, not judged
    (root / ".gitmodules").write_text(GITMODULES)
    return root


def test_each_submodule_not_in_the_tree_is_a_warning_at_its_path(tmp_path: Path):
    bundle = extract_system([str(_tree(tmp_path))], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                           probe_structs=False)).bundle
    said = [(d["path"], d["line"], d["severity"], d["message"]) for d in bundle["diagnostics"]
            if d["code"] == "submodule-absent"]
    assert said == [
        (".gitmodules", 2, "warning", "submodule csrc/cutlass (https://github.com/NVIDIA/cutlass.git) is not in the "
                                      "tree: none of its files is read, and includes into it stay unresolved"),
        (".gitmodules", 5, "warning", "submodule third_party/aiter (https://github.com/ROCm/aiter.git) is not in the "
                                      "tree: none of its files is read, and includes into it stay unresolved"),
    ]
    groups = [g.render() for g in group_diagnostics(bundle["diagnostics"]) if g.code == "submodule-absent"]
    assert groups == ["warning: 2 git submodules of .gitmodules are not in the tree, their files not read "
                      "(csrc/cutlass, third_party/aiter): clone with --recurse-submodules (or run git submodule "
                      "update --init) and extract that tree [submodule-absent]"]
