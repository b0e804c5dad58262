"""The DWARF sections of one ELF as bytes, and their string tables.

The bottom floor of the reader: it knows section bytes and nothing of DIEs, so every module above
(line tables, the DIE decoder, the walk) can use it without reaching back up.
"""

from __future__ import annotations


class Sections:
    """``.debug_info``, ``.debug_abbrev``, the string tables and ``.debug_line`` as ``bytes``.

    ``dwarf`` is pyelftools' ``DWARFInfo``: it still parses the CU headers and, as a fallback,
    line-program headers.
    """

    def __init__(self, dwarf, little: bool) -> None:
        self.dwarf = dwarf
        self.little = little
        self.data = dwarf.debug_info_sec.stream.getbuffer().tobytes()
        self.abbrev_data = dwarf.debug_abbrev_sec.stream.getbuffer().tobytes()
        self.strings: dict[int, str] = {}  # .debug_str offset -> string, as read so far
        self._line_strings: dict[int, str] = {}
        sec = dwarf.debug_str_sec
        self.str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_str_sec
        self.line_str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_sec
        self.line_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_str_offsets_sec
        self._str_offsets = sec.stream.getbuffer().tobytes() if sec else b""

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
