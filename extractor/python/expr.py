"""What the Python scanner records of an expression, as path-free values: dotted names, source
text (``ast.unparse``, never truncated), what a bound value is in one word, a function's parameters
as records and the display text of a signature, a call's callee and arguments, and the class an
annotation names."""

from __future__ import annotations

import ast

from extractor.model import Parameter, ParamKind
from extractor.python.facts import CallSummary, Param

DOC_MAX = 160
SIGNATURE_MAX = 300  # a display signature's length, shortened past it (``params`` never are)
PARAM_KINDS = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.VAR_POSITIONAL,
               ParamKind.KEYWORD_ONLY, ParamKind.VAR_KEYWORD)
POS_ONLY, POS_KW, VAR_POS, KW_ONLY, VAR_KW = range(5)


CHAINED = "()."  # in a callee: what the call before it returns (``f().m``)
# at the end of a callee: an item of it (``kernel[grid](...)``: a Triton kernel's launch, ``Box[int](...)``)
SUBSCRIPTED = "[]"


def dotted(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Name):  # the most frequent case
        return expr.id
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
        return unparse(expr)
    except (ValueError, RecursionError):  # a pathological expression: say so rather than guess
        return "<unrepresentable>"


def unparse(expr: ast.AST) -> str:
    """``ast.unparse(expr)``, written directly for the small expressions that most annotations,
    defaults and arguments are (``int``, ``Optional[str]``, ``x | None``, ``-1``, ``'auto'``,
    ``field(default_factory=list)``): ``ast.unparse`` builds a visitor per call, and the Python
    scanners call it about a hundred thousand times on vLLM. Anything else goes to ``ast.unparse``."""
    text = _simple(expr)
    return text if text is not None else ast.unparse(expr)


