"""The evidence kinds, in the order they run: the one list a new kind joins.

Everything else that names the kinds is derived from this list: the bundle's record keys and
the loader's record types (each step's ``records``), the scanners' cache fingerprint (their
versions), the order check. A later step may read what earlier ones found (``requires``).
"""

from __future__ import annotations

from collections.abc import Sequence

from extractor import bindings, concepts, cpp, generated, go, layers, proto, python, rust, structs, telemetry
from extractor.model import Step

STEPS: tuple[Step, ...] = (
    python.STEP,
    cpp.STEP,
    rust.STEP,
    go.STEP,
    proto.STEP,
    concepts.FILES_STEP,  # beside the Python graph; read back before the generated step, done by then
    generated.STEP,  # early: the concepts step it leads to then runs in a child beside the bindings and the structs
    bindings.PYTHON_CPP_STEP,
    bindings.FFI_STEP,
    structs.STEP,
    telemetry.METRICS_STEP,
    telemetry.THRESHOLDS_STEP,
    concepts.STEP,
    layers.STEP,
)


def check_order(steps: Sequence[Step]) -> None:
    """Every step runs after the steps it ``requires``: a list that breaks this is a bug in the
    caller, refused before anything runs."""
    seen: set[str] = set()
    for step in steps:
        missing = [required.name for required in step.requires if required.name not in seen]
        if missing:
            raise ValueError(f"step {step.name!r} requires {', '.join(map(repr, missing))}, which must run before it")
        seen.add(step.name)


check_order(STEPS)
