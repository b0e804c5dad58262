"""Run the C/C++/CUDA step on directories without the full pipeline: for the recall benchmark,
for tests, and for a quick look at one repository. The pipeline proper (inventory, cache, worker
pool) lives in extractor.run.pipeline; this is the same scan and extract in one process."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from extractor.acquire.inventory import SUFFIXES as INVENTORY_SUFFIXES, list_files
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.cpp.scan import scan_source
from extractor.model import Language

# the inventory's C/C++/CUDA suffixes (Metal's `.metal` among them): the files the pipeline reads so
SUFFIXES = {suffix: language for suffix, language in INVENTORY_SUFFIXES.items()
            if language in (Language.CPP, Language.CUDA)}


def scan_trees(sources: Mapping[str, Path], name: str = "system", version: str = "") -> Context:
    """A Context whose files carry the ``cpp`` scanner's facts, one source per (label, root).

    A single source may use the label "" (paths then have no prefix)."""
    trees, files = [], []
    for label, root in sorted(sources.items()):
        root = Path(root)
        tree = SourceTree(label, str(root), "dir", root)
        trees.append(tree)
        # the files the pipeline lists (extractor.acquire.inventory: a header with no suffix among them)
        for entry in list_files(tree)[0]:
            language, rel = entry.language, entry.rel
            if language not in (Language.CPP, Language.CUDA):
                continue
            data = (root / rel).read_bytes()
            facts = scan_source(data, language)
            files.append(SourceFile(f"{label}/{rel}" if label else rel, rel, label, language,
                                    hashlib.sha256(data).hexdigest(), len(data), {"cpp": facts},
                                    data.count(b"\n")))
    return Context(name, version, tuple(trees), tuple(sorted(files, key=lambda f: f.path)),
                   ExtractOptions())
