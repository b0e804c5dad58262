"""`binds` edges through PyO3, cgo and Rust's extern "C", on the two native fixtures."""

from __future__ import annotations

from tests.native_support import edges, fixture_bundle, written_bundle

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


def _binds_at(bundle: dict) -> set[tuple[str, int, str, str]]:
    return {(e["path"], e["line"], e["source"], e["target"]) for e in bundle["graph"]["edges"]
            if e["kind"] == "binds" and e["source"].startswith("py:")}


def test_methods_called_on_values_of_a_pyo3_class_bind_to_its_methods():
    """A local made by calling the class, an annotated parameter, an attribute of `self`: in a
    module below the system's own package (fastok._native) and in a top-level extension module with
    no Python package (minirunner, as mistral.rs's `mistralrs`)."""
    tok = f"{CRATE}::tokenizer::PyTokenizer"
    assert {b for b in _binds_at(fixture_bundle("pyo3_ext")) if b[0] == "python/fastok/session.py"} == {
        ("python/fastok/session.py", 7, "py:fastok.session.count", tok),
        ("python/fastok/session.py", 7, "py:fastok.session.count", f"{tok}::new"),
        ("python/fastok/session.py", 8, "py:fastok.session.count", f"{tok}::encode_py"),
        ("python/fastok/session.py", 12, "py:fastok.session.count_with", f"{tok}::encode_py"),
        ("python/fastok/session.py", 17, "py:fastok.session.Session.__init__", tok),
        ("python/fastok/session.py", 17, "py:fastok.session.Session.__init__", f"{tok}::new"),
        ("python/fastok/session.py", 20, "py:fastok.session.Session.feed", f"{tok}::encode_py"),
    }  # line 23 reads a getter: no call
    runner = "rs:minirunner_py::Runner"
    assert _binds_at(fixture_bundle("pyo3_runner")) == {
        ("examples/chat.py", 5, "py:chat.ask", runner),
        ("examples/chat.py", 5, "py:chat.ask", f"{runner}::new"),
        ("examples/chat.py", 6, "py:chat.ask", f"{runner}::send_chat"),
        ("examples/chat.py", 10, "py:chat.again", f"{runner}::reset_state"),  # pyo3(name = "reset")
        ("examples/chat.py", 15, "py:chat.Chat.__init__", runner),
        ("examples/chat.py", 15, "py:chat.Chat.__init__", f"{runner}::new"),
        ("examples/chat.py", 19, "py:chat.Chat.turn", f"{runner}::send_chat"),
        ("examples/chat.py", 32, "py:chat.Either.__init__", runner),
        ("examples/chat.py", 32, "py:chat.Either.__init__", f"{runner}::new"),
    }  # line 18, `self.runner.stats()`: no method of that name, and not the class's constructor;
    # line 35: `self.runner` holds a Runner or a Python EchoRunner, so its send_chat is not bound by a guess


def test_rust_ffi_binds_both_ways():
    binds = edges(fixture_bundle("pyo3_ext"), "binds")
    assert (f"{CRATE}::ffi::hash", "cpp:fast_hash") in binds  # Rust -> C definition
    assert ("cpp:print_version", f"{CRATE}::ffi::fastok_version") in binds  # C -> #[no_mangle] Rust
    bundle = fixture_bundle("pyo3_ext")
    assert bundle["stats"]["ffi"]["rust_ffi_calls_unbound"] == 1  # getpid, libc's
    assert [(d["path"], d["line"], d["code"]) for d in bundle["diagnostics"] if d["code"].endswith("-call-unbound")] \
        == [("src/ffi.rs", 21, "rust-ffi-call-unbound")]  # said where it is, not only counted


def test_cgo_calls_bind_to_the_cpp_definitions():
    bundle = fixture_bundle("cgo_mini")
    binds = edges(bundle, "binds")
    assert binds == {(f"{MOD}/llm.Load", "cpp:engine_load"), (f"{MOD}/llm.Model.Close", "cpp:engine_free")}
    stats = bundle["stats"]["ffi"]
    assert stats["cgo_calls_preamble"] == 1  # C.twice: defined in the preamble, no C/C++ file
    assert stats["cgo_calls_helper"] == 1  # C.CString
    assert stats["cgo_calls_unbound"] == 1  # C.free: libc
    # C.engine_handle(...) converts to a typedef of engine.h, C.enum_engine_mode(...) to its enum: no calls
    assert stats["cgo_conversions"] == 2
    unbound = [(d["path"], d["line"], d["code"]) for d in bundle["diagnostics"] if d["code"].startswith("cgo")]
    assert unbound == [("llm/llm.go", 23, "cgo-call-unbound")]  # said where it is, not only counted


