"""Bounded YAML for files archdiff does not control: the analysed repository's rules, dashboards
and charts, and files users hand to archdiff.

``yaml.safe_load`` never runs code, but it does not bound size. A "billion laughs" document
(nine levels of anchors, each alias list repeating the one before ten times) composes to a few
hundred nodes and *expands* to 10**9 when turned into objects or walked: gigabytes of memory for
a few hundred bytes of input. A self-referencing alias (``&a [*a]``) makes a cycle that a naive
walk never leaves, and deep nesting (``[[[[...``) exhausts Python's recursion.

So every document is first *composed* (the node graph, where an alias is a second reference to
one node: cheap) while aliases are counted, then its expanded size is computed over that graph
with one memo per node (linear in the composed size, cycles detected), and only a document within
the limits is built into objects. A document over a limit raises :class:`YamlLimitError`, a
``yaml.MarkedYAMLError``, so callers that already handle bad YAML report it the same way, with
the line of the document.

Objects come out as plain ``dict``/``list``/scalars, or with ``lines=True`` as :class:`LineDict`
and :class:`LineList`, which remember the 1-based line they start on (for evidence records).
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import yaml

__all__ = ["DEFAULT_LIMITS", "USER_LIMITS", "LineDict", "LineList", "Limits", "YamlLimitError", "compose_all",
           "load_all", "safe_load"]


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    # Real charts and rule files use a handful of anchors; the billion-laughs document needs
    # about ninety to reach 10**9.
    max_aliases: int = 1_000
    # Nodes after alias expansion, per document. A 4 MiB Grafana dashboard (the inventory's
    # cap for YAML) is about 200,000 nodes; a billion-laughs document is 10**9.
    max_nodes: int = 1_000_000
    max_depth: int = 128


# A data file a user hands to archdiff (a taxonomy, detectors, a preset, a system file) is small:
# the largest shipped one, roles.yaml, is 1,571 nodes. A tighter node limit keeps the pure-Python
# composer's time to seconds even for a file at the size cap made of nothing but list items.
USER_LIMITS = Limits(max_nodes=50_000)


DEFAULT_LIMITS = Limits()


class YamlLimitError(yaml.MarkedYAMLError):
    """A document over one of the :class:`Limits`; ``problem_mark`` is where it starts."""


class LineDict(dict):
    """A mapping that remembers the 1-based line it starts on."""

    line = 0


class LineList(list):
    line = 0


class _Counting(yaml.composer.Composer):
    """PyYAML's Python composer (libyaml's cannot be hooked), counting aliases, nodes and nesting
    depth while composing: a document with more nodes than the limit even before any alias is
    expanded is refused as soon as the composer reaches it, not after. A loader puts it before its
    source of events (PyYAML's parser or libyaml's)."""

    _limits: Limits
    _aliases = 0
    _depth = 0
    _nodes = 0

    def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's own signature
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > self._limits.max_aliases:
                raise YamlLimitError(problem=f"more than {self._limits.max_aliases} aliases",
                                     problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        self._nodes += 1
        if self._nodes > self._limits.max_nodes:
            raise YamlLimitError(problem=f"more than {self._limits.max_nodes} nodes",
                                 problem_mark=self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > self._limits.max_depth:
                raise YamlLimitError(problem=f"nested deeper than {self._limits.max_depth} levels",
                                     problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        # The base class forgets anchors per document; aliases and nodes are counted per document too.
        self._aliases = 0
        self._nodes = 0
        return super().compose_document()


class _CountingLoader(_Counting, yaml.SafeLoader):
    """The pure-Python SafeLoader, counting: its scanner's messages are the ones archdiff reports."""

    def __init__(self, stream: str, limits: Limits):
        super().__init__(stream)
        self._limits = limits


try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # PyYAML built without libyaml
    _CParser = None

if _CParser is not None:
    class _CountingCLoader(_Counting, _CParser, yaml.resolver.Resolver):
        """libyaml's scanner and parser (the events: 4x faster than PyYAML's Python ones, a 3.5 MB
        Kubernetes manifest in 2 s instead of 5-8), composed by the Python composer that counts.
        The node graph is the pure loader's (tags, values, styles but for a plain scalar's ``''``
        where PyYAML has None, start lines and columns) except where an empty scalar starts
        (libyaml: the next line; PyYAML: after its key) and where a block collection ends, which
        nothing here reads: equal on the 5,057 documents of 2,279 YAML files of real systems."""

        def __init__(self, stream: str, limits: Limits):
            _CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._limits = limits


