"""Protocol Buffers: the .proto reader and the protobuf part of a system's symbol graph.

Entry points: :data:`STEP` for the pipeline; :func:`scan_proto` (per file, in workers) and
:func:`build_proto_graph` (per system). The reader is archdiff's own (:mod:`extractor.proto.read`):
no grammar wheel covers the language.
"""

from extractor.model import Language, ParsedFile, Step
from extractor.proto.facts import ProtoFacts
from extractor.proto.graph import build_proto_graph, extract_proto_graph, proto_id
from extractor.proto.read import read_proto


def scan_proto(parsed: ParsedFile) -> ProtoFacts:
    """The facts of one .proto file: read here, from its bytes (no parse is shared with another step)."""
    return read_proto(parsed.data)


STEP = Step(name="proto", scanners={Language.PROTO: scan_proto}, extract=extract_proto_graph, version="2")

__all__ = ["STEP", "ProtoFacts", "build_proto_graph", "extract_proto_graph", "proto_id", "read_proto", "scan_proto"]
