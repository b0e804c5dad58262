"""A probe's cache key names the content of everything its header includes from inside the tree,
and of what its preambles include: the run's shared closures (``IncludeClosures``: includes found
through the run's ``Includes``, each file's targets once per search, each preamble once) give the
digests a plain walk of the disk gives, and each search its own."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from extractor.structs.closure import Includes
from extractor.structs.header import Preamble
from extractor.structs.probe import IncludeClosures

_INCLUDE = re.compile(rb'^[ \t]*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def _plain_digest(header: Path, dirs: list[Path], roots: list[Path]) -> str:
    """The closure digest as a walk of the disk gives it, every name looked up again."""
    real_roots = [r.resolve() for r in roots]
    seen: dict[Path, str] = {}
    queue = [header.resolve()]
    while queue:
        current = queue.pop()
        if current in seen or not current.is_file():
            continue
        data = current.read_bytes()
        seen[current] = hashlib.sha256(data).hexdigest()
        for quote, name in _INCLUDE.findall(data):
            bases = ([current.parent] if quote == b'"' else []) + dirs
            found = next(((b / name.decode()).resolve() for b in bases if (b / name.decode()).is_file()), None)
            if found is not None and any(found.is_relative_to(r) for r in real_roots):
                queue.append(found)
    return hashlib.sha256("\n".join(sorted(seen.values())).encode()).hexdigest()


def _plain_preamble_digest(preamble: Preamble, dirs: list[Path], roots: list[Path]) -> str:
    parts = list(preamble.lines)
    for line in preamble.lines:
        m = _INCLUDE.match(line.encode())
        if m is None:
            continue
        name = m.group(2).decode()
        found = next(((b / name).resolve() for b in [preamble.directory, *dirs] if (b / name).is_file()), None)
        parts.append(_plain_digest(found, dirs, roots) if found is not None else name)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "src"
    (root / "inc" / "lib").mkdir(parents=True)
    (root / "alt" / "lib").mkdir(parents=True)
    (root / "kernels").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ext.h").write_text("#pragma once\nstruct Ext { int e; };\n")
    (root / "inc" / "lib" / "c.h").write_text('#pragma once\n#include "d.h"\nstruct C { int c; };\n')
    (root / "inc" / "lib" / "d.h").write_text("#pragma once\nstruct D { long d; };\n")
    (root / "alt" / "lib" / "c.h").write_text("#pragma once\nstruct C { char other; };\n")
    (root / "kernels" / "shared.h").write_text("#pragma once\nstruct Shared { int s; };\n")
    os.symlink(root / "kernels" / "shared.h", root / "kernels" / "linked.h")
    (root / "kernels" / "b.h").write_text('#pragma once\n#include "../kernels/linked.h"\n#include <ext.h>\n')
    header = root / "kernels" / "a.h"
    header.write_text('#pragma once\n#include "b.h"\n  #  include <lib/c.h>\n#include "missing.h"\n'
                      "struct A { int a; };\n")
    (root / "kernels" / "user.cpp").write_text('#include <lib/c.h>\n#include "b.h"\n#include "a.h"\n')
    return root, header, outside


def test_closure_digests_equal_a_plain_walk_of_the_disk(tmp_path):
    root, header, outside = _tree(tmp_path)
    dirs = [root / "inc", outside]
    closures = IncludeClosures([root])
    assert closures.digest(header, dirs) == _plain_digest(header, dirs, [root])
    preamble = Preamble(("#include <lib/c.h>", '#include "b.h"', "#define X 1", '#include "gone.h"'),
                        "kernels/user.cpp", root / "kernels")
    assert closures.preamble_digest(preamble, dirs) == _plain_preamble_digest(preamble, dirs, [root])
    # the same closures, asked again and through a shared Includes, answer the same
    shared = IncludeClosures([root], Includes([root]))
    assert shared.preamble_digest(preamble, dirs) == closures.preamble_digest(preamble, dirs)
    assert shared.digest(header, dirs) == closures.digest(header, dirs)


def test_each_search_reaches_its_own_files(tmp_path):
    """One header under two searches: `<lib/c.h>` is inc's in one, alt's in the other. A file's
    targets kept per file alone (not per search) would give the second the first's digest."""
    root, header, outside = _tree(tmp_path)
    closures = IncludeClosures([root])
    first = closures.digest(header, [root / "inc", outside])
    second = closures.digest(header, [root / "alt", outside])
    assert first != second
    assert second == _plain_digest(header, [root / "alt", outside], [root])
    preamble = Preamble(("#include <lib/c.h>",), "kernels/user.cpp", root / "kernels")
    assert closures.preamble_digest(preamble, [root / "inc"]) != closures.preamble_digest(preamble, [root / "alt"])


def test_a_digest_follows_the_content_inside_the_tree_only(tmp_path):
    root, header, outside = _tree(tmp_path)
    dirs = [root / "inc", outside]
    before = IncludeClosures([root]).digest(header, dirs)
    (outside / "ext.h").write_text("#pragma once\nstruct Ext { long changed; };\n")
    assert IncludeClosures([root]).digest(header, dirs) == before  # outside: the build context's fingerprint
    (root / "inc" / "lib" / "d.h").write_text("#pragma once\nstruct D { char changed; };\n")
    after = IncludeClosures([root]).digest(header, dirs)
    assert after != before
    assert after == _plain_digest(header, dirs, [root])


def test_a_listed_path_resolves_as_realpath_does(tmp_path):
    """The planner resolves the thousands of paths a preprocessor lists per probe through the run's
    Includes (each folder once): each answer is ``os.path.realpath``'s, links and `..` included."""
    root, header, outside = _tree(tmp_path)
    os.symlink(root / "inc", tmp_path / "linked_inc")
    includes = Includes([root])
    paths = [header, root / "kernels" / "linked.h", root / "kernels" / ".." / "inc" / "lib" / "c.h",
             tmp_path / "linked_inc" / "lib" / "d.h", root / "kernels", root / "kernels" / "absent.h",
             outside / "ext.h", Path("relative.h")]
    for path in paths:
        assert includes.real(str(path)) == os.path.realpath(path), path
    assert includes.real(str(tmp_path / "linked_inc" / "lib" / "d.h")) == str((root / "inc" / "lib" / "d.h").resolve())


def test_inside_the_tree_is_by_whole_components(tmp_path):
    """A key's closure follows only files inside the roots: a root's sibling that shares its name's
    start is outside, and a tree rooted at the file system's root holds every file."""
    root = tmp_path / "src"
    root.mkdir()
    includes = Includes([root])
    real = os.path.realpath(root)
    assert includes.in_project(real) and includes.in_project(os.path.join(real, "a", "b.h"))
    assert not includes.in_project(real + "_other/b.h")
    assert Includes([Path("/")]).in_project(os.path.realpath(tmp_path / "x.h"))
