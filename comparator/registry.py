"""The evidence kinds the comparator loops over, in report order (the extractor's ``STEPS`` for
comparison). A new kind is one package under ``comparator/kinds`` and one line here."""

from __future__ import annotations

from comparator.kind import AnyKind
from comparator.kinds import api, concepts, graph, layers, structs, symbols, telemetry

KINDS: tuple[AnyKind, ...] = (
    layers.KIND,
    structs.KIND,
    telemetry.KIND,
    graph.KIND,
    concepts.KIND,
    symbols.KIND,
    api.KIND,
)
