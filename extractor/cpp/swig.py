"""SWIG interface files (``.i``, ``.swig``): the Python module they make and the C++ it wraps.

Read by the C/C++ step (its scanner, :func:`scan_swig`, is the step's for interface files), so that
the symbols a module wraps are the system's API as pybind11's are (``Node.api``: ``public: swig
swigfaiss.IndexFlat``); the bindings step binds Python's calls and says what each module covers.

SWIG writes a Python module (``%module swigfaiss``: ``swigfaiss.py`` over ``_swigfaiss.so``) from an
interface file, and what it wraps is what the headers the file ``%include``\\ s declare: their
functions and classes, each class's public methods, under their plain names (SWIG flattens C++
namespaces into the one module: ``faiss::IndexFlat`` is ``swigfaiss.IndexFlat``). The interface file
is read here as SWIG reads it, far enough to know those names, and each becomes a binding of the
module (mechanism "swig") that Python calls bind to as they bind to a pybind11 module's:

- ``%module [(options)] NAME`` names the module (an interface file without one is only ``%include``\\ d
  by another, whose module its wrapped headers join);
- ``%include <h>``/``"h"`` of a header wraps its declarations (the C++ step's facts of that file); of an
  interface file (``.i``/``.swg``/``.swig``) of the system reads that file in its place; SWIG's own
  library (``std_string.i``) is no file of the system and wraps nothing archdiff reads; ``%import``
  wraps nothing (its declarations are only known to SWIG);
- a template wraps nothing until ``%template(Name) ns::Tmpl<args>;`` names an instantiation, which is
  class (or function) ``Name`` of the module, bound to the template;
- ``%ignore x;`` leaves out what is named so (qualified, ``*::member``, or a bare name: any scope);
  ``%rename(new) x;`` gives it the name ``new``;
- code written in the interface file itself (``%inline %{ ... %}``, ``%extend X { ... }``) is wrapped
  too, but it is not C++ archdiff parses: its functions are no nodes, said in the module's diagnostic;
  a method an ``%extend`` block writes binds to the members of its class its body calls through
  ``$self`` (what it wraps);
- constructors, destructors and operators are not named (a class is called through its name), nor
  private and protected members, nor classes nested in classes;
- the low-level extension the proxy module loads (``_swigfaiss``) is bound too, by the flat names
  SWIG gives its wrappers (``new_IndexFlat``, ``IndexFlat_add``, ``knn``), which a generated proxy
  kept in the tree calls.

Preprocessor conditionals of the interface file (``#ifdef GPU_WRAPPER``) are not evaluated: every
branch's ``%include`` is read, as every branch of a C++ file is.
"""

from __future__ import annotations

import collections
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from extractor.cpp.facts import Definition
from extractor.cpp.ops import PyBinding
from extractor.model import Diagnostic, ParsedFile, Severity

INTERFACE_SUFFIXES = (".i", ".swg", ".swig")
_CLASS_KINDS = frozenset({"class", "struct", "union"})
_FUNCTION_KINDS = frozenset({"function", "kernel"})
_NOT_MEMBERS = frozenset({"private", "protected"})


class SwigInclude(msgspec.Struct, frozen=True, array_like=True, order=True):
    line: int
    target: str  # as written between the brackets or quotes


