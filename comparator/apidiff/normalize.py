"""Two spellings of one type or one value compare equal; anything else is a change.

Annotations: ``Optional[X]``, ``Union[X, None]`` and ``X | None`` are one union; ``List[int]`` is
``list[int]``; ``Annotated[X, ...]`` is ``X`` (its metadata is for validators, not for the type); a
quoted forward reference is its text; a dotted name compares by its last part (``torch.Tensor`` is
``Tensor``: the same class imported two ways). Defaults: literals compare by
value (``1_000`` is ``1000``, ``'a'`` is ``"a"``); other expressions by their normalised text.
"""

from __future__ import annotations

import ast
import functools

_BUILTIN_GENERICS = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                     "Type": "type", "DefaultDict": "defaultdict", "Deque": "deque", "Text": "str"}


@functools.lru_cache(maxsize=65536)
def annotation_members(text: str) -> frozenset[str] | None:
    """The union members of an annotation, each normalised; None when it does not parse."""
    tree = _parse(text)
    if tree is None:
        return None
    return frozenset(_members(tree))


def same_annotation(old: str, new: str) -> bool:
    if old == new:
        return True
    a, b = annotation_members(old), annotation_members(new)
    return a is not None and a == b


def narrower_or_same(old: str, new: str) -> bool:
    """True when every value of ``new`` is a value of ``old`` (a return type that callers still accept)."""
    a, b = annotation_members(old), annotation_members(new)
    return a is not None and b is not None and b <= a


def same_default(old: str | None, new: str | None) -> bool:
    if old == new:
        return True
    if old is None or new is None:
        return False
    a, b = _value(old), _value(new)
    return a is not None and a == b


@functools.lru_cache(maxsize=65536)
def _value(text: str) -> tuple[str, str] | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        tree = _parse(text)
        return ("expr", ast.unparse(tree)) if tree is not None else None
    return (type(value).__name__, repr(value))


def _parse(text: str) -> ast.expr | None:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(tree, ast.Constant) and isinstance(tree.value, str):  # "Foo": a forward reference
        return _parse(tree.value) or tree
    return tree


def _members(node: ast.expr) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _members(node.left) + _members(node.right)
    if isinstance(node, ast.Subscript):
        head = _last(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return [m for a in args for m in _members(a)] + ["None"]
        if head == "Union":
            return [m for a in args for m in _members(a)]
        if head == "Annotated":  # metadata for validators and shape checkers: the type is the first argument
            return _members(args[0])
    return [_render(node)]


def _last(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def _render(node: ast.expr) -> str:
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = _last(node)
        return _BUILTIN_GENERICS.get(name, name)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            inner = _parse(node.value)
            return _render(inner) if inner is not None and not isinstance(inner, ast.Constant) else repr(node.value)
        return repr(node.value)
    if isinstance(node, ast.Subscript):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if _last(node.value) in ("Annotated", "Optional", "Union"):
            return " | ".join(sorted(set(_members(node))))
        parts = [" | ".join(sorted(set(_members(a)))) for a in args]
        return f"{_render(node.value)}[{', '.join(parts)}]"
    if isinstance(node, (ast.List, ast.Tuple)):
        return "[" + ", ".join(_render(e) for e in node.elts) + "]"
    return ast.unparse(node)
