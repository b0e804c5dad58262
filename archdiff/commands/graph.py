"""``archdiff graph``: the symbol graph of one evidence bundle, exported or asked.

``path``, ``callers``, ``callees``, ``reach`` and ``find`` answer from the evidence file's index
(:mod:`extractor.evidence.index`, built once per file and cached by its hash) through the same
functions as the Python API (:mod:`archdiff.api`); ``docs/graph-queries.md`` describes them and
their JSON. A node the graph does not have is one line on stderr with the nearest names, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from archdiff.outputs import writable_file
from extractor.evidence.query import DEFAULT_EDGES, EDGE_KINDS, NODE_KINDS


@click.group()
def graph() -> None:
    """Work with the symbol graph of an evidence bundle: export it, or ask it who calls what."""


@graph.command("export")
@click.argument("evidence", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["graphml", "gexf", "json"]), default="graphml", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              callback=writable_file)
def graph_export(evidence: Path, fmt: str, output: Path) -> None:
    """Write EVIDENCE's symbol graph as GraphML, GEXF or node-link JSON (readable by networkx and Gephi)."""
    from extractor.evidence.graph import export_graph
    from extractor.evidence.read import load_bundle

    bundle = load_bundle(evidence)
    export_graph(bundle, fmt, output)
    click.echo(f"{output}: {len(bundle['graph']['nodes'])} nodes, {len(bundle['graph']['edges'])} edges")


_EVIDENCE_HELP = "an evidence.json, a directory holding one, or a source spec (extracted through the cache)"


def _query_options(func):
    """The options every query takes: the edges it follows, the output format, the cache."""
    func = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Where the graph index is kept (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")(func)
    func = click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text",
                        show_default=True, help="json: docs/graph-queries.md; dot: for Graphviz.")(func)
    func = click.option("--edges", default=",".join(DEFAULT_EDGES), show_default=True, metavar="KIND[,KIND...]",
                        help=f"Edge kinds to follow, of: {', '.join(EDGE_KINDS)}.")(func)
    return func


def _print(answer, fmt: str) -> None:
    from archdiff.graphformat import render

    click.echo(render(answer, fmt), nl=False)


def _index(evidence: str, cache_dir: Path | None):
    from archdiff.api import open_index

    return open_index(evidence, cache_dir)


@graph.command("path")
@click.argument("evidence", metavar="EVIDENCE")
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@click.option("--max", "max_paths", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="At most this many shortest paths.")
@_query_options
def graph_path(evidence: str, source: str, target: str, max_paths: int, edges: str, fmt: str,
               cache_dir: Path | None) -> None:
    """The shortest paths from FROM to TO in EVIDENCE's graph, as qualname (path:line) -[edge]-> chains.

    EVIDENCE is an evidence.json, a directory holding one, or a source spec (extracted through the
    cache); FROM and TO are node ids, qualnames or unique suffixes."""
    from extractor.evidence.query import shortest_paths

    _print(shortest_paths(_index(evidence, cache_dir), source, target, edges, max_paths), fmt)


def _neighbours_command(name: str, backwards: bool):
    @graph.command(name, help=f"The {name} of NODE in EVIDENCE's graph, up to --depth steps away, each with "
                              f"the edge it is reached by. EVIDENCE is {_EVIDENCE_HELP}.")
    @click.argument("evidence", metavar="EVIDENCE")
    @click.argument("node", metavar="NODE")
    @click.option("--depth", type=click.IntRange(1, 1000), default=1, show_default=True,
                  help="Follow this many steps.")
    @click.option("--language", "languages", multiple=True, metavar="LANG",
                  help="Only nodes of this language (python, cpp, cuda, rust, go; repeatable).")
    @click.option("--kind", "kinds", multiple=True, type=click.Choice(NODE_KINDS), help="Only nodes of this kind (repeatable).")
    @_query_options
    def command(evidence: str, node: str, depth: int, languages: tuple[str, ...], kinds: tuple[str, ...], edges: str,
                fmt: str, cache_dir: Path | None) -> None:
        from extractor.evidence.query import walk

        _print(walk(_index(evidence, cache_dir), node, backwards=backwards, edges=edges, depth=depth, kinds=kinds,
                    languages=languages, query=name), fmt)

    return command


graph_callers = _neighbours_command("callers", backwards=True)
graph_callees = _neighbours_command("callees", backwards=False)


@graph.command("reach")
@click.argument("evidence", metavar="EVIDENCE")
@click.argument("source", metavar="FROM")
@click.option("--to-kind", required=True, type=click.Choice(NODE_KINDS), help="The kind of node wanted (kernel, struct, ...).")
@click.option("--language", "languages", multiple=True, metavar="LANG", help="Only nodes of this language (repeatable).")
@_query_options
def graph_reach(evidence: str, source: str, to_kind: str, languages: tuple[str, ...], edges: str, fmt: str,
                cache_dir: Path | None) -> None:
    """Every node of --to-kind reachable from FROM in EVIDENCE's graph, each with one shortest path."""
    from extractor.evidence.query import reach

    _print(reach(_index(evidence, cache_dir), source, to_kind, edges=edges, languages=languages), fmt)


@graph.command("find")
@click.argument("evidence", metavar="EVIDENCE")
@click.argument("pattern", metavar="PATTERN")
@click.option("--regex", is_flag=True, help="PATTERN is a regular expression searched in the qualname or id "
                                            "(default: a glob matched against either whole).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(NODE_KINDS), help="Only nodes of this kind (repeatable).")
@click.option("--language", "languages", multiple=True, metavar="LANG", help="Only nodes of this language (repeatable).")
@click.option("--layer", "layers", multiple=True, metavar="ROLE", help="Only nodes in files of this layer role (repeatable).")
@click.option("--api", type=click.Choice(["public", "private"]), default=None, help="Only public or private API.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text", show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the graph index is kept (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")
def graph_find(evidence: str, pattern: str, regex: bool, kinds: tuple[str, ...], languages: tuple[str, ...],
               layers: tuple[str, ...], api: str | None, fmt: str, cache_dir: Path | None) -> None:
    """Nodes of EVIDENCE's graph whose qualname or id matches PATTERN (a glob such as '*.LLM.generate')."""
    from extractor.evidence.query import find

    _print(find(_index(evidence, cache_dir), pattern, regex=regex, kinds=kinds, languages=languages, layers=layers,
                api=api or ""), fmt)
