"""Kernels a host function hands to a launcher of the system's own, read per file (the scan) and
joined over the system (the graph step).

A system that wraps the CUDA launch API in functions of its own (MLX's
``encoder.add_kernel_node(kernel, grid, block, args...)``, which hands the kernel on through two
more of its methods to a ``cudaKernelNodeParams``'s ``func``) launches every kernel through them: read
as calls alone, its kernels had no launch at all. Three kinds of fact, each by the body it stands in:

- **launcher parameters** ``(function, parameter index)``: a parameter the body hands to a launcher
  of launchers.yaml at the kernel's position (``cudaLaunchKernel(func, ...)``), or stores in a CUDA
  launch record's ``func``/``function`` field (``params.func = func;``);
- **forwards** ``(function, parameter index, callee as written, argument position, line)``: a
  parameter the body hands on to another call as one of its arguments, when the parameter may hold a
  function (a pointer to a function, ``void*``, a driver handle, or a type of the template's own);
- **kernel arguments** ``(function, callee as written, argument position, kernel as written, line)``:
  a call one of whose arguments names a function with template arguments (``k<T, 4>``, ``&k<T>``), with
  its namespace (``cu::rbits``) or its address taken (``&add_one``), or a local that the body gives one
  (``auto kernel = cu::layer_norm<T, N>;``).

The graph step takes the launchers' parameters, follows the forwards to a fixed point (a function
that hands its parameter to a launcher's kernel position is a launcher at that parameter), and draws a
``launches`` edge for each kernel argument given at a launcher's kernel position, when it names a
kernel of the system (extractor.cpp.graph).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.cpp.names import clean_name

# a CUDA launch record's field that takes the kernel: cudaKernelNodeParams.func, cudaLaunchParams.func,
# CUDA_KERNEL_NODE_PARAMS.func, hipKernelNodeParams.func; cuLaunchKernel's own CUfunction is a launcher's
_LAUNCH_FIELD = re.compile(rb"[.>]\s*(?:func|function)\s*=\s*(?:\([^()]*\)\s*|(?:reinterpret|static)_cast\s*<[^<>]*>\s*)?"
                           rb"\(?\s*&?\s*(\w+)\s*\)?\s*;")
# a parameter's type that may hold a function: a pointer to one, `void*`, a driver's function handle
_FUNCTION_HOLDER = re.compile(r"\(\s*\*|^(?:const\s+)?void\s*\*$|^(?:CUfunction|hipFunction_t|cudaFunction_t)$")
# an argument that names a function with template arguments, its address taken or not
_TEMPLATE_ID = re.compile(rb"^\s*&?\s*\(?\s*((?:\w+\s*::\s*)*\w+)\s*<(?:[^;{}()]|\([^;{}()]*\))*>\s*\)?\s*$")
# one named with its namespace or its address taken (`cu::rbits`, `&add_one`): no local is written so
_QUALIFIED = re.compile(rb"^\s*(?:&\s*((?:\w+\s*::\s*)*\w+)|((?:\w+\s*::\s*)+\w+))\s*$")
_WORD = re.compile(rb"^\s*(\w+)\s*$")
# a name the body gives a value, `auto kernel = cu::k<T, 4>;` (its initializer read by _given_kernels)
_ASSIGNED = re.compile(rb"\b(\w+)\s*=(?!=)\s*((?:[^;=]|==)*);")
_ADDRESS = re.compile(rb"&\s*((?:\w+\s*::\s*)*\w+)")
_TEMPLATE_HEAD = re.compile(rb"(?<![\w:])((?:\w+\s*::\s*)*\w+)\s*<")
_NAME = re.compile(r"[A-Za-z_][\w:]*")
_NO_FUNCTION = frozenset({"true", "false", "nullptr", "NULL", "this"})
_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast", "dynamic_cast"})
_CAST = re.compile(rb"^\s*(?:\(\s*(?:const\s+)?void\s*\*\s*\)|(?:reinterpret|static)_cast\s*<[^<>()]*>)\s*")


def may_hold_function(type_text: str, template_params: Iterable[str]) -> bool:
    """Whether a parameter declared ``type_text`` may hold a function (see the module's docstring):
    a type of the function's own template (``F``, ``F*``, ``Kernel``) counts, by value or pointer."""
    written = type_text.strip()
    if _FUNCTION_HOLDER.search(written):
        return True
    bare = written.removeprefix("const ").rstrip("*& ").strip()
    return bare in set(template_params) and "&" not in written


def _argument_word(written: bytes) -> str | None:
    """The name an argument is, a cast to a pointer and parentheses taken off (``reinterpret_cast<void*>(func)``)."""
    stripped = _CAST.sub(b"", written).strip()
    while stripped.startswith(b"(") and stripped.endswith(b")"):
        stripped = stripped[1:-1].strip()
    m = _WORD.match(stripped)
    return m.group(1).decode() if m else None


def _given_kernels(data: bytes, body: tuple[int, int]) -> dict[str, list[tuple[int, list[str]]]]:
    """Name -> (offset, the functions it is given there) of each assignment in the body that gives a
    local a function: a name with template arguments, with its namespace or its address taken
    (``auto kernel = cu::layer_norm<T, N>;``, ``= &k;``), or either of two by a condition (``= c ?
    &a<T> : &b<T>;``). A call hands on each one given before it (``kernel = cu::binary_sv<...>;`` in a
    branch after the declaration)."""
    given: dict[str, list[tuple[int, list[str]]]] = {}
    for m in _ASSIGNED.finditer(data, body[0], body[1]):
        init = m.group(2)
        if b"?" in init:  # `c ? &a<T> : &b<T>`, `c ? a<T, true> : a<T, false>`: each name with its
            branches = init.partition(b"?")[2]  # address taken or template arguments
            kernels = sorted({clean_name(k.decode()) for k in (*_ADDRESS.findall(branches),
                                                               *_TEMPLATE_HEAD.findall(branches))})
        else:
            named = _TEMPLATE_ID.match(init) or _QUALIFIED.match(init)
            kernels = [clean_name(next(g for g in named.groups() if g).decode())] if named else []
        if kernels:
            given.setdefault(m.group(1).decode(), []).append((m.start(), kernels))
    return given


def launch_field_offsets(data: bytes) -> list[int]:
    """Where ``data`` stores a function in a CUDA launch record's field (``params.func = func;``): a
    body that does so has its facts read though it calls nothing."""
    return [m.start() for m in _LAUNCH_FIELD.finditer(data)] if b"func" in data else []


def body_handoffs(data: bytes, qual: str, body: tuple[int, int], params: list[tuple[str, bool]],
                  calls: Iterable[tuple[str, Any, int]], launchers: Mapping[str, int]
                  ) -> tuple[list[tuple[str, int]], list[tuple[str, int, str, int, int]],
                             list[tuple[str, str, int, str, int]]]:
    """The three kinds of fact of one body (``qual``, its byte span ``body``): ``params`` its
    parameters (name, whether it may hold a function), ``calls`` (callee as written, its call node's
    arguments node, line) of the calls written in it."""
    index = {name: i for i, (name, _holds) in enumerate(params) if name}
    holders = {name for name, holds in params if holds and name}
    given: dict[str, list[tuple[int, list[str]]]] | None = None
    sinks: set[int] = set()
    forwards: list[tuple[str, int, str, int, int]] = []
    kernel_args: list[tuple[str, str, int, str, int]] = []
    for callee, arguments, line in calls:
        if callee in _CASTS:
            continue
        args = [a for a in arguments.named_children if a.type != "comment"]
        position = launchers.get(callee)
        for j, arg in enumerate(args):
            written = arg.text
            word = _argument_word(written)
            if word is not None and word in index:
                if position == j:
                    sinks.add(index[word])
                elif position is None and word in holders:
                    forwards.append((qual, index[word], callee, j, line))
                continue
            if position is not None:
                continue  # a known launcher's kernels are the scan's own launches
            uncast = _CAST.sub(b"", written)
            named = _TEMPLATE_ID.match(uncast) or _QUALIFIED.match(uncast)
            if named is not None:
                kernel = next(g for g in named.groups() if g)
                kernel_args.append((qual, callee, j, clean_name(kernel.decode()), line))
            elif word is not None:
                if given is None:
                    given = _given_kernels(data, body)
                # each function given to it before the call: a branch may give it another
                before = sorted({kernel for at, kernels in given.get(word, ()) if at < arg.start_byte
                                 for kernel in kernels})
                kernel_args.extend((qual, callee, j, kernel, line) for kernel in before
                                   if _NAME.fullmatch(kernel) and kernel not in _NO_FUNCTION)
    if holders:
        for m in _LAUNCH_FIELD.finditer(data, body[0], body[1]):
            name = m.group(1).decode()
            if name in holders:
                sinks.add(index[name])
    return [(qual, i) for i in sorted(sinks)], forwards, kernel_args
