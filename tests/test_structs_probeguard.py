"""The probe guard's check of what a compile opened: every way a listed file can resolve."""

from __future__ import annotations

import os
from pathlib import Path

from extractor.structs.probeguard import outside


def test_files_are_judged_by_where_they_resolve(tmp_path):
    inside, elsewhere = tmp_path / "in", tmp_path / "out"
    (inside / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (inside / "a.h").write_text("")
    (elsewhere / "s.h").write_text("")
    os.symlink(elsewhere / "s.h", inside / "link_out.h")
    os.symlink(inside / "a.h", elsewhere / "link_in.h")
    os.symlink(tmp_path / "nowhere.h", inside / "broken.h")
    os.symlink(elsewhere, inside / "dirlink")
    deps = [inside / "a.h", inside / "link_out.h", elsewhere / "link_in.h", inside / "broken.h",
            inside / "dirlink" / "s.h", inside / "sub" / ".." / "a.h", inside / "sub" / ".." / ".." / "out" / "s.h",
            tmp_path / "missing.h", inside, inside / "dirlink", inside / "sub" / "..", Path("/etc/passwd")]
    assert outside(deps, [inside]) == [elsewhere / "s.h", elsewhere / "s.h", elsewhere / "s.h", elsewhere,
                                       Path("/etc/passwd")]
    assert outside(deps, [inside, elsewhere]) == [Path("/etc/passwd")]
    assert outside(deps, [Path("/")]) == []
    # a file allowed is itself allowed, not what lies beside it
    assert len(outside(deps, [inside / "a.h"])) == 7