def _expanded_size(root: yaml.Node, limits: Limits) -> int:
    """Nodes the document has once every alias is expanded; raises on a cycle or over the limit."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk: deep documents must not exhaust Python's own recursion.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > limits.max_nodes:
                raise YamlLimitError(problem=f"expands to more than {limits.max_nodes} nodes (aliases "
                                             "repeating aliases)", problem_mark=root.start_mark)
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlLimitError(problem="an alias refers to a node that contains it (a cycle)",
                                 problem_mark=node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise YamlLimitError(problem="an alias refers to a node that contains it (a cycle)",
                                     problem_mark=child.start_mark)
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def compose_all(text: str, limits: Limits = DEFAULT_LIMITS) -> list[yaml.Node]:
    """The node graph of every document of ``text``, each checked against ``limits``.

    Composed from libyaml's events when PyYAML has it. Where libyaml refuses the text (or cannot
    take it: a lone surrogate does not encode), the pure-Python loader reads it again, so that a
    problem is reported in PyYAML's own words and anything it reads is read."""
    if _CParser is not None:
        try:
            return _compose(_CountingCLoader(text, limits), limits)
        except YamlLimitError:
            raise  # the same composer counted the same events
        except Exception:  # noqa: BLE001 - libyaml's refusal, whatever its type, is not the verdict
            pass
    return _compose(_CountingLoader(text, limits), limits)


def _compose(loader: _Counting, limits: Limits) -> list[yaml.Node]:
    nodes: list[yaml.Node] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                _expanded_size(node, limits)
                nodes.append(node)
    except RecursionError as err:  # PyYAML's composer recurses per level: a last guard
        raise YamlLimitError(problem="nested too deeply to read") from err
    finally:
        loader.dispose()
    return nodes


_SCALARS = yaml.constructor.SafeConstructor()
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _scalar(node: yaml.Node) -> Any:
    value = _SCALARS.construct_object(node, deep=True)
    # Timestamps and binary become text: callers store facts as JSON.
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def build(node: yaml.Node, lines: bool = False, strict_tags: bool = False) -> Any:
    """Objects for a composed (and checked) node; aliases share one object, as in PyYAML.

    A scalar with a tag SafeLoader does not know is an error either way. A collection's tag is
    ignored unless ``strict_tags`` (a repository's CloudFormation ``!GetAtt [a, b]`` still reads;
    archdiff's own data files have no use for one, and ``!!python/object/apply`` there is refused
    as PyYAML would)."""
    memo: dict[int, Any] = {}

    def make(current: yaml.Node, depth: int) -> Any:
        key = id(current)
        if key in memo:
            return memo[key]
        if strict_tags and isinstance(current, yaml.CollectionNode) and current.tag not in _PLAIN_COLLECTIONS:
            raise yaml.constructor.ConstructorError(None, None, f"could not determine a constructor for the tag "
                                                    f"{current.tag!r}", current.start_mark)
        if isinstance(current, yaml.MappingNode):
            out: dict = LineDict() if lines else {}
            if isinstance(out, LineDict):
                out.line = current.start_mark.line + 1
            memo[key] = out
            for key_node, value_node in current.value:
                if key_node.tag == _MERGE_TAG:
                    sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                    for source in sources:
                        merged = make(source, depth + 1)
                        if isinstance(merged, dict):
                            for k, v in merged.items():
                                out.setdefault(k, v)
                    continue
                k = make(key_node, depth + 1)
                out[k if isinstance(k, (str, int, float, bool)) or k is None else str(k)] = make(value_node, depth + 1)
            return out
        if isinstance(current, yaml.SequenceNode):
            seq: list = LineList() if lines else []
            if isinstance(seq, LineList):
                seq.line = current.start_mark.line + 1
            memo[key] = seq
            seq.extend(make(child, depth + 1) for child in current.value)
            return seq
        value = _scalar(current)
        memo[key] = value
        return value

    return make(node, 0)


def load_all(text: str, limits: Limits = DEFAULT_LIMITS, *, lines: bool = False,
             strict_tags: bool = False) -> list[Any]:
    """Every document of ``text`` as objects; :class:`YamlLimitError` (a ``yaml.YAMLError``) when
    a document is over ``limits``, ``yaml.YAMLError`` when it does not parse."""
    return [build(node, lines, strict_tags) for node in compose_all(text, limits)]


def safe_load(text: str, limits: Limits = DEFAULT_LIMITS, *, strict_tags: bool = False) -> Any:
    """The single document of ``text`` (None when empty), like ``yaml.safe_load`` but bounded."""
    docs = load_all(text, limits, strict_tags=strict_tags)
    if len(docs) > 1:
        raise yaml.composer.ComposerError(problem="expected a single document, found several")
    return docs[0] if docs else None