def _simple(expr: ast.AST) -> str | None:
    """The text ``ast.unparse`` gives ``expr`` when it is made of names, attribute chains, plain
    constants, subscripts, lists, ``|`` unions, negated numbers and calls of those; else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return name_chain(expr)
    if isinstance(expr, ast.Constant):
        return _constant(expr)
    if isinstance(expr, ast.Subscript):
        value = name_chain(expr.value)
        index = expr.slice
        if value is None:
            return None
        if isinstance(index, ast.Tuple) and index.elts:
            items = _all_simple(index.elts)
            if items is None:
                return None
            inner = f"{items[0]}," if len(items) == 1 else ", ".join(items)
        else:
            text = _simple(index)
            if text is None:
                return None
            inner = text
        return f"{value}[{inner}]"
    if isinstance(expr, ast.List):
        items = _all_simple(expr.elts)
        return None if items is None else f"[{', '.join(items)}]"
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        # left-associative: a | b | c needs no parentheses on the left; the right stays an atom
        if isinstance(expr.right, ast.BinOp):
            return None
        left, right = _simple(expr.left), _simple(expr.right)
        return None if left is None or right is None else f"{left} | {right}"
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
        number = expr.operand.value
        if number.__class__ in (int, float) and number == number and number not in (_INF, -_INF):
            return f"-{number!r}"
        return None
    if isinstance(expr, ast.Call):
        func = name_chain(expr.func)
        args = _all_simple(expr.args)
        if func is None or args is None:
            return None
        for keyword in expr.keywords:
            value_text = _simple(keyword.value) if keyword.arg is not None else None
            if value_text is None:
                return None
            args.append(f"{keyword.arg}={value_text}")
        return f"{func}({', '.join(args)})"
    return None


def _all_simple(exprs: list[ast.expr]) -> list[str] | None:
    out = []
    for expr in exprs:
        text = _simple(expr)
        if text is None:
            return None
        out.append(text)
    return out


_INF = float("inf")


def name_chain(expr: ast.AST) -> str | None:
    """``a.b.c`` for a Name and the attributes on it, as written (no ``super()`` folding); None
    for any other expression."""
    if isinstance(expr, ast.Name):  # the most frequent case
        return expr.id
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _constant(node: ast.Constant) -> str | None:
    value = node.value
    if value is None or value is True or value is False or value is Ellipsis:
        return "..." if value is Ellipsis else repr(value)
    if node.kind is not None:
        return None  # u"..."
    if value.__class__ is int:
        return repr(value)
    if isinstance(value, float) and value.__class__ is float:
        return repr(value) if value == value and value not in (_INF, -_INF) else None
    if isinstance(value, str) and value.isascii() and value.isprintable() and "'" not in value \
            and '"' not in value and "\\" not in value:
        return f"'{value}'"
    return None


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


def parameters(args: ast.arguments) -> tuple[Param, ...]:
    """Each parameter, in order (defaults right-aligned over the positional parameters, one-to-one
    over the keyword-only ones, as Python stores them)."""
    out: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        default = source_text(args.defaults[i - offset]) if i >= offset else None
        out.append(Param(arg.arg, POS_ONLY if i < len(args.posonlyargs) else POS_KW, source_text(arg.annotation),
                         default))
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, VAR_POS, source_text(args.vararg.annotation), None))
    for arg, given in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(arg.arg, KW_ONLY, source_text(arg.annotation), None if given is None else source_text(given)))
    if args.kwarg is not None:
        out.append(Param(args.kwarg.arg, VAR_KW, source_text(args.kwarg.annotation), None))
    return tuple(out)


def to_params(raw: tuple[Param, ...]) -> tuple[Parameter, ...]:
    return tuple(Parameter(p.name, PARAM_KINDS[p.kind], p.annotation, p.default) for p in raw)


def display_signature(params: tuple[Parameter, ...], returns: str) -> str:
    """``(a: int=1, /, *, b) -> str`` as ``ast.unparse`` prints it, shortened for display."""
    # kinds compared by identity with the members, not by their ``.value`` (an enum property: a call
    # each time, several per parameter of every function); a kind is always a member (``.value`` of
    # anything else failed)
    parts: list[str] = []
    star = any(p.kind is ParamKind.VAR_POSITIONAL for p in params)
    last = len(params) - 1
    for i, p in enumerate(params):
        kind = p.kind
        if kind is ParamKind.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = p.name + (f": {p.annotation}" if p.annotation else "") + (f"={p.default}" if p.default is not None else "")
        parts.append(_STARS.get(kind, "") + text)
        if kind is ParamKind.POSITIONAL_ONLY and (i == last or params[i + 1].kind is not ParamKind.POSITIONAL_ONLY):
            parts.append("/")
    text = f"({', '.join(parts)})" + (f" -> {returns}" if returns else "")
    return text if len(text) <= SIGNATURE_MAX else text[: SIGNATURE_MAX - 1] + "…"


_STARS = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}


def call_summary(expr: ast.expr | None) -> CallSummary | None:
    """A call's callee and arguments as source text, else None."""
    if not isinstance(expr, ast.Call):
        return None
    keywords = {k.arg: source_text(k.value) for k in expr.keywords if k.arg is not None}
    return CallSummary(dotted(expr.func) or "", keywords, tuple(source_text(a) for a in expr.args))


def target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


# Subscripted forms whose first argument is the class of the object the name holds, as far as the
# methods called on it go: typing's qualifiers (``Optional[Foo]``, ``Final[Foo]``, ``ClassVar[Foo]``,
# ``Annotated[Foo, ...]``), and an actor framework's reference to an actor, whose method calls run the
# actor's methods (xoscar's and Mars's ``ActorRefType = Union[ActorRef, T]``: ``ref: ActorRefType[Worker]``,
# ``await ref.launch(...)`` runs Worker.launch).
_HOLDING = frozenset({"Optional", "Final", "ClassVar", "Annotated", "ActorRefType"})


def type_name(annotation: ast.expr | None) -> str:
    """The class an annotation names, when it names one: ``Foo``, ``m.Foo``, ``Optional[Foo]`` (and
    the other forms of :data:`_HOLDING`), ``Foo | None``, ``"Foo"``; "" for anything else (unions of
    classes, containers, protocols)."""
    if annotation is None:
        return ""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
        return text if text.replace(".", "").replace("_", "").isalnum() and not text[:1].isdigit() else ""
    if isinstance(annotation, ast.Subscript) and (dotted(annotation.value) or "").rsplit(".", 1)[-1] in _HOLDING:
        inner = annotation.slice
        return type_name(inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [x for x in sides if not (isinstance(x, ast.Constant) and x.value is None)]
        return type_name(kept[0]) if len(kept) == 1 else ""
    name = dotted(annotation)
    return name if name and "super()" not in name else ""
