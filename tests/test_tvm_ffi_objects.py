"""TVM FFI object types and the API modules a build generates: a class declares its type key
(`TVM_FFI_DECLARE_OBJECT_INFO_FINAL("mini.binding.Grammar", GrammarObj, ffi::Object)`) and its
registry chains static methods (`refl::ObjectDef<GrammarObj>().def_static("from_text", fn)`); Python
reaches them, and the globals under the same prefix, through `<package>/_ffi_api.py`, which tvm-ffi's
stub generator writes at build time and the tree does not hold, often re-exported by another module
(`from .base import _core`). xgrammar's shape, written small here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "cpp/bindings.cc": """
        #include <tvm/ffi/tvm_ffi.h>
        namespace ffi = tvm::ffi;
        namespace refl = tvm::ffi::reflection;

        namespace mini {
        class Grammar {};
        Grammar ParseText(const std::string& text) { return Grammar(); }
        int Version() { return 3; }
        int Depth() { return 1; }

        class GrammarObj : public ffi::Object {
         public:
          Grammar value;
          static constexpr bool _type_mutable = false;
          TVM_FFI_DECLARE_OBJECT_INFO_FINAL("mini.binding.Grammar", GrammarObj, ffi::Object);
        };

        class MatcherObj : public ffi::Object {
         public:
          TVM_FFI_DECLARE_OBJECT_INFO_FINAL(
              "mini.binding.Matcher", MatcherObj, ffi::Object
          );
        };

        TVM_FFI_STATIC_INIT_BLOCK() {
          refl::ObjectDef<GrammarObj>()
              .def("to_string", [](const GrammarObj* o) { return ffi::String(""); })
              .def_static(
                  "from_text",
                  [](ffi::String text) { return ParseText(text); }
              );
          refl::ObjectDef<MatcherObj>().def(refl::init<int64_t>());
          refl::GlobalDef()
              .def("mini.binding.version", Version)
              .def("mini.binding.config.depth", Depth)
              .def("mini.binding.testing.functor.fold", Depth);
        }
        }  // namespace mini
        """,
    "python/mini/__init__.py": "",
    # the generated `mini/binding/_ffi_api.py` and `mini/binding/config/_ffi_api.py` are not in the tree
    "python/mini/base.py": """
        from .binding import _ffi_api as _core
        from .binding.config import _ffi_api as _config
        """,
    "python/mini/grammar.py": """
        from .base import _core, _config


        class Grammar:
            @staticmethod
            def from_text(text):
                return _core.Grammar.from_text(text)

            def match(self):
                return _core.Matcher(_core.version())

            def depth(self):
                return _config.depth() + _core.Grammar.unknown()

            def fold(self):
                # a sub-prefix's API module set as an attribute (`_core.testing = _testing_ffi`), two levels down
                return _core.testing.functor.fold()
        """,
    # an `_ffi_api` the system holds is read as before, not as a generated one
    "python/mini/held/__init__.py": "",
    "python/mini/held/_ffi_api.py": "def version():\n    return 0\n",
    "python/mini/held/use.py": "from . import _ffi_api\n\n\ndef f():\n    return _ffi_api.version()\n",
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("tvm_ffi_objects")
    return written_bundle(root / "src", FILES)


def test_types_their_statics_and_globals_bind_through_a_generated_api_module(bundle):
    binds = sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                   if e["kind"] == "binds")
    assert binds == [
        ("py:mini.grammar.Grammar.depth", "cpp:mini::Depth", "python/mini/grammar.py", 13),
        ("py:mini.grammar.Grammar.fold", "cpp:mini::Depth", "python/mini/grammar.py", 17),
        # the type key names the class: Python makes one by its constructor
        ("py:mini.grammar.Grammar.from_text", "cpp:mini::ParseText", "python/mini/grammar.py", 7),
        ("py:mini.grammar.Grammar.match", "cpp:mini::MatcherObj", "python/mini/grammar.py", 10),
        ("py:mini.grammar.Grammar.match", "cpp:mini::Version", "python/mini/grammar.py", 10),
    ]
    stats = bundle["stats"]["bindings"]
    assert stats["tvm_ffi_api_modules_generated"] == 2


def test_a_type_key_declaration_in_a_class_body_leaves_the_class_and_its_namespace_whole(bundle):
    # its string argument read as a member's declarator broke the class, and the namespace closed early:
    # the init block's names were looked up at file scope
    said = [d for d in bundle["diagnostics"] if d["path"] == "cpp/bindings.cc" and d["code"] == "parse-errors"]
    assert said == []
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert nodes["cpp:mini::MatcherObj"]["kind"] == "class"
