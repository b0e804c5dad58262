"""The Rust symbol graph of the PyO3 fixture: ids from Cargo.toml, items, impls, uses and calls."""

from __future__ import annotations

import pytest

from extractor.native.manifests import Crate
from extractor.model import Language, ParsedFile
from extractor.rust import module_path, scan_rust
from extractor.rust.parse import parse_source

from tests.native_support import edges, fixture_bundle, nodes

CRATE = "rs:fastok_py"


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("pyo3_ext")


@pytest.mark.parametrize(("path", "expected"), [
    ("src/lib.rs", ("fastok_py",)),
    ("src/models.rs", ("fastok_py", "models")),
    ("src/a/mod.rs", ("fastok_py", "a")),
    ("src/a/b.rs", ("fastok_py", "a", "b")),
    ("src/main.rs", ("fastok_py", "main")),  # a binary beside the library
    ("tests/it.rs", ("fastok_py", "tests", "it")),
])
def test_module_paths_follow_the_crate_layout(path, expected):
    crate = Crate("", "fastok_py", "_native", "src/lib.rs")
    assert module_path(path, crate, {"src/lib.rs", "src/main.rs", path}) == expected


def test_items_get_crate_paths_with_their_kinds(bundle):
    found = nodes(bundle)
    expected = {
        CRATE: "module",
        f"{CRATE}::tokenizer": "module",
        f"{CRATE}::tokenizer::PyTokenizer": "struct",
        f"{CRATE}::tokenizer::Encoder": "trait",
        f"{CRATE}::tokenizer::PyTokenizer::encode_py": "method",
        f"{CRATE}::tokenizer::PyTokenizer::encode": "method",  # from `impl Encoder for PyTokenizer`
        f"{CRATE}::tokenizer::Encoder::encode": "method",  # the trait's own declaration
        f"{CRATE}::tokenizer::lowercase": "function",
        f"{CRATE}::models::PyBPE::from_file": "method",
        f"{CRATE}::ffi::fast_hash": "function",
    }
    assert {k: found[k]["kind"] for k in expected if k in found} == expected
    # `mod tokenizer;` in lib.rs is a further site of the module whose file is tokenizer.rs
    assert found[f"{CRATE}::tokenizer"]["path"] == "src/tokenizer.rs"
    assert {"path": "src/lib.rs", "line": 7} in found[f"{CRATE}::tokenizer"]["sites"]


def test_functions_carry_positional_parameters_and_return_types(bundle):
    encode = nodes(bundle)[f"{CRATE}::tokenizer::PyTokenizer::encode_py"]
    assert encode["params"] == [
        {"name": "self", "kind": "positional-only", "annotation": "&self", "default": None},
        {"name": "text", "kind": "positional-only", "annotation": "&str", "default": None}]
    assert encode["returns"] == "Vec<u32>"
    foreign = nodes(bundle)[f"{CRATE}::ffi::fast_hash"]
    assert "foreign" in foreign["tags"] and foreign["returns"] == "u64"
    assert "extern-C" in nodes(bundle)[f"{CRATE}::ffi::fastok_version"]["tags"]


def test_trait_impls_uses_and_calls_resolve_inside_the_crate(bundle):
    assert (f"{CRATE}::tokenizer::PyTokenizer", f"{CRATE}::tokenizer::Encoder") in edges(bundle, "implements")
    imports = edges(bundle, "imports")
    assert (f"{CRATE}::tokenizer", f"{CRATE}::ffi") in imports  # use crate::ffi
    assert (f"{CRATE}::tokenizer", f"{CRATE}::metrics_defs") in imports  # use crate::metrics_defs::X
    assert (f"{CRATE}::tokenizer", "rs:pyo3") in imports  # an external crate
    calls = edges(bundle, "calls")
    method = f"{CRATE}::tokenizer::PyTokenizer"
    assert (f"{method}::encode_py", f"{method}::checksum") in calls  # self.checksum(..)
    assert (f"{method}::checksum", f"{CRATE}::ffi::hash") in calls  # ffi::hash through `use crate::ffi`
    assert (f"{CRATE}::normalize_text", f"{CRATE}::tokenizer::lowercase") in calls  # tokenizer::lowercase
    assert (f"{CRATE}::models::PyBPE::from_file", f"{CRATE}::models::PyBPE::new") in calls  # PyBPE::new
    stats = bundle["stats"]["rust"]
    assert stats["calls_resolved"] >= 6 and 0 < stats["calls_resolution_rate"] < 1


