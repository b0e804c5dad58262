"""Cross-language ``binds`` edges: Python calls to the C++ behind them (torch operators, pybind11,
nanobind; :mod:`extractor.bindings.python_cpp`; ctypes and cffi's ``dlopen``,
:mod:`extractor.bindings.python_ctypes`; TVM FFI global functions, :mod:`extractor.bindings.python_tvm_ffi`),
and PyO3, cgo and Rust's ``extern "C"``
(:mod:`extractor.bindings.ffi`). Two steps, in this order (ffi reuses the Python-C++ index)."""

from extractor.bindings.ffi import STEP as FFI_STEP
from extractor.bindings.python_cpp import STEP as PYTHON_CPP_STEP

__all__ = ["FFI_STEP", "PYTHON_CPP_STEP"]
