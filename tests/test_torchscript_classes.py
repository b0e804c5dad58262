"""TorchScript custom classes (FasterTransformer's `th_op`s, FBGEMM's, Torch-TensorRT's engines):
a C++ class registered with `torch::jit::class_<T>("ns", "Name")` (or the one-argument form of older
releases, or `m.class_<T>("Name")` in a `TORCH_LIBRARY(ns, m)` block) and its `.def("method", &T::m)`
chain, which Python makes as `torch.classes.ns.Name(...)` and calls through the instance. The mini-repo
is written here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "csrc/decoder.cc": """
        #include <torch/script.h>
        namespace ext {
        class Decoder : public torch::jit::CustomClassHolder {
        public:
            explicit Decoder(int64_t n) {}
            std::vector<int64_t> forward(int64_t x) { return {x}; }
            void reset() {}
        };
        }  // namespace ext

        // both spellings, as the branches of one group in the initializer; the chain is each one's
        static auto decoder =
        #ifdef LEGACY_THS
            torch::jit::class_<ext::Decoder>("LegacyDecoder")
        #else
            torch::jit::class_<ext::Decoder>("Ext", "Decoder")
        #endif
                .def(torch::jit::init<int64_t>())
                .def("forward", &ext::Decoder::forward)
                .def("reset", &ext::Decoder::reset);

        TORCH_LIBRARY(mylib, m) {
            m.class_<ext::Decoder>("Dec").def(torch::init<int64_t>()).def("forward", &ext::Decoder::forward);
        }
        """,
    "pkg/__init__.py": "",
    "pkg/model.py": """
        import torch


        class Model:
            def __init__(self):
                self.op = torch.classes.Ext.Decoder(4)

            def run(self, x):
                out = self.op.forward(x)
                self.op.reset()
                return out


        def legacy(x):
            d = torch.classes.LegacyDecoder(4)
            return d.forward(x)


        def library(x):
            d = torch.classes.mylib.Dec(2)
            d.reset()  # not registered in this library's chain
            return d.forward(x)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("torchscript_classes")
    return written_bundle(root / "src", FILES)


def test_a_torchscript_class_and_its_methods_bind_through_torch_classes(bundle):
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [
        ("py:pkg.model.Model.__init__", "cpp:ext::Decoder", 6),
        ("py:pkg.model.Model.run", "cpp:ext::Decoder::forward", 9),
        ("py:pkg.model.Model.run", "cpp:ext::Decoder::reset", 10),
        ("py:pkg.model.legacy", "cpp:ext::Decoder", 15),
        ("py:pkg.model.legacy", "cpp:ext::Decoder::forward", 16),
        ("py:pkg.model.library", "cpp:ext::Decoder", 20),
        ("py:pkg.model.library", "cpp:ext::Decoder::forward", 22),
    ]


def test_the_bound_class_says_how_python_names_it(bundle):
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    # the first of the names it is bound under
    assert nodes["cpp:ext::Decoder::reset"]["api"] == "public: torchscript torch.classes.LegacyDecoder.reset"
    assert bundle["stats"]["cpp"]["torchscript_bindings"] == 8  # three classes, five methods
