"""`binds` edges through PyO3, cgo and Rust's extern "C", on the two native fixtures."""

from __future__ import annotations

from tests.native_support import edges, fixture_bundle

CRATE = "rs:fastok_py"
MOD = "go:example.com/cgomini"


def test_python_calls_bind_to_pyo3_classes_constructors_and_functions():
    bundle = fixture_bundle("pyo3_ext")
    binds = edges(bundle, "binds")
    assert {
        ("py:fastok.pipeline.build", f"{CRATE}::models::PyBPE"),  # BPE from the `models` submodule
        ("py:fastok.pipeline.build", f"{CRATE}::models::PyBPE::new"),  # what calling it runs (#[new])
        ("py:fastok.pipeline.build", f"{CRATE}::tokenizer::PyTokenizer"),  # pyclass(name = "Tokenizer")
        ("py:fastok.pipeline.clean", f"{CRATE}::normalize_text"),  # pyo3(name = "normalize")
    } <= binds
    stats = bundle["stats"]["ffi"]
    assert stats["pyo3_modules"] == 2  # fastok._native and fastok._native.models
    # Tokenizer, Tokenizer(), encode; BPE, BPE(), from_file; normalize (the getter is not a call)
    assert stats["pyo3_exports"] == 7
    assert stats["pyo3_module_inferred"] == 0


def test_rust_ffi_binds_both_ways():
    binds = edges(fixture_bundle("pyo3_ext"), "binds")
    assert (f"{CRATE}::ffi::hash", "cpp:fast_hash") in binds  # Rust -> C definition
    assert ("cpp:print_version", f"{CRATE}::ffi::fastok_version") in binds  # C -> #[no_mangle] Rust


def test_cgo_calls_bind_to_the_cpp_definitions():
    bundle = fixture_bundle("cgo_mini")
    binds = edges(bundle, "binds")
    assert binds == {(f"{MOD}/llm.Load", "cpp:engine_load"), (f"{MOD}/llm.Model.Close", "cpp:engine_free")}
    stats = bundle["stats"]["ffi"]
    assert stats["cgo_calls_preamble"] == 1  # C.twice: defined in the preamble, no C/C++ file
    assert stats["cgo_calls_helper"] == 1  # C.CString
    assert stats["cgo_calls_unbound"] == 1  # C.free: libc
