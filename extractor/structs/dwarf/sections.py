"""The DWARF sections of one ELF as bytes, and their string tables.

The bottom floor of the reader: it knows section bytes and nothing of DIEs, so every module above
(line tables, the DIE decoder, the walk) can use it without reaching back up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Sections:
    """``.debug_info``, ``.debug_abbrev``, the string tables and ``.debug_line`` as ``bytes``
    (keyed by section name in ``data``; ``b""`` for one the file lacks).

    ``dwarf`` builds pyelftools' ``DWARFInfo`` over the same bytes, once, when first called: its
    line-program parser is the fallback of :mod:`.lines`.
    """

    def __init__(self, data: dict[str, bytes], little: bool, dwarf: Callable[[], Any]) -> None:
        self.dwarf = dwarf
        self.little = little
        self.data = data[".debug_info"]
        self.abbrev_data = data[".debug_abbrev"]
        self.str_data = data[".debug_str"]
        self.line_str_data = data[".debug_line_str"]
        self.line_data = data[".debug_line"]
        self._str_offsets = data[".debug_str_offsets"]
        self.strings: dict[int, str] = {}  # .debug_str offset -> string, as read so far
        self._line_strings: dict[int, str] = {}

    def string(self, offset: int) -> str:
        """The ``.debug_str`` string at ``offset`` (``DW_FORM_strp``)."""
        hit = self.strings.get(offset)
        if hit is None:
            hit = self.str_data[offset:self.str_data.index(0, offset)].decode("utf-8", "replace")
            self.strings[offset] = hit
        return hit

    def line_string(self, offset: int) -> str:
        """The ``.debug_line_str`` string at ``offset`` (``DW_FORM_line_strp``)."""
        hit = self._line_strings.get(offset)
        if hit is None:
            blob = self.line_str_data
            hit = blob[offset:blob.index(0, offset)].decode("utf-8", "replace")
            self._line_strings[offset] = hit
        return hit

    def string_offset(self, index: int, offset_size: int, base: int) -> int:
        """The ``.debug_str`` offset of a unit's string number ``index`` (``DW_FORM_strx*``)."""
        at = base + index * offset_size
        return int.from_bytes(self._str_offsets[at:at + offset_size], "little" if self.little else "big")
