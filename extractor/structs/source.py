"""Struct, class and union definitions in C/C++/CUDA headers, found with tree-sitter.

Used when the C++ graph step has not run (or gave no aggregate nodes): the probe step needs to
know which names a header defines, to list those whose probe fails as ``unresolved``.
Class templates are left out: they have no layout until instantiated.
"""

from __future__ import annotations

import dataclasses

from extractor.cpp.parse import parse_source
from extractor.model import Language

_KINDS = {"struct_specifier": "struct", "class_specifier": "class", "union_specifier": "union"}


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class StructDefinition:
    line: int
    qualname: str
    kind: str


def find_struct_definitions(data: bytes, language: Language, tree=None
                            ) -> tuple[StructDefinition, ...]:
    """Aggregate definitions (not templates) in one file. ``tree``: the tree the pipeline already
    parsed from ``data`` (parse_source blanks ``__align__``/``__attribute__``/``__declspec``, which
    would otherwise derail the grammar between ``struct`` and the name)."""
    if tree is None:
        tree = parse_source(data, language)
    found: list[StructDefinition] = []
    _visit(tree.root_node, (), False, found)
    return tuple(sorted(found))


def scan_struct_definitions(parsed) -> list[list] | None:
    """Per-file scanner (``ParsedFile`` -> JSON facts): ``[[line, qualname, kind], ...]``.

    Runs on every C/C++/CUDA file, whatever its name (scanners never see paths); the step keeps
    the headers."""
    if parsed.tree is None:
        return None
    return [[d.line, d.qualname, d.kind]
            for d in find_struct_definitions(parsed.data, parsed.language, parsed.tree)]


def _visit(node, scope: tuple[str, ...], in_template: bool, found: list) -> None:
    for child in node.children:
        kind = child.type
        if kind == "template_declaration":
            _visit(child, scope, True, found)
            continue
        if kind == "namespace_definition":
            name = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            inner = scope + ((_text(name) if name is not None else "(anonymous namespace)"),)
            if body is not None:
                _visit(body, inner, in_template, found)
            continue
        if kind in _KINDS:
            name = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            if body is not None and name is not None and name.type in ("type_identifier",
                                                                        "qualified_identifier"):
                qual = "::".join(scope + (_text(name),))
                if not in_template:
                    found.append(StructDefinition(child.start_point[0] + 1, qual, _KINDS[kind]))
                _visit(body, scope + (_text(name),), in_template, found)
            elif body is not None:
                _visit(body, scope, in_template, found)
            continue
        if kind in ("declaration", "type_definition", "field_declaration", "declaration_list",
                    "field_declaration_list", "linkage_specification", "preproc_if",
                    "preproc_ifdef", "preproc_else", "preproc_elif", "translation_unit"):
            _visit(child, scope, in_template, found)


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")
