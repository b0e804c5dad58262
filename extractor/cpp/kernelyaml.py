"""Operator kernels registered through a kernel YAML file (ExecuTorch's `functions.yaml`,
`custom_ops.yaml`): an operator registration without any C++ registration call.

ExecuTorch's build runs torchgen over YAML entries such as

    - op: add.out                                   # an ATen operator: aten::add.out
      kernels:
        - arg_meta: null
          kernel_name: torch::executor::add_out
    - func: cadence::quantize_per_tensor.out(Tensor input, ...) -> Tensor(a!)
      kernels:
        - arg_meta: null
          kernel_name: impl::generic::quantize_per_tensor_out

and generates the code that registers each kernel with the runtime under the operator's name. The
generated call is `::<namespace>::native::<kernel>(...)` (torchgen's ExecuTorch parser adds the
`native` sub-namespace; `at` when the name has none), so `torch::executor::add_out` is the function
`torch::executor::native::add_out` that `kernels/portable/cpu/op_add.cpp` defines. Each entry's
kernels are read as implementations of the operator (`torch.ops.cadence.quantize_per_tensor` binds
to them, as to an `m.impl` of C++), at the line of the kernel's entry; an entry with no kernel
(ATen mode's list of operators) registers nothing. A kernel of one of PyTorch's own operators
(`aten::add.out`) is the on-device runtime's, which a Python call of `torch.ops.aten.add` never
reaches (PyTorch runs its own): it is a registration, and the API of its function, but binds no
call. The scanner reads a YAML file only when it has
`kernel_name:`; a file that is no list of such entries gives nothing."""

from __future__ import annotations

import msgspec
import yaml

from extractor.model import ParsedFile
from extractor.support import safeyaml

_MARKER = b"kernel_name:"
KERNEL_YAML = "kernel-yaml"  # OpRegistration.via of the registrations read here


class KernelEntry(msgspec.Struct, frozen=True, array_like=True, order=True):
    """One kernel of one operator, as the YAML writes them; ``function`` is the C++ function the
    generated registration calls."""

    line: int
    namespace: str  # `aten` for an `op:` entry, else the `func:` name's, `aten` when it has none
    op: str
    overload: str
    kernel: str  # as written: `torch::executor::add_out`
    function: str  # `torch::executor::native::add_out`


class KernelYamlFacts(msgspec.Struct, frozen=True):
    entries: tuple[KernelEntry, ...]


def scan_kernel_yaml(parsed: ParsedFile) -> KernelYamlFacts | None:
    if _MARKER not in parsed.data:
        return None
    try:
        documents = [safeyaml.build(node, lines=True) for node in safeyaml.compose_all(parsed.text)]
    except (yaml.YAMLError, ValueError):
        return None  # the thresholds step reads YAML too, and says what does not parse
    found = []
    for doc in documents:
        for item in doc if isinstance(doc, list) else ():
            if isinstance(item, dict):
                found.extend(_kernels(item))
    return KernelYamlFacts(tuple(sorted(set(found)))) if found else None


def _kernels(item: dict) -> list[KernelEntry]:
    written = item.get("op") if isinstance(item.get("op"), str) else item.get("func")
    kernels = item.get("kernels")
    if not isinstance(written, str) or not isinstance(kernels, list):
        return []
    name = written.split("(", 1)[0].strip()
    namespace, _, name = name.rpartition("::")
    op, _, overload = name.partition(".")
    out = []
    for kernel in kernels:
        given = kernel.get("kernel_name") if isinstance(kernel, dict) else None
        if not isinstance(given, str) or not given.strip() or not op:
            continue
        qualifier, _, entity = given.strip().rpartition("::")
        line = getattr(kernel, "line", 0) or getattr(item, "line", 0)
        out.append(KernelEntry(line, namespace or "aten", op, overload, given.strip(),
                               f"{qualifier or 'at'}::native::{entity}"))
    return out
