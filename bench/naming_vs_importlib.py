#!/usr/bin/env python3
"""Module names against what Python's import system finds, on real trees, without running them.

    python3 -m bench.naming_vs_importlib SPEC [SPEC ...] [--cache-dir DIR]

For every Python file inside a regular package, the import root is the parent of the topmost
directory on the file's path that has an ``__init__.py`` and from which every directory down to the
file is a name ``import`` can spell, below the deepest directory holding a project of its own
(``setup.py`` or ``pyproject.toml``: a plugin shipped inside the tree is imported as installed). From that root, the module name archdiff gives the file is
resolved part by part with ``importlib.machinery.PathFinder.find_spec`` (which only looks at the
file system: nothing of the analysed code is imported or run). A name that does not resolve to the
file itself is misnamed; each is listed. Files outside any regular package (scripts, tests
directories without ``__init__.py``, namespace portions above a package) are counted apart: Python
has no one name for them without knowing the user's sys.path.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import keyword
import sys
from pathlib import Path

from extractor.acquire.inventory import list_files
from extractor.acquire.sources import default_cache_dir
from extractor.model import Language
from extractor.naming import module_names
from extractor.run.pipeline import acquire_sources


class _File:
    def __init__(self, path: str, rel: str, source: str) -> None:
        self.path, self.rel, self.source = path, rel, source


def _import_root(root: Path, rel: str) -> Path | None:
    dirs = rel.split("/")[:-1]
    # a project inside the tree (its own setup.py or pyproject.toml) is imported as installed
    start = max((i + 1 for i in range(len(dirs))
                 if any((root.joinpath(*dirs[: i + 1]) / m).is_file() for m in ("setup.py", "pyproject.toml"))),
                default=0)
    for i in range(start, len(dirs)):
        below = dirs[i:]
        if (root.joinpath(*dirs[: i + 1]) / "__init__.py").is_file() and \
                all(d.isidentifier() and not keyword.iskeyword(d) for d in below):
            return root.joinpath(*dirs[:i])
    return None


def _resolves_to(name: str, search: Path) -> str | None:
    path: list[str] | None = [str(search)]
    spec = None
    parts = name.split(".")
    for part in parts:
        # One part at a time, by its own name: the finder looks the last part up in ``path``, and a
        # dotted name would make it ask sys.modules for the parent, which is never imported here.
        spec = importlib.machinery.PathFinder.find_spec(part, path)
        if spec is None:
            return None
        path = list(spec.submodule_search_locations or [])
    return spec.origin if spec is not None else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    failed = 0
    for spec in args.specs:
        (tree,) = acquire_sources([spec], args.cache_dir or default_cache_dir())
        entries, _diagnostics = list_files(tree)
        files = [_File(e.path, e.rel, tree.label) for e in entries if e.language is Language.PYTHON]
        names, clashes = module_names(files)
        in_package = misnamed = 0
        wrong: list[str] = []
        for f in files:
            root = _import_root(tree.root, f.rel)
            if root is None:
                continue
            in_package += 1
            origin = _resolves_to(names[f.path], root)
            if origin is None or Path(origin).resolve() != (tree.root / f.rel).resolve():
                misnamed += 1
                wrong.append(f"  {f.rel}: named {names[f.path]}, import finds {origin or 'nothing'}")
        print(f"{spec}: {len(files):,} Python files, {in_package:,} inside packages, {misnamed} misnamed, "
              f"{len(clashes)} name clashes")
        print("\n".join(wrong[:40]) + (f"\n  ... {len(wrong) - 40} more" if len(wrong) > 40 else ""), end="")
        print() if wrong else None
        failed += misnamed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
