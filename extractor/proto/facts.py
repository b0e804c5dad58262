"""What the .proto reader returns for one file, as typed records (msgspec Structs).

:func:`extractor.proto.read.read_proto` returns a :class:`ProtoFacts`; the scanner hands it to the
driver as it is, and the graph step reads it back as these types. Names are as written: a message
or enum is qualified within the file's package (``Outer.Inner``), a type reference is the text of
the reference (``InferParameter``, ``Outer.Inner``, ``.inference.ModelConfig``), resolved only by
the graph step, which knows the other files of the system. Nothing depends on the file's path
(facts are cached by content hash).
"""

from __future__ import annotations

import msgspec


class ProtoField(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A field of a message (or of an ``extend`` block): its number is the wire contract."""

    name: str
    line: int  # of the name
    number: int
    type: str  # as written; a map field's value type; a group's own message name
    label: str = ""  # "repeated", "optional", "required"; "" for a singular proto3 field
    key: str = ""  # a map field's key type (a scalar)
    oneof: str = ""  # the oneof it belongs to
    group: bool = False  # a proto2 group (the field of the nested message ``type``)
    deprecated: bool = False
    doc: str = ""


class ProtoEnumValue(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    name: str
    line: int
    number: int
    deprecated: bool = False
    doc: str = ""


class ProtoDefinition(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A message or an enum, nested ones flattened: ``qual`` names the path of enclosing messages."""

    kind: str  # "message", "enum"
    qual: str  # within the package: `ModelInferRequest.InferInputTensor`
    line: int  # of the name
    doc: str = ""
    deprecated: bool = False
    fields: tuple[ProtoField, ...] = ()  # a message's own fields, in source order (oneof members too)
    values: tuple[ProtoEnumValue, ...] = ()  # an enum's values
    # `reserved` numbers and names as written: "8", "10..12", "40..max", '"old_field"' (names quoted)
    reserved: tuple[str, ...] = ()


class ProtoExtension(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """An ``extend Extendee { ... }`` block: fields added to another message, named in ``scope``."""

    scope: str  # the message it is written in (within the package), "" at the top of the file
    extendee: str  # as written
    line: int
    fields: tuple[ProtoField, ...] = ()


class ProtoRpc(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    name: str
    line: int
    request: str  # as written
    response: str
    client_streaming: bool = False  # `stream` before the request type
    server_streaming: bool = False  # `stream` before the response type
    deprecated: bool = False
    doc: str = ""


class ProtoService(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    name: str
    line: int
    rpcs: tuple[ProtoRpc, ...] = ()
    deprecated: bool = False
    doc: str = ""


class ProtoFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """Everything one .proto file contributes to the graph; ``error`` when the file is not read."""

    syntax: str = ""  # "proto2", "proto3", "editions"; "" when the file does not say (proto2)
    edition: str = ""  # `edition = "2023";`
    package: str = ""
    package_line: int = 0
    imports: tuple[tuple[str, str, int], ...] = ()  # (path as written, "public"/"weak"/"", line)
    definitions: tuple[ProtoDefinition, ...] = ()  # messages and enums, outer before inner
    services: tuple[ProtoService, ...] = ()
    extensions: tuple[ProtoExtension, ...] = ()
    # (line, message) of the first syntax error: the file's definitions are then not read at all
    error: tuple[int, str] | None = None
