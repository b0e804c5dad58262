"""The Markdown report neutralises repository and evidence text for GitHub's renderer: no payload in
any field becomes a link, an image, a mention, an autolink, HTML, code or a broken table."""

from __future__ import annotations

import dataclasses
import re

import pytest
from markdown_it import MarkdownIt

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_markdown import render_markdown
from extractor.concepts.records import Concept, ConceptEvidence
from extractor.evidence.read import SourceRecord
from extractor.model import Edge, EdgeKind, Node, NodeKind
from tests.compare_support import evidence, layer, metric, struct, threshold

PAYLOADS = [
    "[click](https://evil.example/x)",
    "\\[click\\](https://evil.example/y)",  # escaping with backslashes must not help
    "\\\\[click\\\\](https://evil.example/z)",
    "![img](https://evil.example/i.png)",
    "<https://evil.example/a>",
    "see https://evil.example/bare and http://evil.example",
    "www.evil.example",
    "ping @octocat and @org/team",
    "mail me: user@evil.example",
    "<img src=x onerror=alert(1)>",
    "\n<script>alert(1)</script>\n",
    "a | b | c",
    "`code` *em* _em_ ~~del~~",
    "[ref]: https://evil.example/ref",
]
PAYLOAD = " ".join(PAYLOADS)


def _poisoned(name: str, version: str, with_metric: str) -> object:
    node = Node(f"py:pkg.{PAYLOAD}", NodeKind.FUNCTION, PAYLOAD, PAYLOAD, "python", f"pkg/{PAYLOAD}.py", 3,
                signature=f"({PAYLOAD})")
    target = Node("py:pkg.api", NodeKind.MODULE, "api", "pkg.api", "python", "pkg/api.py", 1)
    lay = dataclasses.replace(layer("ingress", [f"pkg/{PAYLOAD}.py", "pkg/api.py"]), title=PAYLOAD, summary=PAYLOAD)
    lay2 = dataclasses.replace(layer(PAYLOAD, ["pkg/other.py"]), title=PAYLOAD, summary=PAYLOAD)
    concept = Concept(PAYLOAD, PAYLOAD, 2, 1, (ConceptEvidence(f"pkg/{PAYLOAD}.py", 4, PAYLOAD, "names"),))
    layout = struct(PAYLOAD, 16, [(PAYLOAD, PAYLOAD, 0, 4), ("b", "long", 8, 8)], tags=[PAYLOAD, "pinned"],
                    path=f"src/{PAYLOAD}.h")
    ev = evidence(name, version, nodes=[node, target], edges=[Edge(node.id, target.id, EdgeKind.CALLS, node.path, 3)],
                  layers=[lay, lay2], structs=[layout],
                  metrics=[metric(with_metric, "counter", path=f"m/{PAYLOAD}.py", unit=PAYLOAD, via=PAYLOAD),
                           # its Ray twin, a library's series and a name left unresolved carry it too
                           metric(with_metric, "counter", path=f"m/{PAYLOAD}.py", library="ray", via=PAYLOAD,
                                  exposed=[f"ray_{with_metric}"]),
                           metric(f"lib_{PAYLOAD}", "gauge", origin=PAYLOAD, via=PAYLOAD),
                           metric(f"dyn_{PAYLOAD}", "gauge", dynamic=True, unresolved=PAYLOAD, via=PAYLOAD)],
                  thresholds=[dataclasses.replace(threshold([with_metric], name=PAYLOAD), expr=PAYLOAD),
                              dataclasses.replace(threshold(["up"], name=f"unlinked {PAYLOAD}"), unlinked=PAYLOAD)],
                  concepts=[concept])
    return dataclasses.replace(ev, sources=(SourceRecord(PAYLOAD, PAYLOAD, "dir", PAYLOAD, ""),))


@pytest.mark.parametrize("mode", ["systems", "release"])
def test_no_payload_comes_alive_in_the_markdown(mode):
    a = _poisoned(f"sys {PAYLOAD}", PAYLOAD, f"old_{PAYLOAD}")
    b = _poisoned(f"sys {PAYLOAD}" if mode == "release" else f"other {PAYLOAD}", "2", f"new_{PAYLOAD}")
    if mode == "release":  # the old release has a symbol the new one lost, with the payload in its name
        b = dataclasses.replace(b, graph=dataclasses.replace(b.graph, nodes=b.graph.nodes[1:], edges=()))
    findings = compare_evidence(a, b, mode)
    text = render_markdown(findings, KINDS)
    assert text.count("evil.example") >= 10  # the payloads are in the report, as text
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    kinds = set()
    for token in tokens:
        kinds.add(token.type)
        children = token.children or []
        kinds.update(child.type for child in children)
        for i, child in enumerate(children):
            if child.type in ("em_open", "strong_open"):  # the report's own: a takeaway's "(§ ref)", an aligned role
                assert child.markup in ("_", "**") and children[i + 1].type == "text", token.content
            if child.type == "html_inline":  # the report's own line breaks in a layer cell, nothing else
                assert child.content == "<br>", child.content
    assert not kinds & {"link_open", "image", "html_block", "code_inline", "s_open"}
    # GitHub's own extensions: bare URLs, www. names and @mentions
    assert not re.search(r"[a-z]://|www\.|@[\w/]", text)
    # every table row has as many cells as its header
    for table in re.findall(r"(?m)((?:^\|.*\|$\n)+)", text):
        rows = [re.split(r"(?<!\\)\|", row)[1:-1] for row in table.strip("\n").split("\n")]
        assert len({len(r) for r in rows}) == 1, table[:300]
    # no line of the report is a payload's own line
    assert "<script>" not in text and "\n<" not in text
