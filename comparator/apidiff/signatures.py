"""Rules over two parameter lists (extractor.model.Parameter), as a caller sees a callable change.

The parameter rules are griffe's (``_function_incompatibilities``): a parameter removed (unless a
``*args``/``**kwargs`` of the right kind now takes it), moved among the positional ones, changed
kind in a way that breaks the old calls, newly required, or added as required; a changed default.
The return rule goes further than griffe, which only notices a removed annotation: a changed return
annotation is breaking unless the new one is a narrower union or the old one was ``None``.
"""

from __future__ import annotations

from collections.abc import Iterator

from comparator.apidiff.normalize import narrower_or_same, same_annotation, same_default
from comparator.apidiff.rules import BreakageKind
from extractor.model import Parameter, ParamKind, Signature

_POSITIONAL = frozenset({ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD})
_VARIADIC = frozenset({ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD})
# (kind, subject, old, new, breaking); ``breaking`` before the symbol's own publicness is asked.
Change = tuple[BreakageKind, str, str, str, bool]


def required(p: Parameter) -> bool:
    return p.default is None and p.kind not in _VARIADIC


def _incompatible_kind(old: ParamKind, new: ParamKind, has_var_args: bool, has_var_kwargs: bool) -> bool:
    return any((
        old is ParamKind.POSITIONAL_ONLY and new is ParamKind.KEYWORD_ONLY,
        old is ParamKind.KEYWORD_ONLY and new is ParamKind.POSITIONAL_ONLY,
        old is ParamKind.POSITIONAL_OR_KEYWORD and new in (ParamKind.POSITIONAL_ONLY, ParamKind.KEYWORD_ONLY),
        new is ParamKind.VAR_KEYWORD and old is not ParamKind.KEYWORD_ONLY and not has_var_args,
        new is ParamKind.VAR_POSITIONAL and old is not ParamKind.POSITIONAL_ONLY and not has_var_kwargs,
    ))


def parameter_changes(old: tuple[Parameter, ...], new: tuple[Parameter, ...]) -> Iterator[Change]:
    new_by_name: dict[str, tuple[int, Parameter]] = {}
    for i, p in enumerate(new):
        new_by_name.setdefault(p.name, (i, p))
    kinds = {p.kind for p in new}
    var_args, var_kwargs = ParamKind.VAR_POSITIONAL in kinds, ParamKind.VAR_KEYWORD in kinds
    for i, p in enumerate(old):
        found = new_by_name.get(p.name)
        if found is None:
            swallowed = ((p.kind is ParamKind.KEYWORD_ONLY and var_kwargs)
                         or (p.kind is ParamKind.POSITIONAL_ONLY and var_args)
                         or (p.kind is ParamKind.POSITIONAL_OR_KEYWORD and var_args and var_kwargs))
            yield BreakageKind.PARAMETER_REMOVED, p.name, "", "", not swallowed
            continue
        j, q = found
        if required(q) and not required(p):
            yield BreakageKind.PARAMETER_NOW_REQUIRED, p.name, f"default {p.default}", "no default", True
        if p.kind in _POSITIONAL and q.kind in _POSITIONAL and i != j:
            yield BreakageKind.PARAMETER_MOVED, p.name, f"position {i}", f"position {j}", True
        if p.kind is not q.kind:
            yield (BreakageKind.PARAMETER_KIND_CHANGED, p.name, p.kind.value, q.kind.value,
                   _incompatible_kind(p.kind, q.kind, var_args, var_kwargs))
        if not required(p) and not required(q) and p.kind not in _VARIADIC and q.kind not in _VARIADIC \
                and not same_default(p.default, q.default):
            yield BreakageKind.DEFAULT_CHANGED, p.name, p.default or "", q.default or "", True
    names = {p.name for p in old}
    for q in new:
        if q.name not in names and required(q):
            yield BreakageKind.PARAMETER_ADDED_REQUIRED, q.name, "", "", True


def return_change(old: str, new: str) -> Change | None:
    if not old or old == new or same_annotation(old, new):
        return None
    if old.strip() == "None":
        return BreakageKind.RETURN_CHANGED, "", old, new or "(no annotation)", False
    if not new:
        return BreakageKind.RETURN_CHANGED, "", old, "(no annotation)", True
    return BreakageKind.RETURN_CHANGED, "", old, new, not narrower_or_same(old, new)


def render_params(params: tuple[Parameter, ...]) -> str:
    return ", ".join(p.name + (f": {p.annotation}" if p.annotation else "") for p in params)


def _shape(sig: Signature) -> tuple:
    return (tuple((p.name, p.kind, required(p), p.annotation) for p in sig.params), sig.returns)


def _accepts(old: Signature, new: tuple[Parameter, ...]) -> bool:
    """Whether calls shaped like ``old`` (names, kinds, types) bind to ``new`` without a breaking change."""
    if any(c[4] for c in parameter_changes(old.params, new) if c[0] is not BreakageKind.DEFAULT_CHANGED):
        return False
    by_name = {p.name: p for p in new}
    return all(not p.annotation or p.name not in by_name or not by_name[p.name].annotation
               or narrower_or_same(by_name[p.name].annotation, p.annotation) for p in old.params)


def removed_overloads(old: tuple[Signature, ...], new: tuple[Signature, ...],
                      implementation: tuple[Parameter, ...]) -> Iterator[tuple[Signature, bool]]:
    """Old ``@overload`` variants no new variant matches, and whether calls shaped like one now fail
    (no new variant, or the implementation when there are none, accepts them without a breaking change)."""
    shapes = {_shape(s) for s in new}
    candidates = [s.params for s in new] or [implementation]
    for sig in old:
        if _shape(sig) not in shapes:
            yield sig, not any(_accepts(sig, cand) for cand in candidates)