def test_calls_of_cxx_bridge_functions_bind_to_the_cpp_functions_of_their_namespace():
    bundle = fixture_bundle("cxx_bridge")
    binds = {(e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("rs:cxxdemo::start", "cpp:demo::logging::init_logging", "src/lib.rs", 21),  # its own #[namespace]
        ("rs:cxxdemo::start", "cpp:demo::engine::make_engine", "src/lib.rs", 22),  # the bridge's namespace
        ("rs:cxxdemo::start", "cpp:demo::engine::queue_depth", "src/lib.rs", 23),  # #[cxx_name]
    }
    stats = bundle["stats"]["ffi"]
    # Engine::step (a method: self) is no free function
    assert (stats["cxx_functions_declared"], stats["cxx_calls_bound"]) == (3, 3)
    assert "rust_ffi_calls_unbound" not in stats  # no longer looked for among C's global names


# Go calling a Rust library through cgo (semantic-router's candle-binding): the preamble only declares
# the C names; a Rust `#[no_mangle] extern "C"` function exports each. A name two crates export is not
# chosen between.
GO_INTO_RUST = {
    "go.mod": "module example.com/router\n\ngo 1.22\n",
    "binding/Cargo.toml": '[package]\nname = "classify"\nversion = "0.1.0"\n\n[lib]\ncrate-type = ["cdylib"]\n',
    "binding/src/lib.rs": (
        "use std::os::raw::c_char;\n\n"
        "#[no_mangle]\npub extern \"C\" fn classify_text(text: *const c_char) -> i32 {\n    0\n}\n\n"
        "#[no_mangle]\npub extern \"C\" fn free_result(r: i32) {}\n"),
    "other/Cargo.toml": '[package]\nname = "other"\nversion = "0.1.0"\n',
    "other/src/lib.rs": "#[no_mangle]\npub extern \"C\" fn free_result(r: i32) {}\n",
    "binding/classify.go": (
        "package binding\n\n"
        "/*\n#cgo LDFLAGS: -L${SRCDIR}/target/release -lclassify\n"
        "extern int classify_text(const char* text);\nextern void free_result(int r);\n*/\n"
        "import \"C\"\n\n"
        "func Classify(text string) int {\n"
        "\tr := C.classify_text(C.CString(text))\n"
        "\tC.free_result(r)\n"
        "\treturn int(r)\n}\n"),
}


def test_cgo_calls_bind_to_the_one_rust_function_exporting_the_name(tmp_path):
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    for rel, text in GO_INTO_RUST.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, probe_structs=False)).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("go:example.com/router/binding.Classify", "rs:classify::classify_text", 11)}
    stats = bundle["stats"]["ffi"]
    assert (stats["cgo_calls_bound_rust"], stats["cgo_calls_ambiguous"]) == (1, 1)  # free_result: two crates
    assert [(d["path"], d["line"], d["code"]) for d in bundle["diagnostics"] if d["code"].startswith("cgo")] \
        == [("binding/classify.go", 12, "cgo-call-ambiguous")]  # said where it is


# A cgo preamble written as `//` lines and then a `/* */` block, no blank line between (ollama's
# ggml.go): cgo reads the whole comment group, so the functions defined in both are the preamble's.
CGO_PREAMBLE_GROUP = {
    "go.mod": "module example.com/grp\n\ngo 1.22\n",
    "native/engine.h": "int engine_run(int n);\n",
    "native/engine.c": '#include "engine.h"\nint engine_run(int n) { return n; }\n',
    "eng/eng.go": """\
        package eng

        // #include <stdlib.h>
        // #include "../native/engine.h"
        // static int first_step(int n) { return n + 1; }
        /*
        static int block_step(int n) {
            return n * 2;
        }
        */
        import "C"

        func Run(n int) int {
        \treturn int(C.engine_run(C.first_step(C.block_step(C.int(n)))))
        }
        """,
}


def test_a_cgo_preamble_is_the_whole_comment_group_before_the_import(tmp_path):
    bundle = written_bundle(tmp_path, CGO_PREAMBLE_GROUP)
    assert edges(bundle, "binds") == {("go:example.com/grp/eng.Run", "cpp:engine_run")}
    stats = bundle["stats"]["ffi"]
    assert (stats["cgo_calls_preamble"], stats["cgo_calls_bound"], stats["cgo_conversions"]) == (2, 1, 1)
    assert not [d for d in bundle["diagnostics"] if d["code"].startswith("cgo")]


