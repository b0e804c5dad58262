"""`#include` targets resolved to files of the system, and the second scan of files that use
attribute macros their includes define."""

from __future__ import annotations

import collections
import dataclasses
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import msgspec

from extractor.cpp.facts import CppFacts
from extractor.cpp.parse import (grammar_language, hashed_words, in_directive, macro_config, macro_word, parse_source,
                                 used_outside_directives, word_hash)
from extractor.cpp.scan import MACRO_EXPANDED, scan_cpp
from extractor.model import Language, ParsedFile
from extractor.native.macros import MacroDefinition, MacroUse, arguments, expand
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
        # Nearness is to the includer's directory (the includer itself nearest of all): what
        # `resolve` shares by directory is what each of its files would find (a file can be no
        # directory of a candidate on disk, but a list of paths can say so: `x.h/b` and `x.h/b/x.h`)
        source = includer.split("/", 1)[0]
        directory = posixpath.dirname(includer)
        return min(candidates, key=lambda c: (c.split("/", 1)[0] != source,
                                              -len(c if c == includer else posixpath.commonpath([c, directory])
                                                   if directory else ""),
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
    its (transitive) includes defines (or written out, one that opens or closes a namespace), or that
    every file including it sees (:func:`seen_by_every_includer`); ``facts`` is updated in place.

    The files to look at are chosen and read here; each one's look and second scan (a parse and
    the scanner: grpcio 1.66.1's 1,654 such files, about half of its C/C++ graph step) is a task of
    ``jobs`` forked children (:func:`extractor.support.forkmap.fork_map`), whose facts come back
    as msgpack, as the scan's workers send theirs; one job runs the same encoding in-process."""
    cfg = macro_config()
    builtin = set(cfg["blank"]) | set(cfg["blank_cpp_only"])
    # what each namespace macro does (extractor.cpp.parse.namespace_macros), at which position each
    # launcher macro takes its kernel, what each type-naming macro pastes: where the system's files agree
    namespaces = _agreed(pair for f in facts.values() for pair in f.namespace_macros)
    members = _member_macros(facts)
    launchers = _agreed(pair for f in facts.values() for pair in f.launcher_macros)
    types = _agreed((name, (before, after)) for f in facts.values() for name, before, after in f.type_macros)
    lambdas = {name for f in facts.values() for name in f.lambda_macros}
    assigns = _agreed((name, (params, target, value)) for f in facts.values()
                      for name, params, target, value in f.assign_macros)
    # the macros written out before parsing; the rest of those a file uses are attribute macros, blanked
    rewritten = namespaces.keys() | members.keys() | launchers.keys() | types.keys() | lambdas | assigns.keys()
    aliases = system_attribute_aliases(facts) - builtin  # (macros.yaml's are blanked in every parse)
    # the attribute aliases a file defines: its own parse left them as written
    own_aliases = {p: {n for n, _words in f.attribute_aliases if n in aliases} for p, f in facts.items()}
    defined = {p: (set(f.defines) - builtin) | {n for n, _kind in f.namespace_macros if n in namespaces}
               | {m.name for m in f.member_macros if m.name in members}
               | {n for n, _at in f.launcher_macros if n in launchers} | own_aliases[p]
               | {n for n, _before, _after in f.type_macros if n in types} | set(f.lambda_macros)
               | {n for n, *_way in f.assign_macros if n in assigns} for p, f in facts.items()}
    if not any(defined.values()):
        return
    reachable = defined_through_includes(defined, includes)
    context = seen_by_every_includer(reachable, includes)
    # each macro's once (a call macro is listed as `NAME(`, a declaration wrapper as `NAME(decl)`)
    hash_of = {name: word_hash(macro_word(name)) for names in defined.values() for name in names}
    tasks: list[_Rescan] = []
    for path in sorted(facts):
        # what the file's own lines define is its own, also when an include cycle leads back to it
        # (but a class body of its own that uses its own accessor macro is written out like any other, and
        # so is its own use of an attribute alias)
        seen = reachable.get(path, frozenset()) | context.get(path, frozenset())
        inherited = (seen - (defined[path] - own_aliases[path])) | (seen & members.keys())
        if not inherited or disk.get(path) is None:
            continue
        # the file's word hashes rule out most files (torch: all but 177 of 9,028 headers)
        # without reading them again
        words = hashed_words(facts[path].words)
        # (a launcher macro is often used only in the file's own macros, whose words are not hashed)
        candidates = [m for m in inherited if hash_of[m] in words or m in launchers] if words else inherited
        if not candidates:
            continue
        try:
            data = disk[path].read_bytes()
        except OSError:
            continue
        tasks.append(_Rescan(path, languages[path], data, tuple(c for c in candidates if c not in rewritten),
                             {c: namespaces[c] for c in candidates if c in namespaces}, facts[path].words or None,
                             {c: members[c] for c in candidates if c in members},
                             {c: launchers[c] for c in candidates if c in launchers}, facts[path].errors,
                             {c: types[c] for c in candidates if c in types},
                             tuple(c for c in candidates if c in lambdas),
                             {c: assigns[c] for c in candidates if c in assigns}))
    for task, rescanned in zip(tasks, fork_map(_rescanned, tasks, jobs)):
        if rescanned is not None:
            facts[task.path], written_out = _RESCANNED.decode(rescanned)
            stats["files_rescanned_for_macros"] += 1
            if written_out:
                stats["member_macro_uses_written_out"] += written_out


def system_attribute_aliases(facts: Mapping[str, CppFacts]) -> set[str]:
    """The attribute aliases (CppFacts.attribute_aliases) that are attribute macros of the system: every
    name each of their definitions uses is one, in some file, or an alias that is (c-ares'
    ``CARES_EXTERN`` is ``CARES_SYMBOL_SCOPE_EXTERN``, which ares_build.h defines as a visibility
    attribute). A macro that some file defines as an attribute macro and another as an alias is one
    when the alias's names are."""
    attributes = {name for f in facts.values() for name in f.defines}
    pending: dict[str, set[str]] = collections.defaultdict(set)
    for f in facts.values():
        for name, words in f.attribute_aliases:
            pending[name].update(words)
    found: set[str] = set()
    while True:
        more = {name for name, words in pending.items() if name not in found and words <= attributes | found}
        if not more:
            return found
        found |= more


T = TypeVar("T")


def _agreed(pairs: Iterable[tuple[str, T]]) -> dict[str, T]:
    """Each name with its value, for the names that every pair gives one value only, by name."""
    found: dict[str, set[T]] = collections.defaultdict(set)
    for name, value in pairs:
        found[name].add(value)
    return {name: values.pop() for name, values in sorted(found.items()) if len(values) == 1}


def _member_macros(facts: Mapping[str, CppFacts]) -> dict[str, MacroDefinition]:
    """The accessor macros of the system (CppFacts.member_macros) that it defines one way only: a
    name defined with other parameters or another body somewhere is written out nowhere (its uses
    stay said as class-body macros)."""
    found: dict[str, set[tuple[tuple[str, ...], str]]] = collections.defaultdict(set)
    first: dict[str, MacroDefinition] = {}
    for path in sorted(facts):
        for macro in facts[path].member_macros:
            found[macro.name].add((macro.params, macro.body))
            first.setdefault(macro.name, macro)
    return {name: first[name] for name, ways in sorted(found.items()) if len(ways) == 1}


@dataclasses.dataclass(frozen=True, slots=True)
class _Rescan:
    """One file's second scan: its bytes, and the macros its includes define that it may use."""

    path: str
    language: Language
    data: bytes
    candidates: tuple[str, ...]  # attribute macros
    namespaces: dict[str, str]  # namespace macros: what each does
    words: bytes | None
    members: dict[str, MacroDefinition]  # accessor macros
    launchers: dict[str, int]  # launcher macros: the position of their kernel argument
    errors: int  # ERROR nodes of the file's first scan (the file as written, when no macro of the task is used)
    types: dict[str, tuple[str, str]]  # type-naming macros: the pieces before and after their argument
    lambdas: tuple[str, ...]  # lambda-opening macros
    assigns: dict[str, tuple[int, int, int]]  # assigning macros: parameters, the assigned one, the value


def _rescanned(task: _Rescan) -> bytes | None:
    """The file's facts scanned with the attribute macros it uses blanked and its uses of accessor
    macros written out, encoded with how many uses were; None when it uses none of them outside
    preprocessor lines.

    Uses written out that leave more ERROR nodes than the file read without them are no class body's
    members: sentencepiece's own `TEST(Suite, Name) {`, whose body declares a class (`public:`) and a
    function head through another macro (`TCONCAT(base, _Test_, name)`), wrote 23 errors into a test
    file that parsed without one. (So a file with uses written out is parsed twice.)"""
    data, written_out = write_out_member_macros(task.data, task.members) if task.members else (task.data, [])
    facts = _scan_blanked(task, data, written_out)
    if written_out and facts is not None and facts.errors:
        as_written = _scan_blanked(task, task.data, [])  # None: the file's first scan stands
        if (task.errors if as_written is None else as_written.errors) < facts.errors:
            facts, written_out = as_written, []
    return None if facts is None else _ENCODE((facts, len(written_out)))


def _scan_blanked(task: _Rescan, data: bytes, written_out: list[int]) -> CppFacts | None:
    """``data`` (the file's bytes, or those with uses of accessor macros written out at the lines
    ``written_out``) scanned with the attribute macros it uses blanked; None when it uses none of
    the task's macros and has no use written out."""
    listed = {macro_word(name): name for name in task.candidates}  # `NAME(`: a call macro; `NAME(decl)`: a wrapper
    used = used_outside_directives(data, (*listed, *task.namespaces, *task.types, *task.lambdas, *task.assigns))
    # a launcher macro counts in a directive too: a macro of the file's own body uses it (DeepEP's
    # `#define DISPATCH_LAUNCH_CASE(ranks) LAUNCH_KERNEL(&cfg, dispatch<ranks>, ...)`)
    launchers = {name: at for name, at in task.launchers.items() if re.search(rf"\b{name}\b".encode(), data)}
    if not used and not written_out and not launchers:
        return None
    blank = [listed[name] for name in used if name in listed]
    namespaces = {name: task.namespaces[name] for name in used if name in task.namespaces}
    types = {name: task.types[name] for name in used if name in task.types}
    lambdas = [name for name in used if name in task.lambdas]
    assigns = {name: task.assigns[name] for name in used if name in task.assigns}
    language = grammar_language(data, task.language)
    tree = parse_source(data, language, blank=blank, namespaces=namespaces, types=types, lambdas=lambdas,
                        assigns=assigns)
    facts = scan_cpp(ParsedFile(language, data, tree), words=task.words, namespaces=namespaces, launchers=launchers,
                     blank=blank, types=types, lambdas=lambdas, assigns=assigns)
    if written_out:  # what the uses declare says so
        lines = set(written_out)
        facts = msgspec.structs.replace(facts, defs=tuple(
            msgspec.structs.replace(d, tags=tuple(sorted({*d.tags, MACRO_EXPANDED}))) if d.line in lines else d
            for d in facts.defs))
    return facts


# a use of a macro at the start of a line, as a class body's member macros are written
_LINE_START_USE = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)


def write_out_member_macros(data: bytes, members: Mapping[str, MacroDefinition]) -> tuple[bytes, list[int]]:
    """``data`` with each use of an accessor macro at the start of a line outside directives
    (``PROPERTY(std::string, model_path) = "";``) written out with its definition, on the use's first line, and the use's
    other lines kept as empty ones: every line after it keeps its number, and what the expansion
    declares is found at the use's line. A use whose arguments do not fit is left as written.
    Returns the text and the lines of the uses written out."""
    text = data.decode("utf-8", "surrogateescape")
    out: list[str] = []
    lines: list[int] = []
    pos = 0
    line, counted = 1, 0  # the line at offset `counted`
    for m in _LINE_START_USE.finditer(text):
        definition = members.get(m.group(1))
        if definition is None or m.start() < pos or in_directive(text, m.start()):
            continue  # (a use in another macro's body is written out with that macro's)
        args, end = arguments(text, m.end())
        written = expand(MacroUse(definition.name, 0, args), definition, members.get) if args is not None else None
        if written is None:
            continue
        out += [text[pos:m.start(1)], " ".join(written.split()), "\n" * text.count("\n", m.start(1), end)]
        line += text.count("\n", counted, m.start(1))
        counted = m.start(1)
        lines.append(line)
        pos = end
    if not lines:
        return data, []
    out.append(text[pos:])
    return "".join(out).encode("utf-8", "surrogateescape"), lines


_ENCODE = msgspec.msgpack.Encoder().encode
_RESCANNED = msgspec.msgpack.Decoder(tuple[CppFacts, int])


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


def seen_by_every_includer(reachable: Mapping[str, frozenset[str]],
                           includes: Mapping[str, list[str]]) -> dict[str, frozenset[str]]:
    """Per file that others include, the macros that every one of them sees (``reachable``: its
    includes' and its own) and the file's own includes do not define: what a file written to be
    included sees where it is. glm's `func_common.inl`, which `func_common.hpp` includes at its end,
    writes `GLM_FUNC_QUALIFIER` before each function and includes nothing that defines it (MNN's copy:
    245 functions returning `GLM_FUNC_QUALIFIER`); Abseil's and BoringSSL's `.inc` files alike."""
    includers: dict[str, list[str]] = collections.defaultdict(list)
    for path in sorted(includes):
        for target in includes[path]:
            if target != path:
                includers[target].append(path)
    context: dict[str, frozenset[str]] = {}
    for path, by in includers.items():
        common = reachable.get(by[0], frozenset())
        for includer in by[1:]:
            if not common:
                break
            common &= reachable.get(includer, frozenset())
        common -= reachable.get(path, frozenset())
        if common:
            context[path] = common
    return context


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
