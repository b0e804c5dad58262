"""archdiff's Python API: ``archdiff.load(path)``, ``archdiff.open_index(path)`` and the graph
queries (:mod:`archdiff.api`).

The names are imported on first use (PEP 562): ``archdiff.cli`` is in this package too, and a
command such as ``archdiff structs`` must not pay for the graph queries' imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archdiff.api import (DEFAULT_EDGES, FindAnswer, GraphIndex, HitsAnswer, LoadedEvidence, PathsAnswer,
                              callees, callers, find, load, open_index, reach, shortest_paths)

__all__ = ["LoadedEvidence", "load", "open_index", "shortest_paths", "callers", "callees", "reach", "find",
           "DEFAULT_EDGES", "GraphIndex", "PathsAnswer", "HitsAnswer", "FindAnswer"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("archdiff.api"), name)
    raise AttributeError(f"module 'archdiff' has no attribute {name!r}")
