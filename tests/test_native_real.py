"""Rust on real input: the tokenizers sdist from the package index ships its Rust core and its
PyO3 bindings crate; the bindings are found, placed in their Python modules and bound to the
package's own Python calls, and the definitions agree with universal-ctags."""

from __future__ import annotations

import pytest

from extractor.context import ExtractOptions

from tests.conftest import cache_root, extract_real, sdist_root

pytestmark = pytest.mark.real
VERSION = "0.22.0"


@pytest.fixture(scope="module")
def tokenizers_bundle():
    root = sdist_root("tokenizers", VERSION)
    bundle = extract_real(root, options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff",
                                                                probe_structs=False)).bundle
    return root, bundle


def test_pyo3_bindings_of_tokenizers_are_found_and_counted(tokenizers_bundle):
    _root, bundle = tokenizers_bundle
    ffi = bundle["stats"]["ffi"]
    # the `tokenizers` pymodule and its submodules (models, normalizers, pre_tokenizers, ...)
    assert ffi["pyo3_modules"] >= 7
    assert ffi["pyo3_exports"] >= 250
    assert ffi["pyo3_calls_bound"] >= 10
    binds = [e for e in bundle["graph"]["edges"] if e["kind"] == "binds"]
    assert any(e["target"] == "rs:tokenizers_python::models::PyBPE" for e in binds)
    # two crates share the library name `tokenizers`; the bindings crate is named by its package
    crates = {n["id"] for n in bundle["graph"]["nodes"] if n["kind"] == "module" and n["language"] == "rust"
              and "::" not in n["id"]}
    assert crates == {"rs:tokenizers", "rs:tokenizers_python"}


@pytest.mark.compilers
def test_rust_definitions_agree_with_ctags(tokenizers_bundle):
    from bench.native_vs_ctags import recall_from_bundle

    root, bundle = tokenizers_bundle
    result = recall_from_bundle(bundle, [("", root)], "rust")
    assert result["ctags_definitions"] > 1500
    assert result["recall"] >= 0.98, result["missing"][:20]
    # members are nodes too: named fields and enum variants, each kind on its own
    for kind in ("field", "enumerator"):
        found, total = result["per_kind"][kind]
        assert total > 300 and found >= 0.98 * total, [m for m in result["missing"] if m[3] == kind][:20]
