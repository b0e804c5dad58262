"""Using-directives and using-declarations: `using namespace xgrammar;` makes `CompileGrammar` the name
of `xgrammar::CompileGrammar`; `using engine::compute;` makes `compute` that of `engine::compute`.

Binding files and kernels write their registrations and calls after such a line (xgrammar's nanobind
module: 70 of its 72 targets; vLLM's csrc: `using namespace vllm;`); read literally, each name is one
the system does not define, and its binding or call has no edge.

The scanner records each with its scope and line (:class:`extractor.cpp.facts.Using`); the symbol
table looks a name up through them only where the enclosing scopes, searched as before, find
nothing:

- a using-directive or using-declaration is seen in the scope that holds it and the scopes nested
  there (in a function body by that function alone; in an anonymous namespace by the enclosing
  namespace), in its file and in the files that include that file, transitively, as namespace
  aliases are (:mod:`extractor.cpp.aliases`);
- a using-declaration of a name's head decides first, the innermost scope that has one; its target
  is read from the declaration's own scope. Then the directives: those of every scope from the
  use's outwards, and the directives written in the namespaces they nominate (C++'s are
  transitive); the name is looked up in each namespace nominated;
- two of them that make the name resolve to different entities are not chosen between (C++ calls
  the name ambiguous): it stays unresolved, and the graph step counts it;
- a directive's namespace is read from the directive's scope outwards, through namespace aliases,
  and must be a namespace of the system: `using namespace cute;` without CUTLASS's headers, or
  `using namespace std;`, resolves nothing.

Simplified: C++ lets a using-declaration in a nearer scope hide a declaration of the name in an
outer one, and puts a directive's names in the nearest namespace enclosing both the directive and
the nominated namespace, where they can clash with names of that namespace; here the scopes as
searched before win. A name written `::x` is not looked up through directives. The place of a
directive in its file is not compared with that of the use.

Cost: a file that sees none pays a dictionary look-up per name the enclosing scopes did not
resolve; the directives a scope sees are gathered once per (set of files seen, scope).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from extractor.cpp.aliases import NamespaceAliases
from extractor.cpp.facts import Using
from extractor.naming import id_name

_MAX_DEPTH = 8  # directives of nominated namespaces followed at most this far


def scope_parts(scope: str) -> tuple[str, ...]:
    """A scope's components without anonymous namespaces (whose names the enclosing scope sees)."""
    return tuple(p for p in scope.split("::") if p and not p.startswith("(anonymous namespace"))


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class _Using:
    """One using-directive or using-declaration as the graph step places it."""

    scope: tuple[str, ...]  # the scope it is seen in (the graph's spelling of a function's name)
    target: str  # as written
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class _Seen:
    """The directives and declarations of one set of files, indexed by scope."""

    directives: Mapping[tuple[str, ...], tuple[_Using, ...]]
    declarations: Mapping[str, Mapping[tuple[str, ...], tuple[_Using, ...]]]  # by the name declared


