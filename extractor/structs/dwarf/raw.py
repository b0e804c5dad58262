"""What the reader returns, and its one exception type."""

from __future__ import annotations

import dataclasses

from extractor.errors import ArchdiffError


class DwarfReadError(ArchdiffError):
    """An ELF that cannot be read, or carries no DWARF."""

    def __init__(self, path: str, code: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.code = code
        self.message = message


@dataclasses.dataclass(frozen=True, slots=True)
class RawMember:
    name: str  # "" for an anonymous member, the base's type name for a base sub-object
    type_name: str
    offset: int  # byte offset of the member (of its storage unit, for a bit-field)
    size: int  # bytes (of the storage unit, for a bit-field)
    align: int
    bit_offset: int = 0  # bit-fields: first bit inside the storage unit, LSB first
    bit_size: int = 0  # 0 when not a bit-field
    is_base: bool = False
    is_virtual_base: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class RawLayout:
    kind: str  # "struct" | "class" | "union"
    qualname: str
    size: int
    align: int
    explicit_align: bool  # DW_AT_alignment was present
    members: tuple[RawMember, ...]
    decl_file: str  # as DWARF spells it (absolute or relative to the CU's directory)
    decl_line: int
    language: str  # "c" | "c++"
    packed: bool
