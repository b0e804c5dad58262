"""A probe compile that stops at its header's first #include, told without running the compiler
(extractor.structs.firstinclude): what it predicts is what g++ and nvcc print, and every shape it
cannot be sure of is left to the compiler."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from extractor.model import Language
from extractor.structs import attempts, compilers
from extractor.structs.buildcontext import ProbeFlags
from extractor.structs.compilers import PRELUDE, compile_commands, search_superset
from extractor.structs.firstinclude import stopping_include, without_excerpts
from extractor.structs.probe import HeaderProbe, probe_header
from extractor.structs.records import Method
from extractor.structs.source import StructDefinition


# header files of a small tree: (path, text); "ext/" is an include directory of its own
TREE = {
    "inc/angle.hpp": "#pragma once\n// needs torch\n\n#include <torch/all.h>\nstruct A { int a; };\n",
    "inc/guarded.cuh": "/* licence\n   more licence */\n#ifndef INC_GUARDED_H\n#define INC_GUARDED_H\n"
                       '#include "inner.cuh"\nstruct G { int g; };\n#endif\n',
    "inc/inner.cuh": '#pragma once\n#include "cutlass/cutlass.h"\n',
    "inc/via_dir.hpp": '#pragma once\n#include "builder/collective.hpp"\n',
    "ext/builder/collective.hpp": "#pragma once\n#include <cute/tensor.hpp>\n",
    "inc/prelude_first.hpp": "#pragma once\n#include <cstdint>\n#include  <hip/hip_runtime.h>  // ROCm\n",
    # shapes left to the compiler
    "inc/defined_guard.hpp": "#ifndef DEFINED_GUARD\n#define DEFINED_GUARD\n#include <torch/all.h>\n#endif\n"
                             "struct D { int d; };\n",
    "inc/conditional.hpp": "#pragma once\n#if defined(USE_TORCH)\n#include <torch/all.h>\n#endif\nstruct C { int c; };\n",
    "inc/found_first.hpp": "#pragma once\n#include <vector>\n#include <torch/all.h>\n",
    "inc/code_first.hpp": "#pragma once\n#define WANT 1\n#include <torch/all.h>\n",
    "inc/tabbed.hpp": "#pragma once\n#include\t<torch/all.h>\n",
    "inc/reserved_guard.hpp": "#ifndef __RESERVED_GUARD__\n#define __RESERVED_GUARD__\n#include <torch/all.h>\n#endif\n",
    "inc/comment_then_code.hpp": "/* a */ #include <torch/all.h>\n",
    "inc/nested_code.hpp": '#pragma once\n#include "code_first.hpp"\n',
}
PREDICTED = ["inc/angle.hpp", "inc/guarded.cuh", "inc/via_dir.hpp", "inc/prelude_first.hpp"]
LEFT = ["inc/defined_guard.hpp", "inc/conditional.hpp", "inc/found_first.hpp", "inc/code_first.hpp",
        "inc/tabbed.hpp", "inc/reserved_guard.hpp", "inc/comment_then_code.hpp", "inc/nested_code.hpp"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in TREE.items():
        path = tmp_path / "proj" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "proj"


def _commands(tree: Path, rel: str, tmp: Path) -> list[compilers.Command]:
    header = tree / rel
    language = "cuda" if header.suffix == ".cuh" else "c++"
    flags = ProbeFlags(include_dirs=(tree / "ext",), defines=("-DDEFINED_GUARD",))
    commands = compile_commands(header, language, flags, tmp / "probe", tmp / "probe.o", [tree / "inc"])
    assert not isinstance(commands, str), commands
    return commands


def _predict_and_compile(tree: Path, rel: str, command: compilers.Command, tmp: Path) -> tuple[str | None, str, int]:
    """The prediction for ``command``'s probe of ``rel``, and the compiler's own stderr (its
    source excerpts left out) and exit status, with the probe's source as the probe writes it."""
    header = tree / rel
    text = PRELUDE[command.suffix] + f'#include "{header}"\n'
    source = Path(command.argv[-3])
    source.write_text(text)
    predicted = stopping_include(str(source), text.count("\n"), str(header), search_superset(command),
                                 command.argv, attempts._PRELUDE_NAMES[command.suffix])
    argv = [*command.argv[:-2], "-MD", "-MF", str(tmp / "probe.d"), *command.argv[-2:]]
    done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
    stderr = without_excerpts(done.stderr)
    return predicted, stderr, done.returncode


@pytest.mark.parametrize("rel", PREDICTED)
def test_a_predicted_stop_is_what_the_compiler_prints(tree, tmp_path, rel):
    assert compilers.find_nvcc(), "nvcc is required (CUDA toolkit): the .cuh shape is checked against it"
    for command in _commands(tree, rel, tmp_path):
        predicted, stderr, returncode = _predict_and_compile(tree, rel, command, tmp_path)
        assert returncode != 0 and not (tmp_path / "probe.d").exists()
        assert predicted == stderr, Path(command.exe).name


@pytest.mark.parametrize("rel", LEFT)
def test_a_shape_it_cannot_be_sure_of_is_left_to_the_compiler(tree, tmp_path, rel):
    for command in _commands(tree, rel, tmp_path):
        predicted, stderr, returncode = _predict_and_compile(tree, rel, command, tmp_path)
        assert predicted is None, Path(command.exe).name
    if rel == "inc/defined_guard.hpp":  # the guard -D defines skips the include: the compile succeeds
        assert returncode == 0 and not stderr
    if rel == "inc/conditional.hpp":  # USE_TORCH is not defined: the include is skipped
        assert returncode == 0


def test_the_probe_keeps_the_compilers_message_and_starts_no_compiler(tree, monkeypatch):
    """Through the whole probe: the layout's error is the one the compiler's own failure gave
    (the prediction turned off), and no compiler process ran for it."""
    header = tree / "inc" / "angle.hpp"
    probe = HeaderProbe("inc/angle.hpp", header, Language.CPP, (StructDefinition(5, "A", "struct"),))

    def run() -> tuple[str, int]:
        before = compilers.compilers_started()
        (layout,) = probe_header(probe, [tree / "inc"], [tree], root_labels=[(tree, "")]).layouts
        assert layout.method is Method.UNRESOLVED
        return layout.error, compilers.compilers_started() - before

    predicted_error, started = run()
    monkeypatch.setattr(attempts, "stopping_include", lambda *args: None)
    compiled_error, compiled_started = run()
    assert predicted_error == compiled_error == "inc/angle.hpp:4:10: fatal error: torch/all.h: No such file or directory"
    assert compiled_started >= 1 and started == compiled_started - 1
