"""The README quotes figures from real runs (the vLLM 0.10.1 -> 0.10.2 API report, the agreement with
griffe, files parsed per release, the layer labels); they are docs/figures.json's, which
``python3 -m bench.readme_vs_runs --write`` computes from real input. These tests hold the README to
that file, without the network; the ``real`` tests (test_compare_real, test_api_vs_griffe) hold the
file to what the code gives now."""

from __future__ import annotations

import copy
import json

from bench.readme_vs_runs import (FIGURES, README, README_FIGURES, label_figures, locate, readme_differences,
                                  write_readme)


def _figures() -> dict:
    return json.loads(FIGURES.read_text(encoding="utf-8"))


def test_the_readme_says_what_docs_figures_json_holds():
    assert readme_differences(README.read_text(encoding="utf-8"), _figures()) == []


def test_the_readme_is_what_the_script_writes():
    # --write on the README as it is changes nothing: no figure is quoted by hand beside the generated ones
    readme = README.read_text(encoding="utf-8")
    assert write_readme(readme, _figures()) == readme


def test_a_figure_changed_in_the_readme_or_in_the_file_is_found():
    readme, figures = README.read_text(encoding="utf-8"), _figures()
    # a number in the generated excerpt
    headline = figures["api"]["excerpt"][0]
    wrong = headline.replace(f"{figures['api']['breaking']:,} breaking", f"{figures['api']['breaking'] + 1:,} breaking")
    assert wrong != headline
    assert readme_differences(readme.replace(headline, wrong), figures) == [
        "the API excerpt is not docs/figures.json's api.excerpt"]
    # a number in a sentence: each figure of each pattern, one at a time
    for _pattern, keys in README_FIGURES:
        for key in keys.values():
            changed = copy.deepcopy(figures)
            parent, name = locate(changed, key)
            parent[name] += 1
            problems = readme_differences(readme, changed)
            assert len(problems) == 1 and problems[0].startswith("README says"), (key, problems)


def test_the_label_figures_are_the_label_files():
    assert label_figures() == _figures()["labels"]
