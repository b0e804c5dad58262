"""Which Python symbols are a package's public API, and why: the ``api`` field of every node.

The rules are griffe's (``Object.is_public``), which follow the language's conventions, plus where
the code sits:

- A module is public unless a part of its dotted name starts with ``_`` (``__main__`` is special,
  not private), it lies inside a package that is not public, or it sits where nothing is imported
  from: a test, example, benchmark or docs tree outside any package (``tests/``, ``benchmarks/``;
  a package's own ``vllm/benchmarks`` is part of it), a test file (``test_*.py``, ``conftest.py``),
  or a script in a directory that is not a package (``tools/run.py``). Those names are data
  (``api.yaml``).
- A module-level name in a module that defines ``__all__`` is public exactly when it is listed;
  without ``__all__``, when it does not start with ``_``. Imported names are not the module's own:
  they appear in the graph only as re-exports (an ``attribute`` node with ``value_kind``
  ``re-export`` and an ``aliases`` edge to what it names) when ``__all__`` lists them or they are
  imported as themselves (``from m import x as x``).
- A class member is public when its class is and its name does not start with ``_``; special
  names (``__init__``, ``__call__``) are public, class-private ones (``__x``) are not.
- Anything local to a function is private.
- A symbol that is not public where it is defined becomes public when a public re-export names it
  (``vllm.LLM`` makes ``vllm.entrypoints.llm.LLM`` public), and so do its members.

Each reason reads ``public: ...`` or ``private: ...``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

from extractor.support.datafile import Regex, load_data_file
from extractor.model import Node, NodeKind
from extractor.naming import SOURCE_CONTAINERS

RULES_FILE = Path(__file__).with_name("api.yaml")
_SCHEMA = {"version": int, "apart_dirs": [str], "apart_files": [Regex]}
PUBLIC, PRIVATE = "public: ", "private: "
REEXPORTED = PUBLIC + "re-exported as "  # public only because a public re-export names it
# a tuple: ``in`` meets the member by identity; a set hashes it first, through the enum type's generic slot
# (four times slower per test here, for each of 45,000 nodes)
_LOCAL_KINDS = (NodeKind.FUNCTION, NodeKind.METHOD)


@dataclasses.dataclass(frozen=True, slots=True)
class ApiRules:
    apart_dirs: frozenset[str]
    apart_files: re.Pattern[str]


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleInfo:
    name: str
    rel: str  # path inside its source root
    is_package: bool
    exports: tuple[str, ...] | None  # ``__all__``, when the module defines it readably


def load_rules(path: Path = RULES_FILE) -> ApiRules:
    data = load_data_file(path, _SCHEMA)
    return ApiRules(frozenset(data["apart_dirs"]), re.compile("|".join(f"(?:{p})$" for p in data["apart_files"])))


def is_public(reason: str) -> bool:
    return reason.startswith(PUBLIC)


def _private_name(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_reason(info: ModuleInfo, rules: ApiRules) -> str:
    """Why a module is or is not public, from its name and where its file sits (not its parents)."""
    dirs = info.rel.split("/")[:-1]
    parts = info.name.split(".")
    package_dirs = len(parts) - (0 if info.is_package else 1)
    outside = dirs[: max(0, len(dirs) - package_dirs)]
    apart = [d for d in (*outside, parts[0]) if d in rules.apart_dirs]
    if apart:
        return f"{PRIVATE}in a {apart[0]}/ tree"
    if rules.apart_files.match(info.rel.rsplit("/", 1)[-1]):
        return f"{PRIVATE}a test or project script by its file name"
    if not info.is_package and len(parts) == 1 and any(d not in SOURCE_CONTAINERS for d in outside):
        return f"{PRIVATE}a script outside any package"
    private = [p for p in parts if _private_name(p)]
    if private:
        return f"{PRIVATE}underscore name ({private[0]})"
    return f"{PUBLIC}module"


def api_reasons(nodes: Mapping[str, Node], parents: Mapping[str, str], modules: Mapping[str, ModuleInfo],
                aliases: Mapping[str, str], rules: ApiRules) -> dict[str, str]:
    """``api`` of every node in ``nodes`` (Python, not external): ``parents`` maps a node to what
    contains it, ``modules`` a module's dotted name to its facts, ``aliases`` a re-export node to
    the node it names."""
    order = _parents_first(nodes, parents)
    module_reasons = {name: module_reason(info, rules) for name, info in modules.items()}
    promoted: dict[str, str] = {}
    api: dict[str, str] = {}
    _assign(order, nodes, parents, modules, module_reasons, promoted, api)
    for _ in range(8):  # a re-export of a re-export: follow a few hops, never loop
        fresh = {}
        for alias, target in sorted(aliases.items()):
            if is_public(api.get(alias, "")) and target in api and not is_public(api[target]) \
                    and target not in promoted:
                fresh[target] = nodes[alias].qualname
        if not fresh:
            break
        promoted.update(fresh)
        # Only what lies under a newly public symbol changes; children follow their parents in ``order``.
        changed = set(fresh)
        redo = []
        for nid in order:
            if nid in changed or parents.get(nid) in changed:
                changed.add(nid)
                redo.append(nid)
        _assign(redo, nodes, parents, modules, module_reasons, promoted, api)
    return api


def _parents_first(nodes: Mapping[str, Node], parents: Mapping[str, str]) -> list[str]:
    """The node ids with each node's container before it (a reason reads its parent's; any such
    order gives the same reasons). Sorted ids are one when every container's id is a prefix of its
    members' (as naming makes them); otherwise, by depth in the containment tree."""
    if all(map(str.startswith, parents, parents.values())):  # in C: no position per id
        return sorted(nodes)
    depth: dict[str, int] = {}

    def depth_of(nid: str) -> int:
        chain: list[str] = []
        cursor: str | None = nid
        while cursor is not None and cursor not in depth and len(chain) < 256:
            chain.append(cursor)
            cursor = parents.get(cursor)
        base = depth.get(cursor, -1) if cursor is not None else -1
        for i, item in enumerate(reversed(chain)):
            depth[item] = base + 1 + i
        return depth[nid]

    return sorted(nodes, key=lambda nid: (depth_of(nid), nid))


