"""What the Python scanner records of an expression, as path-free values: dotted names, source
text (``ast.unparse``, never truncated), what a bound value is in one word, a function's parameters
as records, a call's callee and arguments, and the class an annotation names."""

from __future__ import annotations

import ast
from typing import Any

from extractor.model import ParamKind

DOC_MAX = 160
PARAM_KINDS = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.VAR_POSITIONAL,
               ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD)
POS_ONLY, POS_KW, VAR_POS, KW_ONLY, VAR_KW = range(5)


def dotted(expr: ast.AST) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super":
        parts.append("super()")
    else:
        return None
    return ".".join(reversed(parts))


def doc_line(body: list[ast.stmt]) -> str:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        for line in body[0].value.value.strip().splitlines():
            if line.strip():
                return line.strip()[:DOC_MAX]
    return ""


def source_text(expr: ast.AST | None) -> str:
    if expr is None:
        return ""
    try:
        return ast.unparse(expr)
    except (ValueError, RecursionError):  # a pathological expression: say so rather than guess
        return "<unrepresentable>"


def value_kind(expr: ast.expr | None) -> str:
    """What a bound value is, in one word (``Node.value_kind``)."""
    if expr is None:
        return ""
    if isinstance(expr, ast.Constant) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant)):
        return "constant"
    if isinstance(expr, ast.JoinedStr):
        return "constant"
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return "alias"
    if isinstance(expr, ast.Call):
        return "call"
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp)):
        return "container"
    if isinstance(expr, ast.Lambda):
        return "lambda"
    return "expression"


def parameters(args: ast.arguments) -> list[list[Any]]:
    """``[name, kind, annotation, default]`` per parameter, in order (defaults right-aligned over
    the positional parameters, one-to-one over the keyword-only ones, as Python stores them)."""
    out: list[list[Any]] = []
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        default = source_text(args.defaults[i - offset]) if i >= offset else None
        out.append([arg.arg, POS_ONLY if i < len(args.posonlyargs) else POS_KW, source_text(arg.annotation), default])
    if args.vararg is not None:
        out.append([args.vararg.arg, VAR_POS, source_text(args.vararg.annotation), None])
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append([arg.arg, KW_ONLY, source_text(arg.annotation), None if default is None else source_text(default)])
    if args.kwarg is not None:
        out.append([args.kwarg.arg, VAR_KW, source_text(args.kwarg.annotation), None])
    return out


def call_summary(expr: ast.expr | None) -> list[Any] | None:
    """``[callee, {keyword: text}, [positional texts]]`` for a call, else None."""
    if not isinstance(expr, ast.Call):
        return None
    keywords = {k.arg: source_text(k.value) for k in expr.keywords if k.arg is not None}
    return [dotted(expr.func) or "", keywords, [source_text(a) for a in expr.args]]


def target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def type_name(annotation: ast.expr | None) -> str:
    """The class an annotation names, when it names one: ``Foo``, ``m.Foo``, ``Optional[Foo]``,
    ``Foo | None``, ``"Foo"``; "" for anything else (unions of classes, containers, protocols)."""
    if annotation is None:
        return ""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
        return text if text.replace(".", "").replace("_", "").isalnum() and not text[:1].isdigit() else ""
    if isinstance(annotation, ast.Subscript) and (dotted(annotation.value) or "").rsplit(".", 1)[-1] == "Optional":
        return type_name(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [x for x in sides if not (isinstance(x, ast.Constant) and x.value is None)]
        return type_name(kept[0]) if len(kept) == 1 else ""
    name = dotted(annotation)
    return name if name and "super()" not in name else ""
