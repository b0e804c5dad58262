"""`#include` targets resolved to files of the system, and the second scan of files that use
attribute macros their includes define."""

from __future__ import annotations

import collections
import dataclasses
import posixpath
from collections.abc import Mapping
from typing import Any

import msgspec

from extractor.cpp.facts import CppFacts
from extractor.cpp.parse import hashed_words, macro_config, parse_source, used_outside_directives, word_hash
from extractor.cpp.scan import scan_cpp
from extractor.model import Language, ParsedFile
from extractor.support.forkmap import fork_map
from extractor.support.pathsuffix import by_suffix


class IncludeResolver:
    """`#include` targets to files of the system: next to the includer first, then by suffix."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = set(paths)
        # by (the includer's directory, target): the files of a directory that are not candidates
        # themselves resolve a target alike (the nearest candidate is the nearest to the directory)
        self._resolved: dict[tuple[str, str], str] = {}
        self._suffixes: dict[str, str] = {}
        self.by_suffix = by_suffix(paths)

    def resolve(self, includer: str, target: str) -> str:
        suffix = self._suffixes.get(target)
        if suffix is None:
            suffix = self._suffixes[target] = _suffix(target)
        if includer == suffix or includer.endswith("/" + suffix):
            # the includer is a candidate of its own include (`b/x.h` in `a/b/x.h`): nearest of all
            return self._resolve(includer, target)
        # Files of one directory share a target; a top-level file (whose repository is its own
        # name) has a key of its own, with a leading "/" that no directory of a relative path has.
        key = (posixpath.dirname(includer) or "/" + includer, target)
        hit = self._resolved.get(key)
        if hit is None:
            hit = self._resolved[key] = self._resolve(includer, target)
        return hit

    def _resolve(self, includer: str, target: str) -> str:
        target = target.replace("\\", "/")
        local = posixpath.normpath(posixpath.join(posixpath.dirname(includer), target))
        if local in self.paths:
            return local
        candidates = self.by_suffix.get(_suffix(target), [])
        if not candidates:
            return ""
        # Prefer the includer's own repository (label prefix), then the nearest, then the shortest.
        source = includer.split("/", 1)[0]
        return min(candidates, key=lambda c: (c.split("/", 1)[0] != source,
                                              -len(posixpath.commonpath([c, includer]) or ""),
                                              len(c), c))


def _suffix(target: str) -> str:
    """The path an include names, for the suffix index: `../` steps out of the tree dropped."""
    norm = posixpath.normpath(target.replace("\\", "/"))
    while norm.startswith("../"):
        norm = norm[3:]
    return norm


def rescan_with_included_macros(facts: dict[str, CppFacts], languages: Mapping[str, Language],
                                disk: Mapping[str, Any], includes: Mapping[str, list[str]],
                                stats: collections.Counter[str], jobs: int = 1) -> None:
    """Scan again, with those macros blanked, each file that uses an attribute-like macro one of
    its (transitive) includes defines (or written out, one that opens or closes a namespace);
    ``facts`` is updated in place.

    The files to look at are chosen and read here; each one's look and second scan (a parse and
    the scanner: grpcio's 465 such files, 3 CPU s, half of its C/C++ graph step) is a task of
    ``jobs`` forked children (:func:`extractor.support.forkmap.fork_map`), whose facts come back
    as msgpack, as the scan's workers send theirs; one job runs the same encoding in-process."""
    cfg = macro_config()
    builtin = set(cfg["blank"]) | set(cfg["blank_cpp_only"])
    # namespace macros (extractor.cpp.parse.namespace_macros): what each does, when the system's
    # headers agree on it
    kinds: dict[str, set[str]] = collections.defaultdict(set)
    for f in facts.values():
        for name, kind in f.namespace_macros:
            kinds[name].add(kind)
    namespaces = {name: found.pop() for name, found in kinds.items() if len(found) == 1}
    defined = {p: (set(f.defines) - builtin) | {n for n, _kind in f.namespace_macros if n in namespaces}
               for p, f in facts.items()}
    if not any(defined.values()):
        return
    reachable = defined_through_includes(defined, includes)
    # each macro's once (a call macro is listed as `NAME(`)
    hash_of = {name: word_hash(name.rstrip("(")) for names in defined.values() for name in names}
    tasks: list[_Rescan] = []
    for path in sorted(facts):
        # what the file's own lines define is its own, also when an include cycle leads back to it
        inherited = reachable.get(path, frozenset()) - defined[path]
        if not inherited or disk.get(path) is None:
            continue
        # the file's word hashes rule out most files (torch: all but 177 of 9,028 headers)
        # without reading them again
        words = hashed_words(facts[path].words)
        candidates = [m for m in inherited if hash_of[m] in words] if words else inherited
        if not candidates:
            continue
        try:
            data = disk[path].read_bytes()
        except OSError:
            continue
        tasks.append(_Rescan(path, languages[path], data, tuple(c for c in candidates if c not in namespaces),
                             {c: namespaces[c] for c in candidates if c in namespaces}, facts[path].words or None))
    for task, rescanned in zip(tasks, fork_map(_rescanned, tasks, jobs)):
        if rescanned is not None:
            facts[task.path] = _FACTS.decode(rescanned)
            stats["files_rescanned_for_macros"] += 1


@dataclasses.dataclass(frozen=True, slots=True)
class _Rescan:
    """One file's second scan: its bytes, and the macros its includes define that it may use."""

    path: str
    language: Language
    data: bytes
    candidates: tuple[str, ...]  # attribute macros
    namespaces: dict[str, str]  # namespace macros: what each does
    words: bytes | None


def _rescanned(task: _Rescan) -> bytes | None:
    """The file's facts scanned with the macros it uses blanked, encoded; None when it uses none
    outside preprocessor lines."""
    listed = {name.rstrip("("): name for name in task.candidates}  # a call macro is listed as `NAME(`
    used = used_outside_directives(task.data, (*listed, *task.namespaces))
    if not used:
        return None
    blank = [listed[name] for name in used if name not in task.namespaces]
    namespaces = {name: task.namespaces[name] for name in used if name in task.namespaces}
    tree = parse_source(task.data, task.language, blank=blank, namespaces=namespaces)
    return _ENCODE(scan_cpp(ParsedFile(task.language, task.data, tree), words=task.words, namespaces=namespaces))


_ENCODE = msgspec.msgpack.Encoder().encode
_FACTS = msgspec.msgpack.Decoder(CppFacts)


def defined_through_includes(defined: Mapping[str, set[str]],
                             includes: Mapping[str, list[str]]) -> dict[str, frozenset[str]]:
    """Per file, the macros it and every file it includes, transitively, define.

    The include graph is condensed once (the files of an include cycle see the same macros) and
    each component's macros joined from those of the components it includes: walked again from
    every file, torch's 9,000 headers cost the driver seconds per thousand files."""
    out: dict[str, frozenset[str]] = {}
    for component in _components(includes):
        members = set(component)
        below = {id(out[inc]): out[inc] for path in component for inc in includes.get(path, ()) if inc not in members}
        own = set().union(*(defined.get(path, ()) for path in component))
        if not own and len(below) == 1:
            macros = next(iter(below.values()))  # a chain shares one set
        else:
            macros = frozenset(own.union(*below.values()))
        for path in component:
            out[path] = macros
    return out


def _components(edges: Mapping[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of a graph (Tarjan's, without recursion), each after
    every component it reaches."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found
