"""Adding an evidence kind is one Step plus one comparator kind: a kind declared only in
``tests/toy_kind.py`` flows from extraction through ``evidence.json``, the typed loader and the
comparison into all three report formats, with no list in the product naming it."""

from __future__ import annotations

import json

import pytest

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_json import render_json
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.errors import EvidenceFormatError
from extractor.evidence.read import load_evidence
from extractor.evidence.schema import RECORD_KINDS
from extractor.evidence.write import write_bundle
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from tests import toy_kind
from tests.toy_kind import TODOS, Todo, TodoFacts, TodosKind

RELEASES = {
    "1.0": {"pkg/__init__.py": "", "pkg/queue.py": "def push(q, x):\n    # TODO: bound the queue\n    q.append(x)\n",
            "pkg/server.py": "# TODO retry on 503\ndef serve():\n    pass\n"},
    "2.0": {"pkg/__init__.py": "", "pkg/queue.py": "def push(q, x):\n    q.append(x)\n",
            "pkg/server.py": "# TODO retry on 503\ndef serve():\n    pass\n    # TODO: drain on shutdown\n"},
}


@pytest.fixture(scope="module")
def evidence_files(tmp_path_factory):
    base = tmp_path_factory.mktemp("toy")
    files = {}
    for version, tree in RELEASES.items():
        root = base / f"src-{version}"
        for rel, text in tree.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        toy_kind.FACT_TYPES.clear()
        extraction = extract_system([str(root)], name="toy", version=version, steps=(*STEPS, toy_kind.STEP),
                                    options=ExtractOptions(jobs=2, cache_dir=base / "cache", probe_structs=False))
        assert set(toy_kind.FACT_TYPES) == {TodoFacts}  # the step read its facts as its scanner's Struct
        files[version] = write_bundle(None, base / f"out-{version}", extraction.data)
    return files


def test_the_new_kind_is_a_list_of_evidence_json(evidence_files):
    bundle = json.loads(evidence_files["1.0"].read_text())
    assert bundle["todos"] == [{"path": "pkg/queue.py", "line": 2, "text": "bound the queue"},
                               {"path": "pkg/server.py", "line": 1, "text": "retry on 503"}]
    assert bundle["stats"]["todos"] == {"todos": 2}


def test_the_typed_loader_reads_it_back_as_its_records(evidence_files):
    evidence = load_evidence(evidence_files["2.0"], kinds=(*RECORD_KINDS, TODOS))
    assert evidence.of(TODOS) == (Todo("pkg/server.py", 1, "retry on 503"), Todo("pkg/server.py", 4, "drain on shutdown"))
    # the shipped kinds alone do not know the list: evidence with an unknown key is refused, by name
    with pytest.raises(EvidenceFormatError, match="todos: unknown key"):
        load_evidence(evidence_files["2.0"])


def test_the_comparison_reports_it_in_every_format(evidence_files):
    kinds = (*KINDS, TodosKind())
    a, b = (load_evidence(evidence_files[v], kinds=(*RECORD_KINDS, TODOS)) for v in ("1.0", "2.0"))
    findings = compare_evidence(a, b, kinds=kinds)
    assert findings["mode"] == "release"
    report = json.loads(render_json(findings))
    assert report["todos"] == {"a": 2, "b": 2}
    assert report["release"]["todos"] == {"done": ["bound the queue"], "new": ["drain on shutdown"]}
    md = render_markdown(findings, kinds)
    assert "- done: bound the queue" in md and "- new: drain on shutdown" in md and "## TODO comments" in md
    assert "1 TODO done and 1 new in" in md  # its takeaway
    page = render_html(findings, kinds)
    assert "<h3>TODOs</h3>1 new" in page and 'href="#todos">TODO comments</a>' in page
