"""TensorFlow custom operators: the kernel a C++ library registers for an op, which Python runs as a
function of the library ``tf.load_op_library(path)`` returns (mechanism "tensorflow-op").

``REGISTER_OP("T5Decoding")`` declares the op; ``REGISTER_KERNEL_BUILDER(Name("T5Decoding").Device(
DEVICE_GPU).TypeConstraint<float>("T"), T5DecodingOp<GPUDevice, float>)`` registers the kernel class
whose ``Compute`` runs it (``ComputeAsync`` for an ``AsyncOpKernel``: cpp.ops resolves it when the
class has no ``Compute``). TensorFlow names the Python function after the op in snake case
(``t5_decoding``), so a call ``module.t5_decoding(...)`` on what ``load_op_library`` returned binds
to ``T5DecodingOp::Compute`` (:mod:`extractor.bindings.python_ctypes` reads the Python side, as it
reads the functions a TVM FFI module exports by name).

Read from the text: the registrations usually stand in a macro's body (``#define REGISTER_GPU(T)
REGISTER_KERNEL_BUILDER(...)``, used once per type), which no tree holds as code. The namespace
around the registration, which the class is resolved from, is read from the tree.
"""

from __future__ import annotations

import re
from typing import Any

from extractor.cpp.facts import PybindFact
from extractor.cpp.names import SPACES, clean_name, split_top_level
from extractor.cpp.parse import blank_span
from extractor.cpp.torchclasses import closing_bracket, namespace_at

TENSORFLOW_OP = "tensorflow-op"
MARKER = b"REGISTER_KERNEL_BUILDER"

_BUILDER = re.compile(rb"\bREGISTER_KERNEL_BUILDER\s*\(")
_OP_NAME = re.compile(r'\s*(?:::)?(?:tensorflow::)?Name\s*\(\s*"(\w+)"\s*\)')
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_CONTINUATION = re.compile(rb"\\\r?\n")


def tensorflow_op_registrations(data: bytes, root: Any) -> list[PybindFact]:
    """A "def" fact per kernel registration: ``name`` the op's Python name, ``target`` the kernel
    class's ``Compute`` as written (its template arguments dropped)."""
    code = _CONTINUATION.sub(lambda m: blank_span(m.group(0)).replace(b"\n", b" "),
                             _COMMENT.sub(lambda m: blank_span(m.group(0)), data))
    found = []
    for m in _BUILDER.finditer(code):
        end = closing_bracket(code, m.end() - 1, b"(", b")")
        if end < 0:
            continue
        args = split_top_level(code[m.end():end - 1].decode(errors="replace"))
        op = _OP_NAME.match(args[0]) if len(args) == 2 else None
        kernel = clean_name(SPACES.sub("", args[1])) if op is not None else ""
        if op is None or not re.fullmatch(r"(?:::)?\w+(?:::\w+)*", kernel):
            continue
        line = data.count(b"\n", 0, m.start()) + 1
        found.append(PybindFact("def", "", python_name(op.group(1)), f"{kernel}::Compute", line,
                                namespace_at(root, m.start()), mechanism=TENSORFLOW_OP))
    return found


def python_name(op: str) -> str:
    """The op's name as TensorFlow's Python wrappers spell it: ``T5Decoding`` -> ``t5_decoding``,
    ``BertInt8`` -> ``bert_int8``, ``GPUOp`` -> ``gpu_op`` (an `_` before a capital that follows a
    lower-case letter, or that a lower-case letter follows)."""
    out = []
    for i, c in enumerate(op):
        follows_word = op[i - 1].islower() or (i + 1 < len(op) and op[i + 1].islower()) if i else False
        if c.isupper() and follows_word and op[i - 1] != "_":
            out.append("_")
        out.append(c.lower())
    return "".join(out)
