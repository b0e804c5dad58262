"""The public Python API that reaches a changed C++ entity (a struct layout, a torch operator, a
bound C++ function): "this ABI change affects ``LLM.generate``", stated with a witness chain.

Computed on one side's graph (the new release's for a change, the old one's for a removal) by
one backward walk for all the entities of a report (:func:`extractor.evidence.query.reached_by`),
from each entity's seeds (the entity, its methods, the functions implementing it) along ``binds``,
``calls``, ``launches`` and ``uses`` edges to the Python nodes whose ``api`` says public. vLLM's
graph has 48k nodes: one walk per row would pay for the shared part of the graph once per row.
"""

from __future__ import annotations

from collections.abc import Iterable

from comparator.records import ApiReach, ChainLink, ReachingApi
from extractor.evidence.index import index_of
from extractor.evidence.query import Reached, impact_seeds, public_python, python_nodes, reached_by
from extractor.evidence.read import Evidence

REACH_LIMIT = 5  # public APIs named per entity (the nearest); ``total`` counts them all


def reaching_apis(evidence: Evidence, nodes: Iterable[str]) -> dict[str, ApiReach]:
    """For each node id, the public Python API of ``evidence`` that reaches it (else the private
    Python callers farthest up the chains: where the graph stops). The graph is indexed only when there is something to look up; a
    second walk runs only for the entities no public API reaches."""
    wanted = sorted(set(nodes))
    if not wanted:
        return {}
    index = index_of(evidence)
    position = {nid: i for i, nid in enumerate(index.ids)}
    out = {nid: ApiReach("", (), 0, (), unresolved=f"no node {nid} in the graph of {evidence.system.name}")
           for nid in wanted if nid not in position}
    targets = [(position[nid], impact_seeds(index, position[nid])) for nid in wanted if nid in position]
    public = reached_by(index, targets, public_python(index), limit=REACH_LIMIT)
    alone = [t for t, reached in zip(targets, public) if not reached.hits]
    private = {r.target.id: r for r in reached_by(index, alone, python_nodes(index, public=False), limit=REACH_LIMIT,
                                                  farthest=True)}
    for reached in public:
        out[reached.target.id] = _api_reach(reached, private.get(reached.target.id))
    return out


def _api_reach(public: Reached, private: Reached | None) -> ApiReach:
    shown = public if public.hits or private is None else private
    witness = tuple(ChainLink(s.node.id, s.node.qualname, s.edge.kind, s.edge.path, s.edge.line)
                    if s.edge is not None else
                    ChainLink(s.node.id, s.node.qualname, "", s.node.path, s.node.line)
                    for s in (shown.hits[0].chain if shown.hits else ()))
    return ApiReach(public.target.id, _apis(public), public.total, witness,
                    _apis(private) if private is not None else ())


def _apis(reached: Reached) -> tuple[ReachingApi, ...]:
    return tuple(ReachingApi(h.node.id, h.node.qualname, h.depth, h.node.api, h.node.path, h.node.line)
                 for h in reached.hits)
