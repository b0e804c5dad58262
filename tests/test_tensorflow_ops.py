"""TensorFlow custom ops (FasterTransformer's `tf_op`s): the kernel class a C++ library registers for
an op (`REGISTER_KERNEL_BUILDER(Name("T5Decoding")..., T5DecodingOp<GPUDevice, T>)`, in a macro's body
used once per type) runs a call of the op's snake-case name on the module `tf.load_op_library(path)`
returns (`module.t5_decoding(...)`). The mini-repo is written here."""

from __future__ import annotations

import pytest

from extractor.cpp.tfops import python_name
from tests.native_support import written_bundle

FILES = {
    "tf_op/decoding.cc": """
        #include "tensorflow/core/framework/op.h"
        namespace tf = tensorflow;
        using GPUDevice = Eigen::GpuDevice;

        REGISTER_OP("T5Decoding").Input("memory: T").Output("ids: int32").Attr("T: {float, half}");
        REGISTER_OP("GatherTree").Input("ids: int32").Output("out: int32");

        namespace ops {
        template<typename Device, typename T>
        class T5DecodingOp : public tf::OpKernel {
        public:
            explicit T5DecodingOp(tf::OpKernelConstruction* context) : tf::OpKernel(context) {}
            void Compute(tf::OpKernelContext* context) override { decode(context); }
        };

        #define REGISTER_GPU(T)                                                                            \\
            REGISTER_KERNEL_BUILDER(Name("T5Decoding").Device(tf::DEVICE_GPU).TypeConstraint<T>("T"),      \\
                                    T5DecodingOp<GPUDevice, T>)
        REGISTER_GPU(float);
        REGISTER_GPU(Eigen::half);
        #undef REGISTER_GPU
        }  // namespace ops
        """,
    "pkg/__init__.py": "",
    "pkg/model.py": """
        import tensorflow as tf

        ops = tf.load_op_library("./lib/libtf_t5.so")


        class Decoder:
            def __init__(self, path):
                self.module = tf.load_op_library(path)

            def run(self, memory):
                ids = self.module.t5_decoding(memory)
                return self.module.gather_tree(ids)


        def decode(memory):
            return ops.t5_decoding(memory)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("tensorflow_ops")
    return written_bundle(root / "src", FILES)


def test_a_call_of_an_op_on_a_loaded_op_library_binds_to_its_kernels_compute(bundle):
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    # gather_tree: an op declared with no kernel registered binds nowhere
    assert binds == [
        ("py:pkg.model.Decoder.run", "cpp:ops::T5DecodingOp::Compute", 11),
        ("py:pkg.model.decode", "cpp:ops::T5DecodingOp::Compute", 16),
    ]
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert nodes["cpp:ops::T5DecodingOp::Compute"]["api"] == "public: tensorflow-op t5_decoding"


@pytest.mark.parametrize(("op", "python"), [("T5Decoding", "t5_decoding"), ("BertInt8", "bert_int8"),
                                            ("GPUOp", "gpu_op"), ("Deberta", "deberta"), ("My_Op", "my_op")])
def test_an_op_is_named_in_python_as_tensorflow_names_it(op, python):
    assert python_name(op) == python


# TensorFlow Serving's shape: the op's Python function is in the wrapper module Bazel generates
# (`tf_gen_op_wrapper_py`: `gen_remote_predict_op.py`, not in the tree), the kernel an AsyncOpKernel
# (`ComputeAsync`); a Bazel tree, with an `__init__.py` only where the op's package starts
GENERATED = {
    "serving/ops/remote_predict/__init__.py": "",
    "serving/ops/remote_predict/ops/remote_predict_op.cc": """
        #include "tensorflow/core/framework/op.h"
        namespace tensorflow {
        REGISTER_OP("TfServingRemotePredict").Input("input: T").Output("output: T");
        REGISTER_OP("TfServingLocal").Input("input: T").Output("output: T");
        }  // namespace tensorflow
        """,
    "serving/ops/remote_predict/kernels/remote_predict_op_kernel.cc": """
        #include "tensorflow/core/framework/op_kernel.h"
        namespace tensorflow {
        namespace serving {
        template <typename Stub>
        class RemotePredictOp : public AsyncOpKernel {
         public:
          void ComputeAsync(OpKernelContext* context, DoneCallback done) override { done(); }
        };
        class LocalOp : public OpKernel {
         public:
          void Compute(OpKernelContext* context) override {}
        };
        REGISTER_KERNEL_BUILDER(Name("TfServingRemotePredict").Device(DEVICE_CPU), RemotePredictOp<Stub>);
        REGISTER_KERNEL_BUILDER(Name("TfServingLocal").Device(DEVICE_CPU), LocalOp);
        }  // namespace serving
        }  // namespace tensorflow
        """,
    "serving/ops/remote_predict/python/ops/remote_predict_ops.py": """
        from serving.ops.remote_predict.ops import gen_remote_predict_op
        from serving.ops.remote_predict.python import gen_helpers


        def run(inputs):
            return gen_remote_predict_op.tf_serving_remote_predict(inputs)


        def local(inputs):
            gen_helpers.tf_serving_local(inputs)  # a module of the system: its own function
            return gen_remote_predict_op.tf_serving_unknown(inputs)
        """,
    "serving/ops/remote_predict/python/gen_helpers.py": """
        def tf_serving_local(inputs):
            return inputs
        """,
}


def test_a_call_through_the_generated_op_wrapper_binds_to_the_kernel_async_too(tmp_path):
    bundle = written_bundle(tmp_path, GENERATED)
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:serving.ops.remote_predict.python.ops.remote_predict_ops.run",
                      "cpp:tensorflow::serving::RemotePredictOp::ComputeAsync", 6)]
    assert bundle["stats"]["bindings"]["tensorflow_op_calls_generated"] == 1
