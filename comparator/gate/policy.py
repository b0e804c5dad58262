"""What a project promises, as it writes it in ``[tool.archdiff]`` of ``pyproject.toml`` (or in
``archdiff.toml``, the same keys at the top level), and which gate findings it keeps.

A project importable as a whole still promises only part of it (vLLM documents ``vllm.LLM``,
``vllm.SamplingParams`` and its server; the rest is internal): without a policy, every public
name counts and the gate is red on every release. Keys::

    [tool.archdiff]
    accepted = "archdiff-accepted.yaml"   # the accepted-changes file, relative to the root
    ignore = ["default-changed"]          # rules that never count (RULE, or RULE:GLOB for the
                                          # rule on the symbols the glob matches)
    warn = ["return-changed"]             # rules reported as warnings, never failures (same forms)

    [tool.archdiff.api]
    packages = ["servekit"]               # top-level packages whose API is promised (default: all)
    public = "names"                      # names: not under "_" (archdiff's rule); all: only what
                                          # __all__ lists; init: only what a package's __init__ binds
    include = ["servekit.core.*"]         # fnmatch globs of dotted paths kept (default: all)
    exclude = ["servekit.testing.*"]      # globs dropped

    [tool.archdiff.metrics]
    removal = "read"                      # read: a metric change fails only through a threshold of
                                          # the repository reading it; always: every change fails
    exclude = ["*_debug_*"]               # metric names not promised

    [tool.archdiff.structs]
    include = ["KV*"]                     # struct types whose layout is promised (default: all)
    exclude = []

    [tool.archdiff.proto]
    include = ["serve.v1.*"]              # protobuf full names whose wire format is promised
    exclude = ["serve.internal.*"]        # (default: all)

``api`` scopes the Python API: its packages and ``public`` modes are Python's. A ``.proto``'s wire
format is a promise of its own, to every client of the service whatever language it is written in,
so protobuf findings are kept unless ``proto`` (or ``ignore``, ``warn``) says otherwise.

An unknown key or a wrong type is one error naming the key (:func:`extractor.support.datafile.check_data`).
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from comparator.gate.findings import Family, Finding, Status
from extractor.errors import UserInputError
from extractor.evidence.read import Evidence
from extractor.model import EdgeKind, Node, NodeKind
from extractor.support.datafile import check_data

E = TypeVar("E", bound=enum.Enum)

POLICY_FILE = "archdiff.toml"
ACCEPTED_FILE = "archdiff-accepted.yaml"
_GLOBS = {"include?": [str], "exclude?": [str]}
SCHEMA = {
    "accepted?": str,
    "ignore?": [str],
    "warn?": [str],
    "api?": {"packages?": [str], "public?": str, **_GLOBS},
    "metrics?": {"removal?": str, "exclude?": [str]},
    "structs?": dict(_GLOBS),
    "proto?": dict(_GLOBS),
}


class PublicMode(str, enum.Enum):
    NAMES = "names"  # not under "_" (and listed in __all__ where a module has one): archdiff's own rule
    ALL = "all"  # only names a module's __all__ lists, and their members
    INIT = "init"  # only names a package's __init__ binds (defines or re-exports), and their members


class MetricRemoval(str, enum.Enum):
    READ = "read"
    ALWAYS = "always"


@dataclasses.dataclass(frozen=True, slots=True)
class Globs:
    include: tuple[str, ...] = ()  # empty: everything
    exclude: tuple[str, ...] = ()

    def keeps(self, name: str) -> bool:
        if self.include and not any(fnmatch.fnmatchcase(name, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, g) for g in self.exclude)


@dataclasses.dataclass(frozen=True, slots=True)
class Policy:
    source: str = ""  # the file it was read from ("" for the default policy)
    accepted: str = ACCEPTED_FILE
    ignore: frozenset[str] = frozenset()
    warn: frozenset[str] = frozenset()
    packages: tuple[str, ...] = ()
    public: PublicMode = PublicMode.NAMES
    api: Globs = Globs()
    metric_removal: MetricRemoval = MetricRemoval.READ
    metrics: Globs = Globs()
    structs: Globs = Globs()
    proto: Globs = Globs()


def read_policy(root: Path, explicit: Path | None = None) -> Policy:
    """The policy of the project at ``root``: ``explicit`` if given, else ``[tool.archdiff]`` of
    ``root/pyproject.toml``, else ``root/archdiff.toml``, else the default (everything public
    counts, as ``archdiff compare`` counts it)."""
    if explicit is not None:
        return _policy(_read_toml(explicit), explicit)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("archdiff")
        if table is not None:
            return _policy(table, pyproject, "tool.archdiff")
    if (root / POLICY_FILE).is_file():
        return _policy(_read_toml(root / POLICY_FILE), root / POLICY_FILE)
    return Policy()


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise UserInputError(f"{path}: cannot read the policy ({err.strerror or err})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UserInputError(f"{path}: not valid TOML ({err})") from None


def _policy(table: Any, path: Path, where: str = "") -> Policy:
    check_data(table, SCHEMA, str(path), where)
    api, metrics = table.get("api", {}), table.get("metrics", {})
    structs, proto = table.get("structs", {}), table.get("proto", {})
    return Policy(
        source=str(path),
        accepted=table.get("accepted", ACCEPTED_FILE),
        ignore=frozenset(table.get("ignore", ())),
        warn=frozenset(table.get("warn", ())),
        packages=tuple(api.get("packages", ())),
        public=_choice(PublicMode, api.get("public", "names"), path, f"{where}.api.public".lstrip(".")),
        api=Globs(tuple(api.get("include", ())), tuple(api.get("exclude", ()))),
        metric_removal=_choice(MetricRemoval, metrics.get("removal", "read"), path,
                               f"{where}.metrics.removal".lstrip(".")),
        metrics=Globs((), tuple(metrics.get("exclude", ()))),
        structs=Globs(tuple(structs.get("include", ())), tuple(structs.get("exclude", ()))),
        proto=Globs(tuple(proto.get("include", ())), tuple(proto.get("exclude", ()))),
    )


def _choice(kind: type[E], value: str, path: Path, key: str) -> E:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(m.value) for m in kind)
        raise UserInputError(f"{path}: {key}: expected one of {choices}, got {value!r}") from None


def promised_names(evidence: Evidence, policy: Policy) -> frozenset[str] | None:
    """The dotted paths whose members the policy's ``public`` mode promises, read from the old
    release (what users could rely on); None in ``names`` mode (every public name counts).

    A re-export promises what it names too: ``vllm.LLM`` in ``vllm/__init__.py`` promises
    ``vllm.entrypoints.llm.LLM``, the path the API diff reports."""
    if policy.public is PublicMode.NAMES:
        return None
    nodes = {n.id: n for n in evidence.graph.nodes}
    aliases: dict[str, list[str]] = {}
    for edge in evidence.graph.edges:
        if edge.kind is EdgeKind.ALIASES:
            aliases.setdefault(edge.source, []).append(edge.target)
    promised: set[str] = set()
    for node in nodes.values():
        if node.language != "python" or not node.api.startswith("public"):
            continue
        parent = nodes.get(node.id.rsplit(".", 1)[0])
        if parent is None or parent.kind is not NodeKind.MODULE or node.kind is NodeKind.MODULE:
            continue  # members are promised through their module-level owner; a submodule by its names
        if policy.public is PublicMode.ALL and "__all__" not in node.api:
            continue
        if policy.public is PublicMode.INIT and not _binds_in_package_init(node.path, parent, policy):
            continue
        promised.add(_dotted(node.id))
        promised.update(_dotted(target) for target in aliases.get(node.id, ()))
    return frozenset(promised)


def _binds_in_package_init(path: str, module: Node, policy: Policy) -> bool:
    """The name is bound in the ``__init__`` of a top-level package (one of ``api.packages`` when given)."""
    package = _dotted(module.id)
    top = package in policy.packages if policy.packages else "." not in package
    return top and module.path.endswith("__init__.py") and path == module.path


def _dotted(node_id: str) -> str:
    return node_id.partition(":")[2]


def _under(symbol: str, roots: Iterable[str]) -> bool:
    return any(symbol == r or symbol.startswith(r + ".") for r in roots)


def apply_policy(findings: Iterable[Finding], policy: Policy, promised: frozenset[str] | None) -> list[Finding]:
    """Each finding with the status the policy gives it (kept: failing; a rule under ``warn``:
    warning; outside what the project promises, or a rule under ``ignore``: ignored, with why)."""
    return [_judge(f, policy, promised) for f in findings]


def _judge(finding: Finding, policy: Policy, promised: frozenset[str] | None) -> Finding:
    outside = _outside(finding, policy, promised)
    if outside:
        return dataclasses.replace(finding, status=Status.IGNORED, reason=outside)
    if listed := _listed(finding, policy.ignore):
        return dataclasses.replace(finding, status=Status.IGNORED, reason=f"ignore lists {listed}")
    if finding.family is Family.METRICS and policy.metric_removal is MetricRemoval.READ:
        return dataclasses.replace(finding, status=Status.WARNING,
                                   reason="metrics.removal = read: it fails through a threshold that reads it")
    if listed := _listed(finding, policy.warn):
        return dataclasses.replace(finding, status=Status.WARNING, reason=f"warn lists {listed}")
    return finding


def _listed(finding: Finding, entries: frozenset[str]) -> str:
    """The first (sorted) entry of ``ignore`` or ``warn`` naming the finding: ``RULE``, or
    ``RULE:GLOB`` for the rule on symbols the glob matches; "" when none does."""
    for entry in sorted(entries):
        rule, _, glob = entry.partition(":")
        if rule == finding.rule and (not glob or fnmatch.fnmatchcase(finding.symbol, glob)):
            return entry
    return ""


def _outside(finding: Finding, policy: Policy, promised: frozenset[str] | None) -> str:
    """Why the finding is outside what the project promises; "" when inside."""
    if finding.family is Family.API:
        return api_outside(finding.symbol, policy, promised)
    if finding.family is Family.STRUCTS and not policy.structs.keeps(finding.symbol):
        return "outside structs.include/exclude"
    if finding.family is Family.METRICS and not policy.metrics.keeps(finding.symbol):
        return "in metrics.exclude"
    if finding.family is Family.PROTO and not policy.proto.keeps(finding.symbol):
        return "outside proto.include/exclude"
    return ""


def api_outside(symbol: str, policy: Policy, promised: frozenset[str] | None) -> str:
    """Why the API symbol (a dotted path) is outside what the project promises; "" when inside."""
    if policy.packages and not _under(symbol, policy.packages):
        return "not in api.packages"
    if promised is not None and not _under(symbol, promised):
        return f"not exported (api.public = {policy.public.value})"
    if not policy.api.keeps(symbol):
        return "outside api.include/exclude"
    return ""
