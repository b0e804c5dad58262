"""Files that cannot be parsed become diagnostics; the run goes on and keeps everything else."""

from __future__ import annotations

import os

import pytest

from extractor.acquire import inventory
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.helpers import nodes_by_id


@pytest.fixture()
def messy_tree(tmp_path):
    root = tmp_path / "proj"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text("def fine():\n    return 1\n")
    (pkg / "broken.py").write_text("def oops(:\n    pass\n")
    (pkg / "py2.py").write_text('print "hello"\n')
    (pkg / "latin.py").write_bytes(b"def f():\n    return '\xff\xfe'\n")
    (pkg / "nul.py").write_bytes(b"x = 1\x00\n")
    (pkg / "huge.py").write_text("# filler\n" * 40)
    outside = tmp_path / "outside.py"
    outside.write_text("def secret():\n    pass\n")
    os.symlink(outside, pkg / "escape.py")
    os.symlink(pkg / "good.py", pkg / "alias.py")
    return root


def test_unparseable_files_are_diagnostics_and_the_rest_is_extracted(messy_tree, tmp_path, monkeypatch):
    monkeypatch.setattr(inventory, "DEFAULT_MAX_FILE_BYTES", 200)
    bundle = extract_system([str(messy_tree)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    by_path = {}
    for d in bundle["diagnostics"]:
        by_path.setdefault(d["path"], set()).add(d["code"])
    assert by_path["pkg/broken.py"] == {"syntax-error"}
    assert by_path["pkg/py2.py"] == {"syntax-error"}
    assert by_path["pkg/latin.py"] == {"syntax-error"}
    assert by_path["pkg/nul.py"] == {"syntax-error"}
    assert by_path["pkg/huge.py"] == {"too-large"}
    assert by_path["pkg/escape.py"] == {"symlink-outside"}
    assert by_path["pkg/alias.py"] == {"symlink-inside"}
    broken = next(d for d in bundle["diagnostics"] if d["path"] == "pkg/broken.py")
    assert broken["line"] == 1 and "1:" in broken["message"]  # line:col of the offending token
    nodes = nodes_by_id(bundle)
    assert "py:pkg.good.fine" in nodes
    assert not any("secret" in nid for nid in nodes)  # the link out of the tree was not followed


def test_newer_syntax_falls_back_to_libcst(tmp_path):
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    # PEP 701 f-string (Python 3.12): the 3.11 ast rejects it, libcst reads it.
    (pkg / "new.py").write_text('class Report:\n    def row(self, xs):\n        return f"{"\\n".join(xs)}"\n')
    bundle = extract_system([str(tmp_path / "proj")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    nodes = nodes_by_id(bundle)
    import sys

    if sys.version_info < (3, 12):
        assert {d["code"] for d in bundle["diagnostics"] if d["path"] == "pkg/new.py"} == {"newer-syntax",
                                                                                           "calls-skipped"}
    assert nodes["py:pkg.new.Report.row"]["kind"] == "method"
    assert nodes["py:pkg.new.Report.row"]["line"] == 2