class SwigName(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``%rename(name) written;`` or ``%template(name) written<...>;`` (``written`` without the arguments)."""

    line: int
    name: str
    written: str


class SwigExtend(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A method an ``%extend Class { ... }`` block writes: its name and the members of the class its
    body calls through ``$self`` (``return $self->Load(arg);``), in order, each once."""

    line: int
    cls: str  # the class as the %extend names it
    name: str
    calls: tuple[str, ...]


class SwigInterface(msgspec.Struct, frozen=True):
    module: str  # "" for a file that names none
    line: int  # of the %module directive
    includes: tuple[SwigInclude, ...]  # in order
    ignores: tuple[str, ...]  # as written, a signature dropped: `faiss::hamming`, `*::cmp`
    renames: tuple[SwigName, ...]
    templates: tuple[SwigName, ...]
    own_code: tuple[int, ...]  # lines of %inline and %extend blocks: code SWIG wraps that is no parsed C++
    extends: tuple[SwigExtend, ...] = ()  # the methods %extend blocks write


# `%{ ... %}` (and `%inline %{ ... %}`): C++ copied into the wrapper, no directive of SWIG's
_VERBATIM = re.compile(r"%\{.*?%\}", re.S)
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MODULE = re.compile(r"^[ \t]*%module\b[ \t]*(?:\([^)]*\))?[ \t]*\"?([A-Za-z_]\w*)", re.M)
_INCLUDE = re.compile(r"^[ \t]*%include\b[ \t]*(?:\([^)]*\))?[ \t]*[<\"]([^<>\"\n]+)[>\"]", re.M)
_IGNORE = re.compile(r"^[ \t]*%ignore[ \t]+([^;\n]+);", re.M)
_RENAME = re.compile(r"^[ \t]*%rename[ \t]*\([ \t]*\"?([A-Za-z_]\w*)\"?[ \t]*\)[ \t]*([^;\n]+);", re.M)
_TEMPLATE = re.compile(r"^[ \t]*%template[ \t]*\([ \t]*([A-Za-z_]\w*)[ \t]*\)[ \t]*((?:::)?[A-Za-z_][\w:]*)[ \t]*<",
                       re.M)
_OWN_CODE = re.compile(r"^[ \t]*%(?:inline[ \t]*%\{|extend\b[^{;\n]*\{)", re.M)
_WRITTEN = re.compile(r"\s*((?:::)?(?:\*|[A-Za-z_~]\w*)(?:\s*::\s*(?:[A-Za-z_~]\w*|operator\S*))*)")


def scan_swig(parsed: ParsedFile) -> SwigInterface | None:
    """Per-file scanner of an interface file: its module, what it %includes, ignores, renames and
    instantiates, and where it writes code of its own."""
    text = parsed.data.decode("utf-8", errors="replace")
    own_code = tuple(_line(text, m.start()) for m in _OWN_CODE.finditer(text))
    # comments and verbatim blocks blanked, newlines kept: lines stay where they are
    text = _COMMENTS.sub(_blank, text)
    text = _VERBATIM.sub(_blank, text)
    module = _MODULE.search(text)
    includes = tuple(SwigInclude(_line(text, m.start()), m.group(1).strip()) for m in _INCLUDE.finditer(text))
    ignores = tuple(sorted({w for m in _IGNORE.finditer(text) if (w := _written(m.group(1)))}))
    renames = tuple(SwigName(_line(text, m.start()), m.group(1), w) for m in _RENAME.finditer(text)
                    if (w := _written(m.group(2))))
    templates = tuple(SwigName(_line(text, m.start()), m.group(1), m.group(2).lstrip(":"))
                      for m in _TEMPLATE.finditer(text))
    if module is None and not includes:
        return None
    return SwigInterface(module.group(1) if module else "", _line(text, module.start(1)) if module else 0,
                         includes, ignores, renames, templates, own_code, _extends(text))


_EXTEND = re.compile(r"^[ \t]*%extend[ \t]+((?:::)?[A-Za-z_][\w:]*)[^{;\n]*\{", re.M)
_SELF_CALL = re.compile(r"\$self\s*->\s*([A-Za-z_]\w*)\s*\(")
_METHOD_NAME = re.compile(r"(~?[A-Za-z_]\w*)\s*$")


def _extends(text: str) -> tuple[SwigExtend, ...]:
    """The methods of each ``%extend`` block (comments and verbatim blocks already blanked): each
    function defined at the block's top level, named by the identifier before its parameter list;
    constructors and destructors (``Class(...)``, ``~Class()``) and directives (``%pythoncode {``)
    are no methods Python calls by a name of their own."""
    out = []
    for m in _EXTEND.finditer(text):
        cls = m.group(1).lstrip(":")
        last = cls.rpartition("::")[2]
        end = _closing(text, m.end() - 1)
        start = m.end()
        at = start
        while at < end:
            brace = text.find("{", at, end)
            if brace < 0:
                break
            header = text[start:brace]
            close = _closing(text, brace)
            header = header[max(header.rfind(";"), header.rfind("}")) + 1:]
            paren = header.find("(")  # the parameter list
            name = _METHOD_NAME.search(header[:paren]) if paren >= 0 and "%" not in header else None
            if name is not None and name.group(1).lstrip("~") != last:
                calls = tuple(dict.fromkeys(c.group(1) for c in _SELF_CALL.finditer(text, brace, close)))
                out.append(SwigExtend(_line(text, start + name.start(1)), cls, name.group(1), calls))
            start = at = close + 1
    return tuple(out)


def _closing(text: str, brace: int) -> int:
    """The index of the ``}`` closing the ``{`` at ``brace`` (the text's end when none does)."""
    depth = 0
    for i in range(brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text)



def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _written(declaration: str) -> str:
    """The qualified name a %ignore or %rename names, its signature dropped (``faiss::X::f(int) const``
    -> ``faiss::X::f``); "" for a pattern not read (``%rename("%(regex:...)s") ""``)."""
    m = _WRITTEN.match(declaration)
    return re.sub(r"\s+", "", m.group(1)).lstrip(":") if m else ""


class SwigModule(msgspec.Struct, frozen=True):
    """What one module's interface files say, its %included interface files read in place."""

    path: str  # the interface file with the %module
    module: str
    line: int  # of the %module
    headers: tuple[tuple[str, str, int], ...]  # (header, interface file, line of its %include)
    unresolved: int  # %included headers that are no file of the system
    ignores: frozenset[str]
    renames: dict[str, str]  # written -> new name
    templates: tuple[tuple[str, str, str, int], ...]  # (name, written template, interface file, line)
    own_code: tuple[tuple[str, int], ...]  # (interface file, line)
    extends: tuple[tuple[str, SwigExtend], ...] = ()  # (interface file, method of an %extend block)


def swig_modules(interfaces: Mapping[str, SwigInterface], resolve_header: Callable[[str, str], str],
                 resolve_interface: Callable[[str, str], str]) -> list[SwigModule]:
    """Each interface file that names a module, with the headers it wraps: its own %includes and
    those of the system's interface files it %includes (depth first, each file once)."""
    out = []
    for path in sorted(interfaces):
        top = interfaces[path]
        if not top.module:
            continue
        headers: list[tuple[str, str, int]] = []
        unresolved = 0
        ignores: set[str] = set()
        renames: dict[str, str] = {}
        templates: list[tuple[str, str, str, int]] = []
        own_code: list[tuple[str, int]] = []
        extends: list[tuple[str, SwigExtend]] = []
        seen = {path}
        pending = [path]
        while pending:
            current = pending.pop()
            facts = interfaces[current]
            ignores.update(facts.ignores)
            for r in facts.renames:
                renames.setdefault(r.written, r.name)
            templates.extend((t.name, t.written, current, t.line) for t in facts.templates)
            own_code.extend((current, line) for line in facts.own_code)
            extends.extend((current, e) for e in facts.extends)
            nested = []
            for include in facts.includes:
                if include.target.endswith(INTERFACE_SUFFIXES):
                    found = resolve_interface(current, include.target)
                    if found and found not in seen:
                        seen.add(found)
                        nested.append(found)
                    continue
                header = resolve_header(current, include.target)
                if header:
                    headers.append((header, current, include.line))
                else:
                    unresolved += 1
            pending.extend(reversed(nested))
        out.append(SwigModule(path, top.module, top.line, tuple(headers), unresolved, frozenset(ignores), renames,
                              tuple(templates), tuple(sorted(own_code)), tuple(sorted(extends))))
    return out


def swig_bindings(module: SwigModule, declared: Mapping[str, Sequence[Definition]],
                  nodes: Mapping[str, object], bases: Mapping[str, Sequence[str]] | None = None) -> list[PyBinding]:
    """The names ``module`` gives the declarations of the headers it wraps (``declared``: the C++
    step's definitions per file), each bound to the node of its qualified name in ``nodes`` (target
    "" when the C++ graph has none). A class's proxy inherits its wrapped bases' methods (``bases``:
    each class's qualified name -> its bases', the C++ graph's `inherits` edges): ``Flat.search``
    is ``Index::search`` when ``Flat`` does not declare its own."""
    classes: dict[str, list[tuple[str, str, int]]] = collections.defaultdict(list)  # qual -> (name, file, line)
    functions: list[tuple[str, str, str, int]] = []  # (qual, name, file, line)
    methods: list[tuple[str, str]] = []  # (qual, owner qual)
    templated: dict[str, list[tuple[str, str, int]]] = collections.defaultdict(list)
    for name, written, where, line in module.templates:
        templated[written].append((name, where, line))
    for header, where, line in module.headers:
        for d in declared.get(header, ()):
            scopes = [kind for _name, kind in d.scope]
            if _NOT_MEMBERS & set(d.tags) or any(k in ("function", "enum") or k in _CLASS_KINDS for k in scopes[:-1]) \
                    or "(anonymous namespace)" in d.qual or _ignored(d.qual, module.ignores):
                continue
            # a member: declared in its class's body, or defined out of it (`void X::f() {}`, a written qualifier)
            in_class = bool(scopes) and (scopes[-1] in _CLASS_KINDS or scopes[-1] == "")
            if d.kind in _CLASS_KINDS and not in_class:
                names = [(n, w, ln) for n, w, ln in templated.get(d.qual, ())] if "template" in d.tags else \
                    [(_renamed(d.qual, module.renames), where, line)]
                classes[d.qual].extend(names)
            elif d.kind in _FUNCTION_KINDS and not in_class:
                if "template" in d.tags:
                    functions.extend((d.qual, n, w, ln) for n, w, ln in templated.get(d.qual, ()))
                else:
                    functions.append((d.qual, _renamed(d.qual, module.renames), where, line))
            elif d.kind in _FUNCTION_KINDS and in_class:
                owner, _, last = d.qual.rpartition("::")
                if last != owner.rpartition("::")[2] and not last.startswith(("~", "operator")):
                    methods.append((d.qual, owner))
    own = {qual for qual, _owner in methods}
    declared_by: dict[str, list[str]] = collections.defaultdict(list)  # class -> its own methods
    for qual, owner in methods:
        declared_by[owner].append(qual)
    for cls in list(classes):
        taken = {qual.rpartition("::")[2] for qual in declared_by[cls]}
        seen, pending = {cls}, list((bases or {}).get(cls, ()))
        while pending:  # nearest base first: an override hides its base's method
            base = pending.pop(0)
            if base in seen:
                continue
            seen.add(base)
            pending.extend((bases or {}).get(base, ()))
            for qual in declared_by.get(base, ()) if base in classes else ():
                if qual.rpartition("::")[2] not in taken:
                    taken.add(qual.rpartition("::")[2])
                    methods.append((qual, cls))
    out: list[PyBinding] = []
    for qual, named in classes.items():
        target = _target(qual, nodes)
        out.extend(PyBinding(where, line, "class", module.module, name, "", qual, target, "swig")
                   for name, where, line in named)
    for qual, name, where, line in functions:
        out.append(PyBinding(where, line, "def", module.module, name, "", qual, _target(qual, nodes), "swig"))
    for qual, owner in methods:
        # `function`: the method as the class reaches it, its base's when inherited (Node.api names the
        # method by its own class's binding: extractor.cpp.graph)
        last, reached = _renamed(qual, module.renames), f"{owner}::{qual.rpartition('::')[2]}"
        out.extend(PyBinding(where, line, "method", module.module, last, cls, reached, _target(qual, nodes), "swig")
                   for cls, where, line in classes.get(owner, ()))
    out.extend(_flat_bindings(module, out, own))
    out.extend(_extend_bindings(module, classes, nodes, bases or {}))
    return sorted(set(out), key=lambda b: (b.path, b.line, b.kind, b.owner, b.name, b.target))


def _extend_bindings(module: SwigModule, classes: Mapping[str, Sequence[tuple[str, str, int]]],
                     nodes: Mapping[str, object], bases: Mapping[str, Sequence[str]]) -> list[PyBinding]:
    """A method an ``%extend`` block writes binds, in the proxy and in the low-level module (its flat
    name is its class's, as a wrapped method's), to each member of the class its body calls through
    ``$self`` (the class's own, else the nearest base's): its body is no C++ archdiff parses, and what
    it wraps is those members (sentencepiece's ``_EncodeAsIds`` calls ``$self->EncodeAsIds``). A
    method whose body calls none binds nothing, and the module's diagnostic counts it."""
    by_last: dict[str, list[str]] = collections.defaultdict(list)
    for qual in classes:
        by_last[qual.rpartition("::")[2]].append(qual)
    out = []
    for where, e in module.extends:
        qual = e.cls if e.cls in classes else (by_last[e.cls][0] if len(by_last.get(e.cls, ())) == 1 else "")
        for called in e.calls if qual else ():
            target = _member(qual, called, nodes, bases)
            if not target:
                continue
            for cls, _w, _l in classes[qual]:
                out.append(PyBinding(where, e.line, "method", module.module, e.name, cls, f"{qual}::{called}", target,
                                     "swig"))
                out.append(PyBinding(where, e.line, "def", low_level_module(module.module), f"{cls}_{e.name}", "",
                                     f"{qual}::{called}", target, "swig"))
    return out


def _member(qual: str, name: str, nodes: Mapping[str, object], bases: Mapping[str, Sequence[str]]) -> str:
    """The node of the member ``name`` of class ``qual`` (its own, else the nearest base's), or ""."""
    seen, pending = set(), [qual]
    while pending:
        cls = pending.pop(0)
        if cls in seen:
            continue
        seen.add(cls)
        found = _target(f"{cls}::{name}", nodes)
        if found:
            return found
        pending.extend(bases.get(cls, ()))
    return ""


def low_level_module(module: str) -> str:
    """The extension module SWIG's Python proxy module ``module`` loads (``_swigfaiss.so``)."""
    return "_" + module


def _flat_bindings(module: SwigModule, proxies: Sequence[PyBinding], own: set[str]) -> list[PyBinding]:
    """The names of the low-level module the proxy module calls (``_M``, an extension with no
    ``.py``): SWIG writes each wrapped function under its name, a class's constructor as
    ``new_<Class>`` and each method the class declares as ``<Class>_<method>``; the proxy's
    ``def add(self, n, x): return _swigvs.FlatIndex_add(self, n, x)`` calls these (sentencepiece keeps
    its generated proxy in its tree: 103 such calls). An inherited method has no flat name of the
    class that inherits it: Python reaches it through the base's proxy (``own``: the methods declared
    by the class they are bound on)."""
    low = low_level_module(module.module)
    out = []
    for b in proxies:
        if b.kind == "class":
            out.append(PyBinding(b.path, b.line, "def", low, f"new_{b.name}", "", b.function, b.target, "swig"))
        elif b.kind == "def":
            out.append(PyBinding(b.path, b.line, "def", low, b.name, "", b.function, b.target, "swig"))
        elif b.kind == "method" and b.function in own:  # declared by its own class
            out.append(PyBinding(b.path, b.line, "def", low, f"{b.owner}_{b.name}", "", b.function, b.target,
                                 "swig"))
    return out


def _target(qual: str, nodes: Mapping[str, object]) -> str:
    node = "cpp:" + qual
    return node if node in nodes else ""


def _ignored(qual: str, ignores: Iterable[str]) -> bool:
    last = qual.rpartition("::")[2]
    for written in ignores:
        if written == qual or (written == last) or (written.startswith("*::") and written[3:] == last):
            return True
    return False


def _renamed(qual: str, renames: Mapping[str, str]) -> str:
    last = qual.rpartition("::")[2]
    return renames.get(qual) or renames.get(last) or last


def swig_diagnostic(module: SwigModule, bindings: Sequence[PyBinding], calls: int,
                    imported_at: Sequence[str] = ()) -> Diagnostic:
    """What a module's bindings cover, and what of it archdiff does not read; when no call reaches
    it, where the system's Python imports it (``imported_at``: "path:line" of each import), if anywhere."""
    written = {(p, e.line) for p, e in module.extends}
    extended = {(b.path, b.line) for b in bindings if b.target and (b.path, b.line) in written}
    bindings = [b for b in bindings if (b.path, b.line) not in written]  # the headers' names
    resolved = sum(1 for b in bindings if b.target)
    headers = len({h for h, _w, _l in module.headers})
    parts = [f"SWIG module {module.module} wraps {headers} header(s) of the system: {len(bindings)} name(s) of "
             f"their functions, classes and public methods ({resolved} found in the C++ graph) are bound, "
             f"and {calls} Python call(s) reach them"]
    if not calls and bindings:
        more = f" and {len(imported_at) - 3} more" if len(imported_at) > 3 else ""
        parts.append(f"the system's Python imports it at {', '.join(imported_at[:3])}{more}, and no call through "
                     "those imports (nor the names they re-export) is one of its names" if imported_at else
                     "no Python file of the system imports it")
    if module.unresolved:
        parts.append(f"{module.unresolved} %include(s) name no file of the system")
    if module.extends:
        parts.append(f"{len(extended)} of the {len(written)} method(s) %extend blocks write are bound to the members "
                     "they call through $self")
    if module.own_code:
        lines = ", ".join(f"{posixpath.basename(p)}:{line}" for p, line in module.own_code[:5])
        more = f" and {len(module.own_code) - 5} more" if len(module.own_code) > 5 else ""
        parts.append(f"code the interface files write themselves (%inline, %extend: {lines}{more}) is wrapped "
                     "too but not read" + (" otherwise" if module.extends else ""))
    return Diagnostic(module.path, module.line, "swig-module", "; ".join(parts), Severity.INFO)
