"""One naming of symbols, shared by every step: graph ids, Python module names, imports, class lineage.

- **Ids.** ``py:<dotted>`` for Python modules and everything in them (``py:pkg.mod.Class.method``),
  ``cpp:<qualified>`` for C/C++/CUDA symbols (``cpp:triton::core::Model``), ``file:<path>`` for C/C++
  files. Steps build ids only through :func:`py_id`, :func:`cpp_id` and :func:`file_id`, so two
  steps can never name one thing twice.
- **Module names from paths** (:func:`module_names`), as Python's import system would see the tree
  with the right directory on ``sys.path``: a directory holding ``__init__.py`` is a package; a
  directory inside a package is a namespace continuation of it (PEP 420); above the topmost package,
  a directory without ``__init__.py`` is a namespace portion (``google/cloud/x/__init__.py`` is
  ``google.cloud.x``) when its name is an identifier, it holds no Python file of its own, and it is
  not a source container such as ``src/`` (so ``src/pkg/mod.py`` is ``pkg.mod``). A file outside any
  package is a top-level module named after the file (a script: ``tools/run.py`` is ``run``).
- **Relative imports** (:func:`resolve_relative`): ``from ..x import y`` in ``pkg.sub.mod`` is
  ``pkg.x``; the package of a package's ``__init__`` is the package itself.
- **Class lineage** (:class:`Lineage`): the C3 linearisation Python computes for ``__mro__``; a
  hierarchy Python would reject (``TypeError: Cannot create a consistent method resolution order``)
  falls back to depth-first, left to right, each class once, and says so.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from extractor.model import Diagnostic, Language, Severity

PY, CPP, FILE = "py:", "cpp:", "file:"
# Directories that hold packages without being one: ``src/pkg`` is imported as ``pkg``.
SOURCE_CONTAINERS = frozenset({"src", "lib", "libs", "python", "source", "sources", "packages", "pkgs"})


def py_id(dotted: str) -> str:
    return PY + dotted


def cpp_id(qualified: str) -> str:
    return CPP + qualified


def file_id(path: str) -> str:
    return FILE + path


# the elaborated name of a C/C++ type a function's name hides (`struct stat` beside `stat()`):
# its node's id, name and qualname say it (extractor.cpp.symbols)
ELABORATING_WORDS = ("class", "struct", "union", "enum")


def unelaborated(name: str) -> str:
    """``name`` without the word a C/C++ type's elaborated name starts with (`struct stat` -> `stat`)."""
    word, space, rest = name.partition(" ")
    return rest if space and word in ELABORATING_WORDS else name


def id_name(node_id: str) -> str:
    """The name an id carries, without its prefix (``py:a.b`` -> ``a.b``)."""
    for prefix in (PY, CPP, FILE):
        if node_id.startswith(prefix):
            return node_id[len(prefix):]
    return node_id


# --- module names ---------------------------------------------------------------------------------

class PythonFile(Protocol):
    @property
    def path(self) -> str: ...  # label-prefixed path: unique in the system

    @property
    def rel(self) -> str: ...  # POSIX path inside its source root

    @property
    def source(self) -> str: ...  # source label


_F = TypeVar("_F", bound=Any)


def module_names(files: Iterable[PythonFile]) -> tuple[dict[str, str], list[Diagnostic]]:
    """Dotted module name of every Python file (by ``path``), from the package layout of its source.

    A name two files would share goes to the first by path; the others are named after their full
    path and get a diagnostic.
    """
    files = sorted(files, key=lambda f: f.path)
    init_dirs: set[tuple[str, str]] = set()
    dirs_with_modules: set[tuple[str, str]] = set()
    projects: set[tuple[str, str]] = set()
    for f in files:
        directory, _, base = f.rel.rpartition("/")
        dirs_with_modules.add((f.source, directory))
        if base == "__init__.py":
            init_dirs.add((f.source, directory))
        elif base == "setup.py":
            projects.add((f.source, directory))
    # A setup.py in a package inside a package builds a wheel of that package alone, installed into
    # its parent's (TransformerEngine's transformer_engine/pytorch/ and /jax/): the package goes on.
    projects = {(source, directory) for source, directory in projects
                if not ((source, directory) in init_dirs and (source, directory.rpartition("/")[0]) in init_dirs
                        and "/" in directory)}
    packages = init_dirs | _src_namespace_packages(init_dirs)
    names: dict[str, str] = {}
    owner: dict[str, str] = {}
    diagnostics = []
    for f in files:
        name = _module_name(f.source, f.rel, packages, dirs_with_modules, projects)
        if name in owner:
            parts = f.rel[:-3].split("/")
            if parts[-1] == "__init__" and len(parts) > 1:  # a package is named after its directory, as
                parts.pop()  # its modules are: their relative imports (`from .basic import X`) reach them
            fallback = ".".join(p for p in (f.source, *parts) if p)
            n = 2
            candidate = fallback
            while candidate in owner:
                candidate, n = f"{fallback}~{n}", n + 1
            diagnostics.append(Diagnostic(f.path, 0, "module-name-clash",
                                          f"module name {name} is already {owner[name]}; named {candidate} here",
                                          Severity.INFO))
            name = candidate
        owner[name] = f.path
        names[f.path] = name
    return names, diagnostics


