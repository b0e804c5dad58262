"""`#include` targets resolved to files of the system, and the second scan of files that use
attribute macros their includes define."""

from __future__ import annotations

import collections
import posixpath
from collections.abc import Mapping
from typing import Any

from extractor.cpp.facts import CppFacts
from extractor.cpp.parse import macro_config, parse_source, used_outside_directives
from extractor.cpp.scan import scan_cpp
from extractor.model import Language, ParsedFile


class IncludeResolver:
    """`#include` targets to files of the system: next to the includer first, then by suffix."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = set(paths)
        self.by_suffix: dict[str, list[str]] = collections.defaultdict(list)
        for p in paths:
            parts = p.split("/")
            for i in range(len(parts)):
                self.by_suffix["/".join(parts[i:])].append(p)

    def resolve(self, includer: str, target: str) -> str:
        target = target.replace("\\", "/")
        local = posixpath.normpath(posixpath.join(posixpath.dirname(includer), target))
        if local in self.paths:
            return local
        norm = posixpath.normpath(target)
        while norm.startswith("../"):
            norm = norm[3:]
        candidates = self.by_suffix.get(norm, [])
        if not candidates:
            return ""
        # Prefer the includer's own repository (label prefix), then the nearest, then the shortest.
        source = includer.split("/", 1)[0]
        return min(candidates, key=lambda c: (c.split("/", 1)[0] != source,
                                              -len(posixpath.commonpath([c, includer]) or ""),
                                              len(c), c))


def rescan_with_included_macros(facts: dict[str, CppFacts], languages: Mapping[str, Language],
                                disk: Mapping[str, Any], includes: Mapping[str, list[str]],
                                stats: collections.Counter[str]) -> None:
    """Scan again, with those macros blanked, each file that uses an attribute-like macro one of
    its (transitive) includes defines; ``facts`` is updated in place."""
    cfg = macro_config()
    builtin = set(cfg["blank"]) | set(cfg["blank_cpp_only"])
    defined = {p: set(f.defines) - builtin for p, f in facts.items()}
    if not any(defined.values()):
        return
    for path in sorted(facts):
        seen, stack, inherited = {path}, list(includes.get(path, ())), set()
        while stack:
            inc = stack.pop()
            if inc in seen:
                continue
            seen.add(inc)
            inherited |= defined.get(inc, set())
            stack.extend(includes.get(inc, ()))
        inherited -= defined[path]
        if not inherited or disk.get(path) is None:
            continue
        try:
            data = disk[path].read_bytes()
        except OSError:
            continue
        used = used_outside_directives(data, inherited)
        if not used:
            continue
        lang = languages[path]
        facts[path] = scan_cpp(ParsedFile(lang, data, parse_source(data, lang, blank=used)))
        stats["files_rescanned_for_macros"] += 1
