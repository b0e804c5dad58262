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
        self._strings: dict[tuple[str, int], str] = {}
        sec = dwarf.debug_str_sec
        self.str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_str_sec
        self.line_str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_sec
        self.line_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_str_offsets_sec
        self._str_offsets = sec.stream.getbuffer().tobytes() if sec else b""

    def string(self, table: str, value: int, offset_size: int, str_offsets_base: int) -> str:
        """The string a ``DW_FORM_strp``/``line_strp``/``strx*`` value names."""
        if table == "strx":
            at = str_offsets_base + value * offset_size
            value = int.from_bytes(self._str_offsets[at:at + offset_size], "little" if self.little else "big")
            table = "str"
        key = (table, value)
        hit = self._strings.get(key)
        if hit is None:
            blob = self.str_data if table == "str" else self.line_str_data
            end = blob.index(b"\0", value)
            hit = blob[value:end].decode("utf-8", "replace")
            self._strings[key] = hit
        return hit
