"""What a probe is about, before any compiler runs: the header, its definitions and build context.

The data types every probe module shares (the plan makes them, the compile attempts, the batches
and the single-header probe read them), kept apart so that those modules import this one and
never each other in a circle.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from extractor.model import Language
from extractor.structs.buildcontext import CUDA, CXX, ProbeFlags
from extractor.structs.source import StructDefinition

# a definition the compile left out; extractor.structs.conditions names the `#if` around it
NOT_EMITTED = ("compiled, but no complete type was emitted (conditionally compiled out, or a name the probe "
               "could not see)")
HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl"}
DEFAULT_MAX_HEADERS = 160
DEFAULT_TIMEOUT = 300.0
# Address-space cap per compiler process. nvcc's front ends need about 1 GB on most of vLLM's
# headers, but with the CUDA math libraries' headers (cuBLAS, cuSPARSE, cuSOLVER wheels beside torch)
# its CUTLASS dispatch headers (scaled_mm_c2x_sm89_fp8_dispatch.cuh, the machete launchers) ran out
# of 3 GB ("catastrophic error: out of memory") and compile in 6; a template-instantiation bomb
# took 4.1 GB before a cap stopped it.
DEFAULT_MEMORY = 6 * 1024**3


@dataclasses.dataclass(frozen=True, slots=True)
class Preamble:
    lines: tuple[str, ...]
    includer: str  # evidence path of the includer
    directory: Path  # its directory, searched first for its quoted includes


@dataclasses.dataclass(frozen=True, slots=True)
class HeaderProbe:
    path: str  # label-prefixed repository path: what records carry
    file: Path  # on disk
    language: Language
    definitions: tuple[StructDefinition, ...]
    flags: ProbeFlags = ProbeFlags()  # the build context: include dirs, defines, language, standard
    # What its nearest includers have before including it (#include and #define lines): another
    # attempt for a header that relies on its includer for what it uses or selects.
    preambles: tuple[Preamble, ...] = ()


def probe_language(probe: HeaderProbe) -> str:
    """C, C++ or CUDA: the build context's decision, else by the file's suffix and language."""
    if probe.flags.language:
        return probe.flags.language
    return CUDA if probe.file.suffix == ".cuh" or probe.language is Language.CUDA else CXX


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeTimings:
    """How long the probes took: for the run log, never for the (deterministic) bundle."""

    probe_seconds: float = 0.0
    headers_cached: int = 0
    probe_batches: int = 0  # batch compiles (extractor.structs.batch), failed ones included
    headers_batched: int = 0  # headers laid out by a batch rather than by their own probe
    compiler_processes: int = 0  # compiles and preprocess-only passes started (cached headers start none)

    def run_log(self) -> dict[str, float | int]:
        """The run log's ``step_details.structs``."""
        return {"probe_s": round(self.probe_seconds, 3), "headers_cached": self.headers_cached,
                "probe_batches": self.probe_batches, "headers_batched": self.headers_batched,
                "compiler_processes": self.compiler_processes}