class Usings:
    """The using-directives and using-declarations of a system, and the files that see each one."""

    def __init__(self, declared: Mapping[str, Sequence[Using]], seen_by: Mapping[str, frozenset[str]],
                 namespaces: set[str] | frozenset[str], aliases: NamespaceAliases,
                 id_of: Callable[[str, str], str]) -> None:
        """``declared``: each file's records; ``seen_by``: per file, the files whose records it sees
        (itself and its includes, transitively); ``namespaces``: the qualified names of the system's
        namespaces; ``aliases``: the namespace aliases a directive's namespace may be written through;
        ``id_of``: a function's node id from its file and qualified name as the scanner wrote it."""
        self._namespaces = namespaces
        self._aliases = aliases
        self._seen_by = seen_by
        self._own: dict[str, list[tuple[bool, _Using]]] = {}
        for path in sorted(declared):
            own = self._own[path] = []
            for record in declared[path]:
                node = id_of(path, record.scope) if record.local else ""
                scope = scope_parts(id_name(node) if node else record.scope)
                own.append((record.directive, _Using(scope, record.target, path, record.line)))
        # the names using-declarations declare: a name with another head pays a set look-up
        self.declared_names = frozenset(u.target.rpartition("::")[2] for own in self._own.values()
                                        for directive, u in own if not directive)
        self._seen: dict[frozenset[str], _Seen] = {}
        self._nominated: dict[tuple[frozenset[str], tuple[str, ...]], tuple[str, ...]] = {}

    def sees_any(self, path: str) -> bool:
        return bool(self._seen_by.get(path))

    def declarations(self, path: str, scope: str, head: str) -> tuple[tuple[str, str], ...]:
        """(scope of the declaration, its target as written) of the using-declarations of ``head``
        seen in ``scope`` of ``path``: those of the innermost scope that has any."""
        seen = self._seen_in(path)
        by_scope = seen.declarations.get(head) if seen else None
        if not by_scope:
            return ()
        parts = scope_parts(scope)
        for k in range(len(parts), -1, -1):
            found = by_scope.get(parts[:k])
            if found:
                return tuple(sorted({("::".join(u.scope), u.target) for u in found}))
        return ()

    def nominated(self, path: str, scope: str) -> tuple[str, ...]:
        """The full names of the system's namespaces whose names ``scope`` of ``path`` sees through
        using-directives, sorted."""
        files = self._seen_by.get(path)
        if not files:
            return ()
        parts = scope_parts(scope)
        key = (files, parts)
        hit = self._nominated.get(key)
        if hit is None:
            hit = self._nominated[key] = self._nominate(self._seen_in(path), parts)
        return hit

    def _nominate(self, seen: _Seen | None, parts: tuple[str, ...]) -> tuple[str, ...]:
        if seen is None or not seen.directives:
            return ()
        found: set[str] = set()
        frontier = [u for k in range(len(parts) + 1) for u in seen.directives.get(parts[:k], ())]
        for _ in range(_MAX_DEPTH):
            namespaces = {ns for u in frontier if (ns := self._namespace(u)) and ns not in found}
            if not namespaces:
                break
            found |= namespaces
            # a directive written in a nominated namespace nominates its namespace too
            frontier = [u for ns in sorted(namespaces) for u in seen.directives.get(tuple(ns.split("::")), ())]
        return tuple(sorted(found))

    def _namespace(self, directive: _Using) -> str:
        """The system's namespace ``directive`` nominates, read from its scope; "" for none."""
        absolute = directive.target.startswith("::")
        name = directive.target.lstrip(":")
        scope = "::".join(directive.scope)
        if name.partition("::")[0] in self._aliases.heads:
            expanded = self._aliases.expand(directive.path, scope, f"{directive.target}::_")
            if expanded is None:
                return ""  # aliases that disagree
            absolute = absolute or expanded != f"{directive.target}::_"
            name = expanded.lstrip(":")[:-len("::_")]
        for k in (0,) if absolute else range(len(directive.scope), -1, -1):
            candidate = "::".join(directive.scope[:k] + (name,))
            if candidate in self._namespaces:
                return candidate
        return ""

    def _seen_in(self, path: str) -> _Seen | None:
        files = self._seen_by.get(path)
        if not files:
            return None
        seen = self._seen.get(files)
        if seen is None:  # files of an include chain share one set: one index per set
            directives: dict[tuple[str, ...], set[_Using]] = {}
            declarations: dict[str, dict[tuple[str, ...], set[_Using]]] = {}
            for file in files:
                for directive, u in self._own.get(file, ()):
                    if directive:
                        directives.setdefault(u.scope, set()).add(u)
                    else:
                        name = u.target.rpartition("::")[2]
                        declarations.setdefault(name, {}).setdefault(u.scope, set()).add(u)
            seen = self._seen[files] = _Seen(
                {scope: tuple(sorted(found)) for scope, found in directives.items()},
                {name: {scope: tuple(sorted(found)) for scope, found in by_scope.items()}
                 for name, by_scope in declarations.items()})
        return seen
