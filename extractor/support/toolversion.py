"""archdiff's own version, as the installed distribution states it (pyproject.toml's ``version``):
what ``archdiff --version`` prints and every gate output names, so a CI job can pin and log it."""

from __future__ import annotations

import functools


@functools.cache
def archdiff_version() -> str:
    from importlib import metadata  # ~20 ms of import: paid by the commands that print the version

    try:
        return metadata.version("archdiff")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