def test_scanner_facts_do_not_depend_on_the_path_and_survive_broken_code():
    data = b"pub struct Ok1;\nfn broken( {\nimpl X for { }\npub fn after() -> u8 { 1 }\n"
    facts = scan_rust(ParsedFile(Language.RUST, data, parse_source(data)))
    assert {d.qual for d in facts.defs} >= {"Ok1", "after"}
    assert facts.errors >= 1


# Hugging Face tokenizers: the core crate's library is `tokenizers`, and so is its Python bindings' crate's
# (`[lib] name = "tokenizers"`); the bindings' code names the core crate `tokenizers::`, and so do the core
# package's benches, which mean their own library
SAME_LIB_NAME = {
    "core/Cargo.toml": '[package]\nname = "toks"\nversion = "0.1.0"\n',
    "core/src/lib.rs": "pub mod models;\n",
    "core/src/models.rs": "pub struct Bpe;\nimpl Bpe {\n    pub fn from_file() -> Bpe { Bpe }\n}\n",
    "core/benches/bpe.rs": "use toks::models::Bpe;\n\nfn bench() {\n    Bpe::from_file();\n}\n",
    "core/tests/it.rs": "fn it() {\n    toks::models::Bpe::from_file();\n}\n",
    "py/Cargo.toml": '[package]\nname = "toks-py"\nversion = "0.1.0"\n\n[lib]\nname = "toks"\n',
    "py/src/lib.rs": "pub mod models;\n",
    "py/src/models.rs": "pub struct PyBpe;\n\npub fn py_bpe() {\n    toks::models::Bpe::from_file();\n}\n",
}


def test_a_packages_benches_and_tests_name_its_own_library_beside_a_crate_of_that_library_name(tmp_path):
    from tests.native_support import written_bundle

    calls = edges(written_bundle(tmp_path, SAME_LIB_NAME), "calls")
    assert calls == {
        ("rs:toks::benches::bpe::bench", "rs:toks::models::Bpe::from_file"),  # its own package's library
        ("rs:toks::tests::it::it", "rs:toks::models::Bpe::from_file"),
        ("rs:toks_py::models::py_bpe", "rs:toks::models::Bpe::from_file"),  # the other crate of that name
    }


def test_a_mod_declared_in_an_integration_test_root_is_the_file_beside_it(tmp_path):
    # the Rust book's shape (and Hugging Face tokenizers' benches): `mod common;` in tests/it.rs is tests/common/mod.rs
    from tests.native_support import written_bundle

    bundle = written_bundle(tmp_path, {
        "Cargo.toml": '[package]\nname = "mylib"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub fn lib_fn() {}\n",
        "tests/common/mod.rs": "pub fn helper() {}\n",
        "tests/it.rs": "mod common;\nuse common::helper;\n\nfn it() {\n    helper();\n    common::helper();\n}\n",
        "tests/other.rs": "mod common;\n\nfn other() {\n    common::helper();\n}\n",
    })
    assert edges(bundle, "calls") == {("rs:mylib::tests::it::it", "rs:mylib::tests::common::helper"),
                                      ("rs:mylib::tests::other::other", "rs:mylib::tests::common::helper")}
    assert ("rs:mylib::tests::it", "rs:mylib::tests::common") in edges(bundle, "imports")
    assert bundle["stats"]["rust"]["target_modules_beside"] == 2