def _src_namespace_packages(init_dirs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Directories of a source container (``src/``, ``python/``, ...: SOURCE_CONTAINERS) that are
    namespace packages though they hold modules of their own: ``src/pkg/`` without ``__init__.py``
    beside ``src/pkg/sub/__init__.py`` is imported as ``pkg`` (PEP 420, with ``src/`` on the path;
    maturin's mixed projects ship ``python-source = "src"`` so: Dynamo's ``src/dynamo/prometheus_names.py``
    and ``src/dynamo/runtime/``; MLX's ``python/mlx/`` holds ``utils.py`` and ``nn/``, its ``mlx.core``
    an extension). A directory of ``src/`` with modules and no package below (a C++ tree's
    ``src/resources/utils.py``) stays a directory of scripts."""
    found = set()
    for source, directory in init_dirs:
        parent = directory.rpartition("/")[0]  # .../src/pkg
        holder, _, name = parent.rpartition("/")
        if holder.rpartition("/")[2] in SOURCE_CONTAINERS and _importable(name) and (source, parent) not in init_dirs:
            found.add((source, parent))
    return found


def with_module_names(files: Sequence[_F]) -> tuple[_F, ...]:
    """The files (``extractor.context.SourceFile``), each Python file carrying its module name."""
    names, _clashes = module_names(f for f in files if f.language is Language.PYTHON)
    return tuple(dataclasses.replace(f, module=names[f.path]) if f.path in names else f for f in files)


def _module_name(source: str, rel: str, init_dirs: set[tuple[str, str]],
                 dirs_with_modules: set[tuple[str, str]], projects: set[tuple[str, str]]) -> str:
    parts = rel.removesuffix(".py").split("/")
    dirs = parts[:-1]
    # Up to the topmost package the file is in, through any directories import can name between
    # (a directory inside a package continues it, PEP 420, however deep and whether or not the
    # directories between have an __init__.py), never above a project of its own (a directory with
    # a setup.py: a plugin or an example shipped inside the tree is imported as installed) ...
    top = len(dirs)
    for k in range(len(dirs) - 1, -1, -1):
        if not _importable(dirs[k]) or (source, "/".join(dirs[: k + 1])) in projects:
            break
        if (source, "/".join(dirs[: k + 1])) in init_dirs:
            top = k
    i = top - 1
    # ... then through namespace portions above the topmost package (never from a lone script).
    if top < len(dirs):
        while i >= 0 and _namespace_portion(source, dirs, i, dirs_with_modules):
            i -= 1
    dotted = parts[i + 1:]
    if dotted and dotted[-1] == "__init__":
        dotted = dotted[:-1]
    return ".".join(dotted) or "__init__"


def _namespace_portion(source: str, dirs: list[str], i: int, dirs_with_modules: set[tuple[str, str]]) -> bool:
    name = dirs[i]
    return (_importable(name) and name not in SOURCE_CONTAINERS
            and (source, "/".join(dirs[: i + 1])) not in dirs_with_modules)


def _importable(name: str) -> bool:
    """A directory name an import statement can spell."""
    return name.isidentifier() and not keyword.iskeyword(name)


def package_of(module: str, is_package: bool) -> str:
    """The package that relative imports in ``module`` start from."""
    return module if is_package else module.rpartition(".")[0]


def is_package_file(rel: str) -> bool:
    return rel == "__init__.py" or rel.endswith("/__init__.py")


def resolve_relative(package: str, target: str, level: int) -> str | None:
    """Absolute module of ``from <level dots><target> import ...`` in ``package``; None above the top."""
    if level == 0:
        return target
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def resolve_dotted(package: str, dotted: str) -> str:
    """A name as a scanner records it, ``..x.y`` relative or ``a.b`` absolute, made absolute."""
    if not dotted.startswith("."):
        return dotted
    level = len(dotted) - len(dotted.lstrip("."))
    return resolve_relative(package, dotted[level:], level) or dotted[level:]


# --- class lineage --------------------------------------------------------------------------------

class Lineage:
    """Method resolution orders over a class graph given as class -> direct bases (in order).

    A base missing from ``bases`` is a leaf (an external class: its own MRO is not known here).
    """

    def __init__(self, bases: Mapping[str, Sequence[str]] | Callable[[str], Sequence[str]]) -> None:
        self._bases = bases if callable(bases) else (lambda cls, _b=bases: _b.get(cls, ()))
        self._memo: dict[str, tuple[str, ...]] = {}
        self.inconsistent: set[str] = set()  # classes whose MRO Python would refuse to build

    def mro(self, cls: str) -> tuple[str, ...]:
        found = self._memo.get(cls)
        if found is None:
            self._memo[cls] = (cls,)  # guards a cycle in a mis-resolved hierarchy
            found = self._memo[cls] = self._linearize(cls)
        return found

    def _linearize(self, cls: str) -> tuple[str, ...]:
        bases = [b for b in dict.fromkeys(self._bases(cls)) if b != cls]
        if not bases:
            return (cls,)
        if len(bases) == 1:  # C3 over one base gives that base's MRO, which has no repeats (most classes)
            return (cls, *[c for c in self.mro(bases[0]) if c != cls])
        sequences = [list(self.mro(b)) for b in bases] + [list(bases)]
        merged = _c3_merge(sequences)
        if merged is None:
            self.inconsistent.add(cls)
            merged = list(dict.fromkeys(c for b in bases for c in self.mro(b)))
        return (cls, *[c for c in merged if c != cls])


def _c3_merge(sequences: list[list[str]]) -> list[str] | None:
    result: list[str] = []
    sequences = [s for s in sequences if s]
    while sequences:
        for seq in sequences:
            head = seq[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        result.append(head)
        sequences = [s[1:] if s[0] == head else s for s in sequences]
        sequences = [s for s in sequences if s]
    return result
