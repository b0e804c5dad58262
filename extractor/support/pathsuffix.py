"""Files by the trailing parts of their paths: how an ``#include "a/b.h"`` or an ``import
"x/y.proto"`` is looked up among a system's files when it is not found beside the file that names it."""

from __future__ import annotations

import collections
from collections.abc import Iterable


def by_suffix(paths: Iterable[str]) -> dict[str, list[str]]:
    """Every trailing part of each path (``a/b/c.h``, ``b/c.h``, ``c.h``) -> the paths that end so,
    in the order given."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for path in paths:
        parts = path.split("/")
        for start in range(len(parts)):
            out["/".join(parts[start:])].append(path)
    return dict(out)
