"""Resolving a callee as written in one module to what it names across the system: a library
constructor (``prometheus_client.Gauge``), a class, function or method of the analysed code.

Built once per system from the scanners' facts (imports, classes with their bases, class
attributes and methods, factory signatures).
"""

from __future__ import annotations

import dataclasses

from extractor import naming
from extractor.telemetry.python_facts import ClassFacts, ImportEntry, MadeCallable, Signature


@dataclasses.dataclass
class Module:
    name: str
    path: str  # evidence path of the file
    is_package: bool
    imports: dict[str, ImportEntry]
    classes: dict[str, ClassFacts]
    functions: dict[str, Signature]  # factory signatures by qualname within the module
    makers: dict[str, MadeCallable] = dataclasses.field(default_factory=dict)  # functions returning a callable
    stars: tuple[ImportEntry, ...] = ()  # its ``from m import *``, in source order


class PythonResolver:
    """Resolves dotted names to canonical targets (``prometheus_client.Gauge``, ``pkg.mod.Class``)."""

    def __init__(self, modules: dict[str, Module]):
        self.modules = modules
        self.classes: dict[str, tuple[Module, ClassFacts]] = {}
        self.signatures: dict[str, tuple[Module, Signature]] = {}
        self.makers: dict[str, tuple[Module, MadeCallable]] = {}
        for module in modules.values():
            for qual, made in module.makers.items():
                self.makers[f"{module.name}.{qual}"] = (module, made)
            for cls in module.classes.values():
                self.classes[f"{module.name}.{cls.name}"] = (module, cls)
            for qual, signature in module.functions.items():
                self.signatures[f"{module.name}.{qual}"] = (module, signature)
        # "pkg.mod.Class" also under "mod.Class"-style tails, for trees whose import root is not
        # the source root (a src/ layout): used only when the tail names one definition.
        self._tails: dict[str, set[str]] = {}
        for qual in list(self.classes) + list(self.signatures):
            parts = qual.split(".")
            for i in range(1, len(parts) - 1):
                self._tails.setdefault(".".join(parts[i:]), set()).add(qual)
        # resolve(text, module) of a depth-0 question, by (id(module), text): the same callee is
        # asked about from call after call (vLLM: 55,000 questions, a few thousand distinct)
        self._resolved: dict[tuple[int, str], str] = {}
        self.subclasses: dict[str, set[str]] = {}
        for qual, (module, cls) in self.classes.items():
            for base in cls.bases:
                target = self.resolve(base, module)
                if target:
                    self.subclasses.setdefault(target, set()).add(qual)

    def _import_target(self, entry: ImportEntry, module: Module) -> str:
        package = naming.package_of(module.name, module.is_package)
        base = naming.resolve_relative(package, entry.module, entry.level) or entry.module
        return f"{base}.{entry.name}" if entry.name else base

    def resolve(self, text: str, module: Module, depth: int = 0) -> str:
        """Canonical dotted target of ``text`` as written in ``module``; '' when unknown."""
        if depth == 0:
            key = (id(module), text)
            found = self._resolved.get(key)
            if found is None:
                found = self._resolved[key] = self._resolve(text, module, 0)
            return found
        return self._resolve(text, module, depth)

    def _resolve(self, text: str, module: Module, depth: int) -> str:
        if depth > 10:
            return ""
        head, _, rest = text.partition(".")
        if head in module.imports:
            target = self._import_target(module.imports[head], module)
        elif head in module.classes:
            target = f"{module.name}.{head}"
        elif head in module.functions:
            target = f"{module.name}.{head}"
        else:
            origin = self.star_origin(module, head)
            return self.resolve(text, origin, depth + 1) if origin is not None else ""
        full = f"{target}.{rest}" if rest else target
        return self._follow_reexport(full, depth)

    def _follow_reexport(self, full: str, depth: int) -> str:
        """``pkg.Name`` where ``pkg/__init__.py`` imports ``Name`` from elsewhere -> the origin."""
        if full in self.classes or full in self.signatures:
            return full
        tails = self._tails.get(full, ())
        if len(tails) == 1:
            return next(iter(tails))
        owner, _, name = full.rpartition(".")
        module = self.modules.get(owner)
        if module is not None and name in module.imports:
            return self.resolve(name, module, depth + 1)
        return full

    def star_modules(self, module: Module) -> list[Module]:
        """The analysed modules ``module`` star-imports, the last first (its names win)."""
        found = []
        for entry in reversed(module.stars):
            target = self.modules.get(self._import_target(ImportEntry(entry.module, entry.level, ""), module))
            if target is not None and target is not module:
                found.append(target)
        return found

    def star_origin(self, module: Module, name: str) -> Module | None:
        """The star-imported module whose own import, class or function ``name`` is: the one a
        name the module neither defines nor imports by name comes from."""
        if name.startswith("_"):
            return None
        for star in self.star_modules(module):
            if name in star.imports or name in star.classes or name in star.functions:
                return star
        return None

    def lookup_attr(self, class_qual: str, attr: str, seen: frozenset[str] = frozenset()) -> str:
        """Resolve class attribute ``attr`` along ``class_qual``'s bases (depth-first MRO)."""
        if class_qual in seen or class_qual not in self.classes:
            return ""
        module, cls = self.classes[class_qual]
        if attr in cls.attrs:
            return self.resolve(cls.attrs[attr], module)
        for base in cls.bases:
            found = self.lookup_attr(self.resolve(base, module), attr, seen | {class_qual})
            if found:
                return found
        return ""

    def lookup_method(self, class_qual: str, name: str, seen: frozenset[str] = frozenset()) -> str:
        """``pkg.mod.Class.method`` of the first class along the MRO that defines ``name``."""
        if class_qual in seen or class_qual not in self.classes:
            return ""
        module, cls = self.classes[class_qual]
        if name in cls.methods:
            return f"{class_qual}.{name}"
        for base in cls.bases:
            found = self.lookup_method(self.resolve(base, module), name, seen | {class_qual})
            if found:
                return found
        return ""

    def first_base(self, class_qual: str) -> str:
        if class_qual not in self.classes:
            return ""
        module, cls = self.classes[class_qual]
        return self.resolve(cls.bases[0], module) if cls.bases else ""

    def bases(self, class_qual: str) -> list[str]:
        if class_qual not in self.classes:
            return []
        module, cls = self.classes[class_qual]
        return [t for t in (self.resolve(b, module) for b in cls.bases) if t]

    def descendants(self, class_qual: str) -> list[str]:
        out: list[str] = []
        stack = [class_qual]
        while stack:
            current = stack.pop()
            for sub in sorted(self.subclasses.get(current, ())):
                if sub not in out and sub != class_qual:
                    out.append(sub)
                    stack.append(sub)
        return sorted(out)