def test_a_cgo_conversion_to_c99_bool_is_no_call(tmp_path):
    # `C._Bool(b)` converts to C99's boolean type (ollama's app_darwin.go): no function to bind, nothing to say
    bundle = written_bundle(tmp_path, {
        "go.mod": "module example.com/flag\n\ngo 1.22\n",
        "flag/flag.go": 'package flag\n\n// #include <stdbool.h>\nimport "C"\n\n'
                        "func On(b bool) C._Bool {\n\treturn C._Bool(b)\n}\n",
    })
    assert bundle["stats"]["ffi"]["cgo_conversions"] == 1
    assert not [d for d in bundle["diagnostics"] if d["code"].startswith("cgo")]


# PyO3's declarative modules (0.22+; Hugging Face tokenizers): a `#[pymodule] mod` whose exports are
# `#[pymodule_export] use`s of items defined elsewhere, a submodule among them
DECLARATIVE = {
    "Cargo.toml": '[package]\nname = "decl-py"\nversion = "0.1.0"\n\n[lib]\nname = "declpy"\n',
    "pyproject.toml": '[tool.maturin]\nmodule-name = "decl.declpy"\n',
    "src/lib.rs": """\
        use pyo3::prelude::*;
        mod models;
        mod tokenizer;

        #[pymodule]
        pub mod declpy {
            #[pymodule_export]
            pub use super::tokenizer::PyTokenizer;
            #[pymodule_export]
            pub use super::models::models;
        }
        """,
    "src/tokenizer.rs": """\
        use pyo3::prelude::*;

        #[pyclass(name = "Tokenizer")]
        pub struct PyTokenizer {}

        #[pymethods]
        impl PyTokenizer {
            #[new]
            fn new() -> Self { PyTokenizer {} }
        }
        """,
    "src/models.rs": """\
        use pyo3::prelude::*;

        #[pyclass(name = "BPE")]
        pub struct PyBPE {}

        #[pymethods]
        impl PyBPE {
            #[new]
            fn new() -> Self { PyBPE {} }
        }

        #[pymodule]
        pub mod models {
            #[pymodule_export]
            pub use super::PyBPE;
        }
        """,
    "python/decl/__init__.py": "from .declpy import Tokenizer, models\n",
    "python/decl/use.py": """\
        from decl import Tokenizer
        from decl.declpy.models import BPE


        def build():
            return Tokenizer(), BPE()
        """,
}


def test_a_declarative_pymodule_exports_what_its_uses_name(tmp_path):
    bundle = written_bundle(tmp_path, DECLARATIVE)
    assert edges(bundle, "binds") == {
        ("py:decl.use.build", "rs:decl_py::tokenizer::PyTokenizer"),
        ("py:decl.use.build", "rs:decl_py::tokenizer::PyTokenizer::new"),
        ("py:decl.use.build", "rs:decl_py::models::PyBPE"),  # decl.declpy.models: the exported submodule
        ("py:decl.use.build", "rs:decl_py::models::PyBPE::new"),
    }
    stats = bundle["stats"]["ffi"]
    assert (stats["pyo3_modules"], stats["pyo3_module_inferred"]) == (2, 0)


def test_a_crate_exporting_to_node_with_napi_says_its_exports_bind_nothing(tmp_path):
    # Hugging Face tokenizers' bindings/node: JavaScript is not read, so the exports are said, not bound
    bundle = written_bundle(tmp_path, {
        "Cargo.toml": '[package]\nname = "tok-node"\nversion = "0.1.0"\n',
        "src/lib.rs": """\
            use napi_derive::napi;

            #[napi(js_name = "Tokenizer")]
            pub struct JsTokenizer {}

            #[napi]
            impl JsTokenizer {
                #[napi(constructor)]
                pub fn new() -> Self { JsTokenizer {} }
                pub fn helper(&self) {}
            }

            #[napi]
            pub fn version() -> String { String::new() }
            """,
    })
    notes = [(d["path"], d["line"], d["message"]) for d in bundle["diagnostics"] if d["code"] == "napi-exports-unbound"]
    assert notes == [("src/lib.rs", 4, "crate tok_node exports 3 item(s) to Node.js with napi-rs (#[napi]: "
                      "1 function(s), 1 type(s), 1 method(s)); archdiff does not read JavaScript or TypeScript, so "
                      "no call binds to them")]
    assert bundle["stats"]["ffi"]["napi_exports"] == 3
