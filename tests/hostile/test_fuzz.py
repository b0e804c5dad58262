"""The fuzz pass: a fixed number of mutated inputs per reader of untrusted bytes, under a time cap,
with no crash and no hang.

CI tries the same inputs every run: the default seed is fixed and each target stops after
:data:`INPUTS` inputs (or :data:`SECONDS`, whichever comes first), so a red run is a regression,
never luck. To explore, change the seed and widen the budget::

    ARCHDIFF_FUZZ_SEED=random ARCHDIFF_FUZZ_INPUTS=100000 ARCHDIFF_FUZZ_SECONDS=300 \
        python3 -m pytest tests/hostile/test_fuzz.py -s

A failure prints the command that replays the one input that caused it."""

from __future__ import annotations

import os
import random

import pytest

from tests.hostile.fuzz import TARGETS, fuzz

# inputs per target: about five seconds each on the CI machine
INPUTS = {"archive": 300, "dwarf": 600, "evidence": 1000, "json-thresholds": 3000, "promql": 3000,
          "user-yaml": 300, "yaml-thresholds": 1500}
SECONDS = float(os.environ.get("ARCHDIFF_FUZZ_SECONDS", "30"))
_SEED = os.environ.get("ARCHDIFF_FUZZ_SEED", "20250914")
SEED = random.SystemRandom().randrange(2**31) if _SEED == "random" else int(_SEED)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fuzz_readers_of_untrusted_bytes(target, tmp_path):
    wanted = int(os.environ.get("ARCHDIFF_FUZZ_INPUTS", INPUTS[target]))
    tried, findings = fuzz(target, SEED, SECONDS, tmp_path, max_iterations=wanted)
    assert not findings, "\n".join(f.render() for f in findings)
    assert tried >= min(wanted, 50), f"only {tried} inputs in {SECONDS} s: the pass proves little"
    print(f"{target}: {tried} inputs, seed {SEED}")
