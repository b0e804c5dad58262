"""Line-program headers: the file table that ``DW_AT_decl_file`` indexes (DWARF 2 to 5)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.forms import FORM_NAMES, uleb
from extractor.structs.dwarf.sections import Sections


# DWARF 5 file entries as GCC writes them: DW_LNCT_path as DW_FORM_line_strp, DW_LNCT_directory_index as DW_FORM_udata
GCC_FILE_FORMATS = [(1, "DW_FORM_line_strp"), (2, "DW_FORM_udata")]


class FileNames(Sequence[str]):
    """A DWARF 5 file table in GCC's forms, each name read and joined to its directory when
    first asked for: a unit's layouts name a few of its files (libpython: 91 tables of 6,700
    files, a few hundred names asked for)."""

    def __init__(self, reader: Sections, dirs: list[str], rows: list[tuple[int, int]]) -> None:
        self._reader = reader
        self._dirs = dirs
        self._rows = rows  # (.debug_line_str offset, directory index) per file
        self._names: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):  # an int index, as DW_AT_decl_file gives (no slices)
        name = self._names.get(index)
        if name is None:
            offset, dir_index = self._rows[index]
            name = self._reader.line_string(offset)
            dirs = self._dirs
            base = dirs[dir_index] if dir_index < len(dirs) else ""
            name = name if os.path.isabs(name) or not base else f"{base}/{name}"
            self._names[index] = name
        return name


def read_file_table(reader: Sections, offset: int) -> Sequence[str]:
    """The file names of the line-program header at ``offset`` in ``.debug_line`` (DWARF 2
    to 5), read directly: pyelftools' construct parser of these headers was a third of
    the time on libpython. Names are joined to their directory as pyelftools would."""
    data = reader.line_data
    order: Literal["little", "big"] = "little" if reader.little else "big"
    pos = offset
    length = int.from_bytes(data[pos:pos + 4], order)
    pos += 4
    offset_size = 4
    if length == 0xFFFFFFFF:
        offset_size = 8
        pos += 8
    version = int.from_bytes(data[pos:pos + 2], order)
    pos += 2
    if version >= 5:
        address_size = data[pos]
        pos += 2  # address_size, segment_selector_size
    else:
        address_size = 8
    pos += offset_size  # header_length
    pos += 1 + (1 if version >= 4 else 0) + 3  # min_inst_length, max_ops, is_stmt, base, range
    opcode_base = data[pos]
    pos += 1 + (opcode_base - 1)
    if version < 5:
        dirs = []
        while data[pos]:
            end = data.index(b"\0", pos)
            dirs.append(data[pos:end].decode("utf-8", "replace"))
            pos = end + 1
        pos += 1
        names = []
        while data[pos]:
            end = data.index(b"\0", pos)
            name = data[pos:end].decode("utf-8", "replace")
            index, pos = uleb(data, end + 1)
            _mtime, pos = uleb(data, pos)
            _size, pos = uleb(data, pos)
            base = dirs[index - 1] if 0 < index <= len(dirs) else ""
            names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
        return names

    def formats_at(pos):
        count = data[pos]
        pos += 1
        formats = []
        for _ in range(count):
            content, pos = uleb(data, pos)
            form, pos = uleb(data, pos)
            formats.append((content, FORM_NAMES.get(form, "")))
        return formats, pos

    def entries(pos, formats=None):
        if formats is None:
            formats, pos = formats_at(pos)
        n, pos = uleb(data, pos)
        rows = []
        for _ in range(n):
            row: dict[int, object] = {}
            for content, form_name in formats:
                # GCC's two forms inline (a path in .debug_line_str, a directory index), the rest
                # through _line_value: libpython's 91 tables hold 13,526 of these values
                if form_name == "DW_FORM_line_strp":
                    value = reader.line_string(int.from_bytes(data[pos:pos + offset_size], order))
                    pos += offset_size
                elif form_name == "DW_FORM_udata" and data[pos] < 0x80:
                    value = data[pos]
                    pos += 1
                else:
                    value, pos = _line_value(reader, data, pos, form_name, offset_size, address_size)
                row[content] = value
            rows.append(row)
        return rows, pos

    dir_rows, pos = entries(pos)
    dirs = [str(r.get(1, "")) for r in dir_rows]  # DW_LNCT_path
    formats, pos = formats_at(pos)
    if formats == GCC_FILE_FORMATS:
        n, pos = uleb(data, pos)
        paths: list[tuple[int, int]] = []
        for _ in range(n):
            path = int.from_bytes(data[pos:pos + offset_size], order)
            pos += offset_size
            if data[pos] < 0x80:
                paths.append((path, data[pos]))
                pos += 1
            else:
                index, pos = uleb(data, pos)
                paths.append((path, index))
        return FileNames(reader, dirs, paths)
    file_rows, pos = entries(pos, formats)
    names = []
    for row in file_rows:
        name = str(row.get(1, ""))
        index = row.get(2, 0)  # DW_LNCT_directory_index
        base = dirs[index] if isinstance(index, int) and 0 <= index < len(dirs) else ""
        names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
    return names

def _line_value(reader: Sections, data, pos, form, offset_size, address_size):
    order: Literal["little", "big"] = "little" if reader.little else "big"
    if form in ("DW_FORM_line_strp", "DW_FORM_strp"):
        at = int.from_bytes(data[pos:pos + offset_size], order)
        blob = reader.line_str_data if form == "DW_FORM_line_strp" else reader.str_data
        return blob[at:blob.index(b"\0", at)].decode("utf-8", "replace"), pos + offset_size
    if form == "DW_FORM_string":
        end = data.index(b"\0", pos)
        return data[pos:end].decode("utf-8", "replace"), end + 1
    if form in ("DW_FORM_udata",):
        return uleb(data, pos)
    widths = {"DW_FORM_data1": 1, "DW_FORM_data2": 2, "DW_FORM_data4": 4,
              "DW_FORM_data8": 8, "DW_FORM_data16": 16}
    if form in widths:
        width = widths[form]
        return int.from_bytes(data[pos:pos + width], order), pos + width
    if form == "DW_FORM_block":
        n, pos = uleb(data, pos)
        return None, pos + n
    raise DWARFError(f"unsupported line-table form {form or '?'}")

def file_table(reader: Sections, unit_offset: int) -> list[str]:
    """The file names of a unit's line program as pyelftools' parser reads them (the fallback)."""
    dwarf = reader.dwarf()
    program = dwarf.line_program_for_CU(dwarf.get_CU_at(unit_offset))
    if program is None:
        return []
    header = program.header
    dirs = [_text(d) for d in header["include_directory"]]
    version = header["version"]
    names = []
    for entry in header["file_entry"]:
        name = _text(entry.name)
        index = entry.dir_index
        if version < 5:
            base = dirs[index - 1] if 0 < index <= len(dirs) else ""
        else:
            base = dirs[index] if 0 <= index < len(dirs) else ""
        names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
    return names


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
