"""DWARF forms, the attributes and tags this reader knows, and LEB128.

Each form is mapped to a small integer kind so that the DIE decoder (:mod:`.die`) is one flat
if-chain; names come from pyelftools' enum tables.
"""

from __future__ import annotations

from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_FORM, ENUM_DW_TAG

FIXED, ULEB, SLEB, CSTR, BLOCK1, BLOCK2, BLOCK4, BLOCKU, OFFSET, ADDR, PRESENT, \
    IMPLICIT, INDIRECT, REF_ADDR = range(14)

FORMS: dict[str, tuple[int, int]] = {
    "DW_FORM_addr": (ADDR, 0),
    "DW_FORM_data1": (FIXED, 1), "DW_FORM_ref1": (FIXED, 1), "DW_FORM_flag": (FIXED, 1),
    "DW_FORM_strx1": (FIXED, 1), "DW_FORM_addrx1": (FIXED, 1),
    "DW_FORM_data2": (FIXED, 2), "DW_FORM_ref2": (FIXED, 2), "DW_FORM_strx2": (FIXED, 2),
    "DW_FORM_addrx2": (FIXED, 2),
    "DW_FORM_strx3": (FIXED, 3), "DW_FORM_addrx3": (FIXED, 3),
    "DW_FORM_data4": (FIXED, 4), "DW_FORM_ref4": (FIXED, 4), "DW_FORM_strx4": (FIXED, 4),
    "DW_FORM_addrx4": (FIXED, 4), "DW_FORM_ref_sup4": (FIXED, 4),
    "DW_FORM_data8": (FIXED, 8), "DW_FORM_ref8": (FIXED, 8), "DW_FORM_ref_sig8": (FIXED, 8),
    "DW_FORM_ref_sup8": (FIXED, 8),
    "DW_FORM_data16": (FIXED, 16),
    "DW_FORM_sdata": (SLEB, 0),
    "DW_FORM_udata": (ULEB, 0), "DW_FORM_ref_udata": (ULEB, 0), "DW_FORM_strx": (ULEB, 0),
    "DW_FORM_addrx": (ULEB, 0), "DW_FORM_loclistx": (ULEB, 0), "DW_FORM_rnglistx": (ULEB, 0),
    "DW_FORM_GNU_addr_index": (ULEB, 0), "DW_FORM_GNU_str_index": (ULEB, 0),
    "DW_FORM_string": (CSTR, 0),
    "DW_FORM_block1": (BLOCK1, 0), "DW_FORM_block2": (BLOCK2, 0), "DW_FORM_block4": (BLOCK4, 0),
    "DW_FORM_block": (BLOCKU, 0), "DW_FORM_exprloc": (BLOCKU, 0),
    "DW_FORM_strp": (OFFSET, 0), "DW_FORM_line_strp": (OFFSET, 0),
    "DW_FORM_sec_offset": (OFFSET, 0), "DW_FORM_GNU_ref_alt": (OFFSET, 0),
    "DW_FORM_GNU_strp_alt": (OFFSET, 0), "DW_FORM_strp_sup": (OFFSET, 0),
    "DW_FORM_ref_addr": (REF_ADDR, 0),
    "DW_FORM_flag_present": (PRESENT, 0),
    "DW_FORM_implicit_const": (IMPLICIT, 0),
    "DW_FORM_indirect": (INDIRECT, 0),
}
CU_REFS = {"DW_FORM_ref1", "DW_FORM_ref2", "DW_FORM_ref4", "DW_FORM_ref8", "DW_FORM_ref_udata"}
# how value() reads a form's integer: a string table offset or index, or a type signature
STR_FORMS = {"DW_FORM_ref_sig8": "sig8", "DW_FORM_strp": "str", "DW_FORM_line_strp": "line_str",
              "DW_FORM_strx": "strx", "DW_FORM_strx1": "strx", "DW_FORM_strx2": "strx",
              "DW_FORM_strx3": "strx", "DW_FORM_strx4": "strx"}

# Attributes kept; everything else is skipped without being stored.
KEEP = {
    "DW_AT_name": "name", "DW_AT_byte_size": "byte_size", "DW_AT_type": "type",
    "DW_AT_data_member_location": "loc", "DW_AT_data_bit_offset": "data_bit_offset",
    "DW_AT_bit_offset": "bit_offset", "DW_AT_bit_size": "bit_size",
    "DW_AT_declaration": "declaration", "DW_AT_decl_file": "decl_file",
    "DW_AT_decl_line": "decl_line", "DW_AT_alignment": "alignment", "DW_AT_sibling": "sibling",
    "DW_AT_upper_bound": "upper_bound", "DW_AT_count": "count", "DW_AT_encoding": "encoding",
    "DW_AT_external": "external", "DW_AT_virtuality": "virtuality",
    "DW_AT_language": "language", "DW_AT_comp_dir": "comp_dir",
    "DW_AT_str_offsets_base": "str_offsets_base", "DW_AT_signature": "signature",
    "DW_AT_containing_type": "containing_type", "DW_AT_specification": "specification",
    "DW_AT_stmt_list": "stmt_list",
}

AGGREGATES = {"DW_TAG_structure_type": "struct", "DW_TAG_class_type": "class",
              "DW_TAG_union_type": "union"}
NAMED_TYPES = {"DW_TAG_typedef", "DW_TAG_enumeration_type", "DW_TAG_base_type",
               "DW_TAG_unspecified_type", *AGGREGATES}
C_LANGS = {0x1, 0x2, 0xC, 0x1D, 0x2C, 0x2D}  # C89, C, C99, C11, C17, ... (DW_LANG_*)
MEMBER_TAGS = {"DW_TAG_member", "DW_TAG_inheritance"}

TAG_NAMES = {v: k for k, v in ENUM_DW_TAG.items()}
AT_NAMES = {v: k for k, v in ENUM_DW_AT.items()}
FORM_NAMES = {v: k for k, v in ENUM_DW_FORM.items()}


def uleb(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def sleb(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            if b & 0x40:
                value -= 1 << shift
            return value, pos
