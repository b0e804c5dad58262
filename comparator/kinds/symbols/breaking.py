"""Whether a changed Python signature breaks its callers, as far as the stored signatures show.

The symbols kind asks this module one question, :func:`breaking_reasons`, so the rules can be
replaced as a whole (by typed rules over ``Node.params`` and ``Node.overloads``) without touching
the release diff. Today's rules read the display signature text of the graph.
"""

from __future__ import annotations

import ast

from extractor.model import Node


def breaking_reasons(old: Node, new: Node) -> list[str]:
    """Why a call that worked against ``old`` may fail against ``new`` (empty: compatible)."""
    return signature_breaks(old.signature, new.signature)


def _parameters(signature: str) -> tuple[ast.arguments | None, bool]:
    """The parameters of a signature as the graph stores it, and whether it was truncated there
    (long signatures end in an ellipsis: only the parameters before the last complete one count)."""
    text = signature.strip()
    if not text.startswith("("):
        return None, False
    truncated = text.endswith("…") or text.endswith("...")
    head = _strip_return(text)
    if truncated and head != text:
        text, truncated = head, False  # cut inside the return annotation: the parameters are whole
    if truncated:
        text = text.rstrip(".…")
        depth, cut = 0, 0
        for i, ch in enumerate(text):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 1:
                cut = i
        text = (text[:cut] if cut else "(") + ")"
    else:
        text = _strip_return(text)
    try:
        tree = ast.parse(f"def _f{text}:\n    pass\n")
    except SyntaxError:
        return None, truncated
    func = tree.body[0]
    return (func.args if isinstance(func, ast.FunctionDef) else None), truncated


def _strip_return(text: str) -> str:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[:i + 1]
    return text


def signature_breaks(old: str, new: str) -> list[str]:
    """Why a call that worked against ``old`` may fail against ``new`` (empty: compatible, as far
    as the stored signatures show)."""
    (pa, cut_a), (pb, cut_b) = _parameters(old), _parameters(new)
    if pa is None or pb is None:
        return ["signature could not be parsed; compare by hand"] if old != new else []
    reasons = []
    pos_a = [x.arg for x in (*pa.posonlyargs, *pa.args)]
    pos_b = [x.arg for x in (*pb.posonlyargs, *pb.args)]
    kw_a, kw_b = [x.arg for x in pa.kwonlyargs], [x.arg for x in pb.kwonlyargs]
    seen_a, seen_b = pos_a + kw_a, pos_b + kw_b
    names_b = set(seen_b)
    for name in seen_a:
        if cut_b and seen_a.index(name) >= len(seen_b):
            continue  # beyond what the truncated new signature shows
        if name not in names_b and pb.kwarg is None and not (name in pos_a and pb.vararg is not None):
            reasons.append(f"parameter '{name}' removed")
    common = [n for n in pos_a if n in pos_b]
    if [n for n in pos_b if n in common] != common or any(pos_a.index(n) != pos_b.index(n) for n in common):
        reasons.append("positional parameters reordered or shifted")
    defaults_b = set(pos_b[len(pos_b) - len(pb.defaults):]) if pb.defaults else set()
    defaults_b |= {x.arg for x, d in zip(pb.kwonlyargs, pb.kw_defaults) if d is not None}
    defaults_a = set(pos_a[len(pos_a) - len(pa.defaults):]) if pa.defaults else set()
    defaults_a |= {x.arg for x, d in zip(pa.kwonlyargs, pa.kw_defaults) if d is not None}
    for name in seen_b:
        if name not in seen_a and name not in defaults_b:
            if cut_a and seen_b.index(name) >= len(seen_a):
                continue  # may be one the truncated old signature hides
            reasons.append(f"required parameter '{name}' added")
        elif name in defaults_a and name not in defaults_b:
            reasons.append(f"parameter '{name}' lost its default")
    if pa.vararg is not None and pb.vararg is None and not cut_b:
        reasons.append("*args removed")
    if pa.kwarg is not None and pb.kwarg is None and not cut_b:
        reasons.append("**kwargs removed")
    return reasons