# The reasons that name nothing of the node's own, built once rather than per node (45,000 on vLLM).
_OUTSIDE, _LOCAL = f"{PRIVATE}outside any module", f"{PRIVATE}local to a function"
_SPECIAL, _CLASS_PRIVATE = f"{PUBLIC}special member", f"{PRIVATE}class-private name"
_UNDERSCORE, _MEMBER = f"{PRIVATE}underscore name", f"{PUBLIC}class member"
_IN_NON_PUBLIC = {kind: f"{PRIVATE}member of a non-public {kind.value}" for kind in NodeKind}


def _assign(order: list[str], nodes: Mapping[str, Node], parents: Mapping[str, str],
            modules: Mapping[str, ModuleInfo], module_reasons: Mapping[str, str],
            promoted: Mapping[str, str], api: dict[str, str]) -> None:
    for nid in order:
        node = nodes[nid]
        parent_id = parents.get(nid, "")
        parent = nodes.get(parent_id) if parent_id else None
        if nid in promoted:
            api[nid] = REEXPORTED + promoted[nid]
        elif node.kind is NodeKind.MODULE:
            own = module_reasons.get(node.qualname, f"{PUBLIC}module")
            if parent is not None and not is_public(api[parent_id]) and is_public(own):
                own = f"{PRIVATE}inside non-public package {parent.qualname}"
            api[nid] = own
        elif parent is None:
            api[nid] = _OUTSIDE
        elif parent.kind in _LOCAL_KINDS or "<locals>" in node.qualname:
            api[nid] = _LOCAL
        elif parent.kind is NodeKind.MODULE:
            api[nid] = _module_member(node, parent, api[parent_id], modules.get(parent.qualname))
        elif not is_public(api[parent_id]):
            api[nid] = _IN_NON_PUBLIC[parent.kind]
        elif node.name.startswith("__") and node.name.endswith("__"):
            api[nid] = _SPECIAL
        elif node.name.startswith("__"):
            api[nid] = _CLASS_PRIVATE
        elif node.name.startswith("_"):
            api[nid] = _UNDERSCORE
        else:
            api[nid] = _MEMBER


def _module_member(node: Node, module: Node, module_api: str, info: ModuleInfo | None) -> str:
    if not is_public(module_api):
        return f"{PRIVATE}in a non-public module"
    if info is not None and info.exports is not None:
        if node.name in info.exports:
            return f"{PUBLIC}listed in __all__"
        return f"{PRIVATE}not listed in __all__"
    if _private_name(node.name):
        return _UNDERSCORE
    return f"{PUBLIC}module-level name"
