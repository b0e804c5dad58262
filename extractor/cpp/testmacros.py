"""Test-framework macros: what a body written as `TEST_F(Fixture, Name) { ... }` defines once expanded.

tree-sitter reads such a use at namespace scope as a function named `TEST_F` whose parameters are
the types `Fixture` and `Name`; taken as written, every test body of a namespace would be one node
`TEST_F` holding all their calls (Triton's 14 bodies of core/src/test/memory_test.cc, ~160 across
its repositories, were 12 such nodes). The framework's expansion names each body: googletest's
`class Fixture_Name_Test : public Fixture` with the body as its `TestBody()`, Boost.Test's `struct
name` with `test_method()`. The rules are data (testmacros.yaml beside this module); the scanner
asks :func:`expand_test` what a use defines and records that class and method. The same file lists
the macros that open and close a suite's namespace (Boost's BOOST_AUTO_TEST_SUITE), which the parse
writes out as namespaces (:func:`extractor.cpp.parse.file_namespace_macros`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from extractor.errors import UserInputError
from extractor.support.datafile import load_data_file

TESTMACROS_FILE = Path(__file__).with_name("testmacros.yaml")
TESTMACROS_SCHEMA = {
    "expand?": {str: {"framework": str, "args": [str], "more_args?": int, "namespace?": str, "class": str,
                      "kind?": str, "method": str, "access?": str, "bases?": [str], "template?": bool}},
    "unnamed?": {str: {"framework": str}},
    "suites?": {str: str},
}
# a suite macro's kind as extractor.cpp.parse.namespace_macros spells it
_SUITE_KINDS = {"open": "(", "close": "}"}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclasses.dataclass(frozen=True, slots=True)
class FrameworkMacro:
    """One macro of testmacros.yaml's ``expand``: its arguments and what its expansion defines,
    with ``{argument}`` placeholders."""

    framework: str
    args: tuple[str, ...]
    more_args: int  # further arguments it takes (Boost's decorators), which name nothing
    namespace: str  # "" when the class is in the macro's own scope
    aggregate: str  # the class's name
    kind: str  # "class" or "struct"
    method: str
    access: str  # "" (public), "private" or "protected": the method's
    bases: tuple[str, ...]
    template: bool

    @property
    def naming_args(self) -> frozenset[str]:
        """The arguments spelled into a name (gtest pastes them into identifiers); a base may be
        any type (Boost's `BOOST_FIXTURE_TEST_CASE(name, ns::Fixture)`)."""
        return frozenset(_PLACEHOLDER.findall(self.namespace + " " + self.aggregate))


@dataclasses.dataclass(frozen=True, slots=True)
class ExpandedTest:
    """What one use of a test macro defines: ``aggregate`` (in ``namespace`` when there is one, in
    the use's scope) deriving from ``bases``, and its ``method``, whose body is the use's."""

    framework: str
    namespace: str
    aggregate: str
    kind: str
    method: str
    access: str
    bases: tuple[str, ...]
    template: bool


@dataclasses.dataclass(frozen=True, slots=True)
class FrameworkMacros:
    """testmacros.yaml: the macros expanded, and those whose bodies cannot be named (by framework)."""

    expand: Mapping[str, FrameworkMacro]
    unnamed: Mapping[str, str]
    suites: Mapping[str, str]  # macro -> "(" (opens the namespace its first argument names) or "}"


@functools.cache
def load_test_macros(path: Path = TESTMACROS_FILE) -> FrameworkMacros:
    """testmacros.yaml, checked: every placeholder names one of the macro's arguments."""
    raw = load_data_file(path, TESTMACROS_SCHEMA)
    expand = {}
    for name, rule in (raw.get("expand") or {}).items():
        kind = rule.get("kind", "class")
        if kind not in ("class", "struct"):
            raise UserInputError(f"{path}: expand.{name}.kind: expected class or struct, got {kind!r}")
        access = rule.get("access", "")
        if access not in ("", "private", "protected"):
            raise UserInputError(f"{path}: expand.{name}.access: expected private or protected, got {access!r}")
        templates = [rule.get("namespace", ""), rule["class"], *rule.get("bases", ())]
        unknown = {p for t in templates for p in _PLACEHOLDER.findall(t)} - set(rule["args"])
        if unknown:
            raise UserInputError(f"{path}: expand.{name}: {{{sorted(unknown)[0]}}} is none of its args "
                                 f"{rule['args']}")
        expand[name] = FrameworkMacro(rule["framework"], tuple(rule["args"]), rule.get("more_args", 0),
                                      rule.get("namespace", ""), rule["class"], kind, rule["method"], access,
                                      tuple(rule.get("bases", ())), rule.get("template", False))
    unnamed = {name: rule["framework"] for name, rule in (raw.get("unnamed") or {}).items()}
    suites = {}
    for name, kind in (raw.get("suites") or {}).items():
        if kind not in _SUITE_KINDS:
            raise UserInputError(f"{path}: suites.{name}: expected open or close, got {kind!r}")
        suites[name] = _SUITE_KINDS[kind]
    return FrameworkMacros(expand, unnamed, suites)


def expand_test(macro: FrameworkMacro, args: Sequence[str]) -> ExpandedTest | None:
    """What a use of ``macro`` with ``args`` (as written, split at top-level commas) defines; None
    when they do not fit it (another number of arguments, a name that is not an identifier): then
    the use is not this framework's."""
    if not len(macro.args) <= len(args) <= len(macro.args) + macro.more_args:
        return None
    named = dict(zip(macro.args, (a.strip() for a in args)))
    if not all(_IDENTIFIER.fullmatch(named[arg]) for arg in macro.naming_args) or not all(named.values()):
        return None

    def spelled(template: str) -> str:
        return _PLACEHOLDER.sub(lambda m: named[m.group(1)], template)

    return ExpandedTest(macro.framework, spelled(macro.namespace), spelled(macro.aggregate), macro.kind,
                        macro.method, macro.access, tuple(spelled(b) for b in macro.bases), macro.template)
