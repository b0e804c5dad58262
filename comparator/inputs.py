"""Which evidence one side of a comparison names: an ``evidence.json`` (any ``.json``) or a
directory holding one (the output of ``archdiff extract``).

The comparator reads evidence only. A side that is not evidence yet (a system file, a source spec)
is extracted by the layer above, which then hands the comparator evidence (archdiff.sides)."""

from __future__ import annotations

from pathlib import Path


def evidence_path(arg: str) -> Path | None:
    """The evidence file ``arg`` names, or None when it names none (the caller extracts it).

    A ``.json`` path is taken as an evidence file even when it does not exist, so that a mistyped
    one is reported as a missing evidence file, not as a source spec of no known form."""
    path = Path(arg.strip())
    if path.suffix == ".json":
        return path
    if path.is_dir() and (path / "evidence.json").is_file():
        return path / "evidence.json"
    return None
