"""The include closures' file look-ups (extractor.structs.closure.Includes.beside) answer what the
file system answers: a name found beside a folder is the file's real path, anything else is "".
The look-up answers most misses from folder listings and resolves folders once: these cases are
the ones where a listing or a resolved folder could tell a different story than ``realpath``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from extractor.structs.closure import Includes


def _reference(directory: str, name: str) -> str:
    candidate = os.path.join(directory, name)
    return os.path.realpath(candidate) if os.path.isfile(candidate) else ""


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "inc" / "sub").mkdir(parents=True)
    (tmp_path / "inc" / "a.h").write_text("")
    (tmp_path / "inc" / "Mixed.h").write_text("")
    (tmp_path / "inc" / "sub" / "b.h").write_text("")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "c.h").write_text("")
    (tmp_path / "inc" / "linked").symlink_to(tmp_path / "real")  # a folder that is a link
    (tmp_path / "inc" / "alias.h").symlink_to(tmp_path / "real" / "c.h")  # a file that is a link
    (tmp_path / "inc" / "dangling.h").symlink_to(tmp_path / "nowhere.h")
    (tmp_path / "inc" / "to_dir.h").symlink_to(tmp_path / "real")  # a link to a folder, not a file
    (tmp_path / "via").symlink_to(tmp_path / "inc" / "sub")  # `via/../a.h` is real/../a.h, not inc/a.h
    (tmp_path / "a.h").write_text("")
    return tmp_path


NAMES = ["a.h", "Mixed.h", "mixed.h", "MIXED.H", "sub/b.h", "sub", "sub/", "sub/missing.h", "missing/b.h",
         "linked/c.h", "linked/../a.h", "alias.h", "dangling.h", "to_dir.h", "../a.h", "./a.h", "sub/../a.h",
         "sub//b.h", "none.h", "caf\u00e9.h"]


@pytest.mark.parametrize("folder", ["inc", "via", "inc/sub", "nowhere", "inc/a.h"])
def test_a_lookup_is_what_the_file_system_says(tree: Path, folder: str) -> None:
    includes = Includes([tree])
    directory = str(tree / folder)
    for name in [*NAMES, str(tree / "inc" / "a.h")]:
        assert includes.beside(directory, name) == _reference(directory, name), (folder, name)
        # asked again (the memo), and after every other question has filled the listings
    for name in NAMES:
        assert includes.beside(directory, name) == _reference(directory, name), (folder, name)


def test_a_listing_never_rules_out_a_name_that_differs_only_in_case(tree: Path) -> None:
    """On a case-insensitive file system ``mixed.h`` is ``Mixed.h``: the listing leaves that to the
    file system, which on this one says the name is not there."""
    includes = Includes([tree])
    directory = str(tree / "inc")
    assert not includes._listed_absent(directory, "mixed.h")
    assert not includes._listed_absent(directory, "SUB/b.h")
    assert includes._listed_absent(directory, "none.h")
    assert includes._listed_absent(directory, "sub/none.h")
    assert not includes._listed_absent(directory, "caf\u00e9.h")  # not ASCII: the file system answers
    assert not includes._listed_absent(str(tree / "nowhere"), "a.h")  # no listing: nothing ruled out


def test_a_closure_finds_headers_through_links_and_the_search(tree: Path) -> None:
    (tree / "inc" / "top.h").write_text('#include "sub/b.h"\n#include <linked/c.h>\n#include <absent.h>\n'
                                        '#include "alias.h"\n')
    closure = Includes([tree / "inc"]).closure(tree / "inc" / "top.h", [tree / "inc", tree / "real"])
    assert closure.project == {os.path.realpath(tree / "inc" / "top.h"), os.path.realpath(tree / "inc" / "sub" / "b.h")}
    # the link's target lies outside the root: both links lead to the same real file
    assert closure.external == {os.path.realpath(tree / "real" / "c.h")}
    assert closure.missing == ("absent.h",)
