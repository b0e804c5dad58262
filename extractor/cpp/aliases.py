"""Namespace aliases: `namespace ft = turbomind;` makes `ft::compute` the name of `turbomind::compute`.

Code written against a long namespace names it through a short alias (lmdeploy's bindings say
`py::class_<ft::SessionParam>`, TensorRT-LLM's sources `tle::`, `tr::`, `tc::`); read literally, each
such name is one the system does not define, and its call, base class or binding has no edge.

The scanner records each alias with its scope and line (:class:`extractor.cpp.facts.NamespaceAlias`);
here a name's head is replaced by the namespace its alias stands for before the symbol table looks
the name up, the way C++ finds it:

- an alias is seen in the scope that declares it and the scopes nested there (an alias in a
  function body by that function alone; one in an anonymous namespace by the enclosing namespace,
  as the unnamed namespace's members are), in its file and in the files that include that file,
  transitively (headers declare them);
- from the innermost scope of the name's use outwards, the first scope that declares an alias of
  the head, or a namespace or class of that name, decides; a name written `::ft::x` sees only
  aliases at file scope;
- an alias's target is read from the alias's own scope, through other aliases (an alias of an
  alias), and made the full name of a namespace of the system when there is one. An alias of a
  namespace outside the system (`namespace py = pybind11;`) gives a name the system does not define,
  so nothing resolves through it, as without aliases;
- aliases of one name at one scope that stand for different namespaces (one per `#if` branch, or
  two headers) are not chosen between: the name stays unresolved.

The place of the alias in its file is not compared with that of the use (an alias declared after
its use is taken as well); a file that includes none of the headers that declare aliases pays
nothing, and a name pays a set look-up of its head.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from extractor.cpp.facts import NamespaceAlias
from extractor.naming import id_name

_ANONYMOUS = "(anonymous namespace)"
_MAX_DEPTH = 8  # aliases of aliases followed at most this far (a cycle of them is no C++)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class _Alias:
    """One alias declaration as the graph step places it."""

    scope: tuple[str, ...]  # the scope it is seen in (the graph's spelling of a function's name)
    name: str
    target: str  # as written
    path: str
    line: int

    @property
    def scope_text(self) -> str:
        return "::".join(self.scope)


class NamespaceAliases:
    """The namespace aliases of a system and the files that see each one (see the module docstring)."""

    def __init__(self, declared: Mapping[str, Sequence[NamespaceAlias]], seen_by: Mapping[str, frozenset[str]],
                 scopes: set[str] | frozenset[str], id_of: Callable[[str, str], str]) -> None:
        """``declared``: each file's alias records; ``seen_by``: per file, the files whose aliases it
        sees (itself and its includes, transitively); ``scopes``: the qualified names of the system's
        namespaces and classes; ``id_of``: a function's node id from its file and qualified name as
        the scanner wrote it (that of a function body's alias)."""
        self.scopes = scopes
        self._own: dict[str, dict[str, tuple[_Alias, ...]]] = {}
        for path in sorted(declared):
            by_name: dict[str, list[_Alias]] = {}
            for record in declared[path]:
                if record.local:
                    node = id_of(path, record.scope)
                    scope = tuple(id_name(node).split("::")) if node else tuple(record.scope.split("::"))
                else:
                    scope = tuple(p for p in record.scope.split("::") if p and p != _ANONYMOUS)
                by_name.setdefault(record.name, []).append(
                    _Alias(scope, record.name, record.target, path, record.line))
            self._own[path] = {name: tuple(sorted(found)) for name, found in by_name.items()}
        self.heads = frozenset(name for names in self._own.values() for name in names)
        self._seen_by = seen_by
        self._visible: dict[frozenset[str], dict[str, tuple[_Alias, ...]]] = {}
        self._targets: dict[tuple[str, str, str, bool], str | None] = {}

    def expand(self, path: str, scope: str, name: str) -> str | None:
        """``name`` (no template arguments) used in ``scope`` of ``path`` with a namespace alias at its
        head written as the namespace it stands for; ``name`` itself when its head is no alias there;
        None when the aliases of its head there disagree."""
        head, sep, rest = name.partition("::")
        absolute = not head and bool(sep)
        if absolute:
            head, sep, rest = rest.partition("::")
        if not sep or head not in self.heads:
            return name
        key = (path, scope, head, absolute)
        if key not in self._targets:
            self._targets[key] = self._target(path, scope, head, absolute, None, 0)
        target = self._targets[key]
        if target is None:
            return None
        return f"{target}::{rest}" if target else name

    def conflicts(self) -> int:
        """How many (file, scope, alias name) see aliases of that name at that scope that stand for
        different namespaces: the names written through them stay unresolved."""
        files_seeing: dict[frozenset[str], list[str]] = {}  # files that see the same aliases see the same conflicts
        for path in sorted(self._seen_by):
            if self._seen_by[path]:
                files_seeing.setdefault(self._seen_by[path], []).append(path)
        count = 0
        for paths in files_seeing.values():
            for found in self._visible_in(paths[0]).values():
                targets: dict[tuple[str, ...], set[str | None]] = {}
                for alias in found:
                    targets.setdefault(alias.scope, set()).add(self._full_target(paths[0], alias, 0))
                count += len(paths) * sum(len(t) > 1 for t in targets.values())
        return count

    def _visible_in(self, path: str) -> dict[str, tuple[_Alias, ...]]:
        files = self._seen_by.get(path)
        if not files:
            return {}
        visible = self._visible.get(files)
        if visible is None:  # files of an include chain share one set: one table per set
            merged: dict[str, set[_Alias]] = {}
            for file in files:
                for name, found in self._own.get(file, {}).items():
                    merged.setdefault(name, set()).update(found)
            visible = self._visible[files] = {name: tuple(sorted(found)) for name, found in merged.items()}
        return visible

    def _target(self, path: str, scope: str, head: str, absolute: bool, exclude: _Alias | None,
                depth: int) -> str | None:
        """The full name of the namespace the alias ``head`` stands for in ``scope`` of ``path``, ""
        when no alias of it is seen there, None when those seen disagree."""
        found = self._visible_in(path).get(head, ())
        if not found:
            return ""
        parts = tuple(scope.split("::")) if scope else ()
        for k in (0,) if absolute else range(len(parts), -1, -1):
            level = parts[:k]
            hits = [a for a in found if a.scope == level and a != exclude]
            if hits:
                targets = {self._full_target(path, a, depth) for a in hits}
                return targets.pop() if len(targets) == 1 else None
            if "::".join(level + (head,)) in self.scopes:
                return ""  # a namespace or class of that name, nearer than any alias
        return ""

    def _full_target(self, path: str, alias: _Alias, depth: int) -> str | None:
        """``alias``'s target read from its own scope: through the alias at its head, if any, then
        as the full name of the system's namespace it names (as written when there is none)."""
        absolute = alias.target.startswith("::")
        name = alias.target.lstrip(":")
        head, sep, rest = name.partition("::")
        if depth < _MAX_DEPTH and head in self.heads:
            inner = self._target(path, alias.scope_text, head, absolute, alias, depth + 1)
            if inner is None:
                return None
            if inner:
                return f"{inner}::{rest}" if sep else inner
        for k in (0,) if absolute else range(len(alias.scope), -1, -1):
            candidate = "::".join(alias.scope[:k] + (name,))
            if candidate in self.scopes:
                return candidate
        return name
