"""Paddle custom operators: `PD_BUILD_OP(name)....SetKernelFn(PD_KERNEL(fn))` read by the C++ step
(mechanism "paddle-op"), the module they are functions of named by the build
(`setup(name=..., ext_modules=CUDAExtension(sources=[...]))`), and Python calls of them bound to the
kernel function. The mini-repo is written here: the shapes of Paddle3D's PaddleRendering extensions
and of FastDeploy's custom_ops, small."""

from __future__ import annotations


import pytest

from tests.native_support import written_bundle


FILES = {
    # a setup whose extension class has no name of its own (Paddle's): the setup's name is the module's
    "pkg/ops/setup.py": """
        from paddle.utils.cpp_extension import CUDAExtension, setup

        setup(
            name="fused_ops",
            ext_modules=CUDAExtension(sources=["src/relu.cc", "src/relu.cu"]),
        )
        """,
    # the extension in a list, its sources a module constant
    "pkg/render/setup.py": """
        from paddle.utils.cpp_extension import CUDAExtension, setup

        SOURCES = ["src/march.cc"]
        setup(name="march_lib", version="1.0", ext_modules=[CUDAExtension(sources=SOURCES)])
        """,
    "pkg/ops/src/relu.cc": """
        #include "paddle/extension.h"

        std::vector<paddle::Tensor> ReluForward(const paddle::Tensor& x) { return {x}; }
        std::vector<paddle::Tensor> ReluBackward(const paddle::Tensor& x) { return {x}; }

        namespace fused {
        std::vector<paddle::Tensor> Scale(const paddle::Tensor& x, float s) { return {x}; }
        }  // namespace fused

        PD_BUILD_OP(fused_relu)
            .Inputs({"X"})
            .Outputs({"Out"})
            .SetKernelFn(PD_KERNEL(ReluForward));

        PD_BUILD_GRAD_OP(fused_relu)
            .Inputs({"X", paddle::Grad("Out")})
            .SetKernelFn(PD_KERNEL(ReluBackward));

        PD_BUILD_STATIC_OP(fused_scale)
            .Inputs({"X"})
            .SetKernelFn(PD_KERNEL(fused::Scale))
            .Attrs({"s: float"});
        """,
    "pkg/ops/src/relu.cu": """
        __global__ void relu_kernel(float* x) {}
        """,
    "pkg/render/src/march.cc": """
        #include "paddle/extension.h"
        std::vector<paddle::Tensor> MarchForward(const paddle::Tensor& rays) { return {rays}; }
        PD_BUILD_OP(march).Inputs({"rays"}).Outputs({"out"}).SetKernelFn(PD_KERNEL(MarchForward));
        """,
    # an operator file that no build script lists (a C++ inference plugin): read, bound to nothing, said
    "deploy/plugin/nms.cc": """
        #include "paddle/extension.h"
        std::vector<paddle::Tensor> Nms(const paddle::Tensor& boxes) { return {boxes}; }
        PD_BUILD_OP(nms).Inputs({"boxes"}).Outputs({"keep"}).SetKernelFn(PD_KERNEL(Nms));
        """,
    # FastDeploy's shape: a build whose sources are computed (no file listed), its module's functions
    # copied into a package of the system at import time
    "custom_ops/setup_ops.py": """
        from paddle.utils.cpp_extension import CUDAExtension, setup

        setup(name="fd_ops", ext_modules=CUDAExtension(sources=find_sources("gpu_ops")))
        """,
    "custom_ops/gpu_ops/step.cu": """
        #include "paddle/extension.h"
        std::vector<paddle::Tensor> StepPaddle(const paddle::Tensor& flags) { return {flags}; }
        PD_BUILD_STATIC_OP(step_paddle).Inputs({"flags"}).SetKernelFn(PD_KERNEL(StepPaddle));
        """,
    "custom_ops/cpu_ops/step.cc": """
        #include "paddle/extension.h"
        std::vector<paddle::Tensor> StepCpu(const paddle::Tensor& flags) { return {flags}; }
        PD_BUILD_OP(step_paddle).Inputs({"flags"}).SetKernelFn(PD_KERNEL(StepCpu));
        """,
    "pkg/gpu/__init__.py": """
        from pkg.loader import import_custom_ops

        import_custom_ops("pkg.gpu", ".fd_ops", globals())
        """,
    "pkg/loader.py": """
        def import_custom_ops(package, module, names):
            pass


        def step_paddle(flags):
            return flags
        """,
    "pkg/engine.py": """
        import paddle.incubate
        from pkg.gpu import step_paddle
        from pkg import loader


        def step(flags):
            step_paddle(flags)
            # a name of the system's Python that is an operator's name too: the Python function
            loader.step_paddle(flags)
            # another library's: not the system's operator
            paddle.incubate.step_paddle(flags)
        """,
    # a package the Python step does not find where it is imported from (PaddleRendering under
    # contrib/, imported as `pprndr`): an outside name, whose function of an operator's name is not
    # the operator
    "contrib/tool/toolpkg/__init__.py": "",
    "contrib/tool/toolpkg/funcs.py": """
        def step_paddle(flags):
            return flags
        """,
    "contrib/tool/toolpkg/user.py": """
        import toolpkg
        from toolpkg.funcs import step_paddle


        def run(flags):
            return step_paddle(flags)
        """,
    "pkg/__init__.py": "",
    "pkg/model.py": """
        from pkg.ops import fused_ops
        from pkg.render import march_lib


        def forward(x):
            y = fused_ops.fused_relu(x)
            y = fused_ops.fused_scale(y, 2.0)
            return march_lib.march(y)


        def suppress(boxes):
            return fused_ops.nms(boxes)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("paddle_ops")
    return written_bundle(root / "src", FILES)


def test_python_calls_of_paddle_operators_bind_to_their_kernel_functions(bundle):
    binds = {(e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("py:pkg.model.forward", "cpp:ReluForward", "pkg/model.py", 6),
        # PD_BUILD_STATIC_OP; a kernel in a namespace
        ("py:pkg.model.forward", "cpp:fused::Scale", "pkg/model.py", 7),
        # a module named by a setup whose ext_modules is a list
        ("py:pkg.model.forward", "cpp:MarchForward", "pkg/model.py", 8),
        # `nms`'s module is named by no build, but the call names it in the system's package, which
        # its Python does not define: bound by the operator's name
        ("py:pkg.model.suppress", "cpp:Nms", "pkg/model.py", 12),
        # a name copied into a package of the system at run time: each kernel registered as the operator
        ("py:pkg.engine.step", "cpp:StepPaddle", "pkg/engine.py", 7),
        ("py:pkg.engine.step", "cpp:StepCpu", "pkg/engine.py", 7),
    }
    stats = bundle["stats"]["bindings"]
    assert (stats["paddle_op_calls_bound"], stats["paddle_op_calls_inferred"]) == (3, 2)


def test_paddle_operators_are_counted_and_make_their_kernels_public(bundle):
    # fused_relu, fused_scale, march, nms, step_paddle twice; not the grad op
    assert bundle["stats"]["cpp"]["paddle_ops"] == 6
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert nodes["cpp:fused::Scale"]["api"] == "public: paddle-op PADDLE_EXTENSION_NAME.fused_scale"
    assert nodes["cpp:ReluBackward"].get("api", "").startswith("internal")


def test_an_operator_file_no_build_lists_says_its_calls_bind_by_name_only(bundle):
    unnamed = {(d["path"], d["line"]): d["message"] for d in bundle["diagnostics"]
               if d["code"] == "pybind-module-unnamed"}
    assert sorted(unnamed) == [("custom_ops/cpu_ops/step.cc", 3), ("custom_ops/gpu_ops/step.cu", 3),
                               ("deploy/plugin/nms.cc", 3)]
    assert "by the operator's name alone" in unnamed[("deploy/plugin/nms.cc", 3)]
