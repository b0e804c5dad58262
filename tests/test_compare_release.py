"""The release diff on fixtures/pysample against a copy with known changes, extracted by the real
pipeline: the API section must find one change per breakage rule and nothing else, the symbol drift
exactly the removed function, the renamed class and the attributes that came and went."""

from __future__ import annotations

import pytest

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_from_json
from extractor.run.pipeline import extract_system
from tests.compare_support import API_CHANGES, REMOVED_FUNCTION, RENAMED_CLASS, ROOT, make_pysample_v2


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    options = ExtractOptions(jobs=1, cache_dir=tmp / "cache")
    old = extract_system([str(ROOT / "fixtures" / "pysample")], name="servekit", version="1", options=options)
    new = extract_system([str(make_pysample_v2(tmp))], name="servekit", version="2", options=options)
    return compare_evidence(evidence_from_json(old.bundle), evidence_from_json(new.bundle))


def test_release_mode_is_chosen_for_one_system(release):
    assert release["mode"] == "release"


def test_api_finds_one_change_per_rule_and_nothing_else(release):
    api = release["release"]["api"]
    assert {(r["symbol"], r["rule"], r["subject"], r["breaking"]) for r in api["changes"]} == API_CHANGES
    assert len(api["changes"]) == len(API_CHANGES)  # no row twice
    assert {r["rule"] for r in api["by_rule"]} == {rule for _, rule, _, _ in API_CHANGES}
    assert api["breaking"] == sum(1 for change in API_CHANGES if change[3])
    assert sum(r["changes"] for r in api["by_rule"]) == api["total"] == len(API_CHANGES)


def test_api_rows_say_where_and_why(release):
    rows = {(r["symbol"], r["rule"], r["subject"]): r for r in release["release"]["api"]["changes"]}
    moved = rows[("servekit.engine.scheduler.Scheduler.add", "parameter-moved", "priority")]
    assert (moved["old"], moved["new"]) == ("position 1", "position 2")
    assert moved["new_location"] == {"path": "src/servekit/engine/scheduler.py", "line": 16}
    # drain moved up ten lines when build() went: both locations are kept
    drain = rows[("servekit.engine.core.drain", "return-changed", "")]
    assert (drain["old"], drain["new"]) == ("int", "str")
    assert drain["old_location"]["line"] == 53 and drain["new_location"]["line"] == 43
    assert drain["uses"] == 1  # _poll calls it
    removed = rows[("servekit.engine.core.build", "object-removed", "")]
    assert removed["new_location"] is None and removed["old_location"]["line"] == 35
    private = rows[("servekit.engine.core._poll", "parameter-removed", "interval")]
    assert not private["breaking"] and private["why"] == "not public API (private: underscore name)"


def test_breaking_rows_come_first_most_used_first(release):
    rows = release["release"]["api"]["changes"]
    keys = [(not r["breaking"], -r["uses"]) for r in rows]
    assert keys == sorted(keys)
    assert rows[0]["uses"] == 4 and rows[-1]["symbol"] == "servekit.engine.core._poll"


def test_symbol_drift_lists_the_removed_function_and_the_renamed_class(release):
    symbols = release["release"]["symbols"]
    assert [r["id"] for r in symbols["removed"]] == [REMOVED_FUNCTION]
    # its nested make() (two definitions of one qualified name: one node) goes with it
    assert symbols["removed"][0]["members"] == 1
    assert symbols["removed"][0]["api"] == "public: module-level name"
    assert symbols["added"] == [] and symbols["moved"] == []
    assert [(r["from"]["id"], r["to"]["id"]) for r in symbols["renamed"]] == [RENAMED_CLASS]
    # nothing in the drift says "breaking": that is the API section's verdict alone
    assert not any("breaking" in r for key in ("added", "removed", "moved", "renamed") for r in symbols[key])


def test_attributes_fold_into_their_class(release):
    attributes = release["release"]["symbols"]["attributes"]
    assert [(a["id"], a["added"], a["removed"]) for a in attributes] == \
        [("py:servekit.engine.core.Engine", ["spare"], ["backup"])]
    assert release["release"]["symbols"]["added_by_kind"] == {"attribute": 1}


def test_differences_count_each_change_once(release):
    # every API row (changes of symbols the old release had) + what is new (the attribute spare)
    assert release["differences"] == {"any": len(API_CHANGES) + 1,
                                      "breaking": sum(1 for change in API_CHANGES if change[3])}


def test_takeaways_name_the_breaking_count_the_rules_and_the_most_used(release):
    texts = [t["text"] for t in release["takeaways"] if t["ref"] == "release-api"]
    assert texts[0].startswith("API: 15 breaking changes from servekit 1 to servekit 2 in 14 public symbols")
    assert "(of 16 changes to existing symbols)" in texts[0]
    assert texts[1].startswith("Most-used broken symbols: servekit.engine.base.BaseScheduler.__init__ (4 uses")


def test_the_api_section_renders_first_in_the_release_changes(release):
    md = render_markdown(release, KINDS)
    assert md.index("### API changes") < md.index("### Struct layouts") < md.index("### Symbol drift")
    assert "| servekit.engine.scheduler.Scheduler.add | positional parameter moved ×2 |" in md
    page = render_html(release, KINDS)
    assert page.index("<section id=release-api>") < page.index("<section id=release-symbols>")
