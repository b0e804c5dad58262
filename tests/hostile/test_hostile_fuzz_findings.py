"""What the fuzz pass found, each kept as a case of its own: a zip member without a name, an
encrypted member, a zip of nothing but links, a compressed debug section whose checksum is wrong,
an evidence file nested past the interpreter's recursion limit."""

from __future__ import annotations

import subprocess
import zipfile
import zlib

import pytest
from elftools.elf.elffile import ELFFile

from extractor.acquire import archives
from extractor.evidence.read import load_bundle
from extractor.errors import EvidenceFormatError, UserInputError
from extractor.structs.dwarf import DwarfReadError, read_layouts


def _zip(tmp_path, entries: list[tuple[zipfile.ZipInfo, bytes]]):
    path = tmp_path / "in.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for info, body in entries:
            zf.writestr(info, body)
    return path


def _encrypted(tmp_path):
    path = _zip(tmp_path, [(zipfile.ZipInfo("pkg/a.py"), b"A = 1\n")])
    data = bytearray(path.read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # local and central headers
        at = data.index(signature)
        data[at + flag_at] |= 0x1  # general purpose flag bit 0: encrypted
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("make, expected", [
    (lambda tmp: _zip(tmp, [(zipfile.ZipInfo(""), b"x")]), "has a member without a name"),
    (_encrypted, "has encrypted member 'pkg/a.py'"),
], ids=["nameless-member", "encrypted-member"])
def test_a_zip_the_standard_library_trips_on_is_refused_in_one_line(tmp_path, make, expected):
    archive = make(tmp_path)
    with pytest.raises(UserInputError, match=expected):
        archives.extract_zip(archive, tmp_path / "cache" / "tree")
    assert not (tmp_path / "cache" / "tree").exists()


def test_a_zip_of_nothing_but_links_is_an_empty_tree(tmp_path):
    link = zipfile.ZipInfo("pkg/link.py")
    link.external_attr = (0o120777 << 16)  # a symbolic link: never recreated from a zip
    archive = _zip(tmp_path, [(link, b"../../etc/passwd")])
    archives.extract_zip(archive, tmp_path / "cache" / "tree")
    assert list((tmp_path / "cache" / "tree").iterdir()) == []


def test_a_compressed_debug_section_with_a_wrong_checksum_is_a_read_error(tmp_path):
    # enough types that the assembler finds compressing .debug_info worth it
    (tmp_path / "t.c").write_text("".join(f"struct S{i} {{ int a{i}; char b; double c; }} s{i}_;\n" for i in range(40)))
    obj = tmp_path / "t.o"
    subprocess.run(["gcc", "-g", "-gz=zlib", "-c", str(tmp_path / "t.c"), "-o", str(obj)], check=True)
    with obj.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".debug_info")
        assert section.compressed
        start = section["sh_offset"]
        fh.seek(start)
        raw = fh.read(section["sh_size"])
    stream = raw[24:]  # after the Elf64_Chdr
    inflater = zlib.decompressobj()
    inflater.decompress(stream)
    end = start + 24 + len(stream) - len(inflater.unused_data)  # just past the stream's Adler-32
    data = bytearray(obj.read_bytes())
    data[end - 1] ^= 0xFF
    # declare one byte more than the stream holds, so that the reader consumes the whole stream
    declared = int.from_bytes(data[start + 8:start + 16], "little")
    data[start + 8:start + 16] = (declared + 1).to_bytes(8, "little")
    obj.write_bytes(bytes(data))
    with pytest.raises(DwarfReadError, match="incorrect data check"):
        read_layouts(obj)


def test_evidence_nested_past_the_recursion_limit_is_a_format_error(tmp_path):
    path = tmp_path / "evidence.json"
    path.write_text('{"schema_version": 1, "graph": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(EvidenceFormatError, match="nested too deeply"):
        load_bundle(path)

