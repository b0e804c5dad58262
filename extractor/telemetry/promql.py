"""A small PromQL lexer: enough to list the metrics an expression reads and its top-level comparison.
Keywords and aggregation operators are matched in any case, as Prometheus's lexer does (`BY`, `SUM`).

Not a full parser. It knows the token classes of PromQL (identifiers, strings, numbers, durations,
operators, brackets) and the places where an identifier is *not* a metric: a function or aggregation
name (followed by ``(`` or ``by``/``without``), a keyword, a label name inside ``{...}``, the
grouping labels of ``by``/``without``/``on``/``ignoring``/``group_left``/``group_right``, and
anything inside a range ``[...]``. Dashboard and adapter template variables (``$var``, ``${var}``,
``[[var]]``, ``<<.LabelMatchers>>``) and Helm's template actions left in a rule (``{{ $.Values.x }}``,
``by ({{ range .labels }}{{ . }},{{ end }}job)``: kube-prometheus-stack's rules) are accepted as
opaque tokens.
"""

from __future__ import annotations

import dataclasses
import re

KEYWORDS = frozenset({
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or",
    "unless", "atan2", "inf", "nan",
})
AGGREGATIONS = frozenset({
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
    "topk", "quantile", "limitk", "limit_ratio",
})
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<tplvar>\{\{.*?\}\}|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\[\[[^\]]*\]\]|<<[^>]*>>)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+(?![A-Za-z0-9_:]))
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^=<>@])
  | (?P<punct>[(){}\[\],])
""", re.VERBOSE | re.DOTALL)


@dataclasses.dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    pos: int


@dataclasses.dataclass(frozen=True, slots=True)
class Analysis:
    metrics: tuple[str, ...]
    op: str  # top-level comparison, "" when none
    value: float | None  # the literal the comparison is against, None when not a literal
    error: str = ""  # what the lexer did not understand ("" when everything was read)


class PromQLError(ValueError):
    pass


def tokenize(expr: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None:
            raise PromQLError(f"unexpected {expr[pos]!r} at offset {pos}")
        kind = match.lastgroup or ""
        if kind not in ("ws", "comment"):
            tokens.append(Token(kind, match.group(), pos))
        pos = match.end()
    return tokens


def analyse(expr: str) -> Analysis:
    """Metrics read and the top-level comparison of ``expr``; never raises."""
    try:
        tokens = tokenize(expr)
    except PromQLError as err:
        return Analysis(metrics=_salvage_metrics(expr), op="", value=None, error=str(err))
    metrics = _metrics(tokens)
    op, value = _comparison(tokens)
    error = "" if _balanced(tokens) else "unbalanced brackets"
    return Analysis(metrics=metrics, op=op, value=value, error=error)


def _salvage_metrics(expr: str) -> tuple[str, ...]:
    """Best effort for an expression the lexer rejects: identifiers that are not calls, keywords,
    label matchers or ranges."""
    # comments and strings (`# see https://...`, `owner_kind="Deployment"`) hold no metric
    stripped = re.sub(r"""#[^\n]*|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`""", " ", expr)
    stripped = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", stripped)
    stripped = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", stripped)
    names = set()
    for match in re.finditer(r"(?<![A-Za-z0-9_:$.])([A-Za-z_:][A-Za-z0-9_:]*)(?![A-Za-z0-9_:])(?!\s*\()", stripped):
        name = match.group(1)
        if name.lower() not in KEYWORDS and name.lower() not in AGGREGATIONS:
            names.add(name)
    return tuple(sorted(names))


def _balanced(tokens: list[Token]) -> bool:
    pairs = {")": "(", "}": "{", "]": "["}
    stack: list[str] = []
    for token in tokens:
        if token.kind != "punct" or token.text == ",":
            continue
        if token.text in "({[":
            stack.append(token.text)
        elif not stack or stack.pop() != pairs[token.text]:
            return False
    return not stack


def _metrics(tokens: list[Token]) -> tuple[str, ...]:
    found: set[str] = set()
    brace = bracket = 0
    skip_group_depth: int | None = None  # paren depth of a by(...)/without(...) label list
    paren = 0
    for i, token in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if token.kind == "punct":
            if token.text == "{":
                brace += 1
            elif token.text == "}":
                brace = max(0, brace - 1)
            elif token.text == "[":
                bracket += 1
            elif token.text == "]":
                bracket = max(0, bracket - 1)
            elif token.text == "(":
                paren += 1
                if prev is not None and prev.kind == "ident" and prev.text.lower() in GROUPING:
                    skip_group_depth = paren
            elif token.text == ")":
                if skip_group_depth == paren:
                    skip_group_depth = None
                paren -= 1
            continue
        if token.kind == "string" and brace and prev is not None and prev.text in ("=", "=~"):
            # {__name__="metric"} names the metric in a label matcher
            name_tok = tokens[i - 2] if i >= 2 else None
            if name_tok is not None and name_tok.text == "__name__" and prev.text == "=":
                found.add(token.text[1:-1])
            continue
        if token.kind != "ident" or brace or bracket or skip_group_depth is not None:
            continue
        if token.text.lower() in KEYWORDS:
            continue
        if nxt is not None and nxt.kind == "punct" and nxt.text == "(":
            continue  # a function or aggregation call
        if token.text.lower() in AGGREGATIONS and nxt is not None and nxt.text.lower() in ("by", "without"):
            continue
        if prev is not None and prev.text.lower() == "offset":
            continue
        found.add(token.text)
    return tuple(sorted(found))


def _comparison(tokens: list[Token]) -> tuple[str, float | None]:
    """The comparison operator at bracket depth 0 and the literal on its other side."""
    depth = 0
    for i, token in enumerate(tokens):
        if token.kind == "punct":
            if token.text in "({[":
                depth += 1
            elif token.text in ")}]":
                depth -= 1
            continue
        if depth or token.kind != "op" or token.text not in COMPARISONS:
            continue
        right = tokens[i + 1:]
        if right and right[0].text.lower() == "bool":
            right = right[1:]
        value = _literal(right)
        op = token.text
        if value is None:
            left_value = _literal(tokens[:i])
            if left_value is not None:
                return _flip(op), left_value
        return op, value
    return "", None


def _literal(tokens: list[Token]) -> float | None:
    sign = 1.0
    if tokens and tokens[0].kind == "op" and tokens[0].text in "+-":
        sign = -1.0 if tokens[0].text == "-" else 1.0
        tokens = tokens[1:]
    if len(tokens) != 1 or tokens[0].kind != "number":
        return None
    text = tokens[0].text
    return sign * (float(int(text, 16)) if text.lower().startswith("0x") else float(text))


def _flip(op: str) -> str:
    return {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(op, op)
