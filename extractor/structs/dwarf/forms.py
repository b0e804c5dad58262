"""DWARF forms, the attributes and tags this reader knows, and LEB128.

Each form is mapped to a small integer kind that the abbreviation compiler (:mod:`.abbrev`)
turns into decoding plans. The codes of the tags, attributes and forms named here are written
out (DWARF 5, section 7): pyelftools' enum tables hold the same numbers (a test compares them),
but importing them imports its construct library too.
"""

from __future__ import annotations

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

FORM_CODES = {
    "DW_FORM_addr": 0x01, "DW_FORM_block2": 0x03, "DW_FORM_block4": 0x04, "DW_FORM_data2": 0x05,
    "DW_FORM_data4": 0x06, "DW_FORM_data8": 0x07, "DW_FORM_string": 0x08, "DW_FORM_block": 0x09,
    "DW_FORM_block1": 0x0A, "DW_FORM_data1": 0x0B, "DW_FORM_flag": 0x0C, "DW_FORM_sdata": 0x0D,
    "DW_FORM_strp": 0x0E, "DW_FORM_udata": 0x0F, "DW_FORM_ref_addr": 0x10, "DW_FORM_ref1": 0x11,
    "DW_FORM_ref2": 0x12, "DW_FORM_ref4": 0x13, "DW_FORM_ref8": 0x14, "DW_FORM_ref_udata": 0x15,
    "DW_FORM_indirect": 0x16, "DW_FORM_sec_offset": 0x17, "DW_FORM_exprloc": 0x18,
    "DW_FORM_flag_present": 0x19, "DW_FORM_strx": 0x1A, "DW_FORM_addrx": 0x1B, "DW_FORM_ref_sup4": 0x1C,
    "DW_FORM_strp_sup": 0x1D, "DW_FORM_data16": 0x1E, "DW_FORM_line_strp": 0x1F, "DW_FORM_ref_sig8": 0x20,
    "DW_FORM_implicit_const": 0x21, "DW_FORM_loclistx": 0x22, "DW_FORM_rnglistx": 0x23,
    "DW_FORM_ref_sup8": 0x24, "DW_FORM_strx1": 0x25, "DW_FORM_strx2": 0x26, "DW_FORM_strx3": 0x27,
    "DW_FORM_strx4": 0x28, "DW_FORM_addrx1": 0x29, "DW_FORM_addrx2": 0x2A, "DW_FORM_addrx3": 0x2B,
    "DW_FORM_addrx4": 0x2C, "DW_FORM_GNU_addr_index": 0x1F01, "DW_FORM_GNU_str_index": 0x1F02,
    "DW_FORM_GNU_ref_alt": 0x1F20, "DW_FORM_GNU_strp_alt": 0x1F21,
}
AT_CODES = {
    "DW_AT_sibling": 0x01, "DW_AT_name": 0x03, "DW_AT_byte_size": 0x0B, "DW_AT_bit_offset": 0x0C,
    "DW_AT_bit_size": 0x0D, "DW_AT_stmt_list": 0x10, "DW_AT_language": 0x13, "DW_AT_comp_dir": 0x1B,
    "DW_AT_containing_type": 0x1D, "DW_AT_upper_bound": 0x2F, "DW_AT_count": 0x37,
    "DW_AT_data_member_location": 0x38, "DW_AT_decl_file": 0x3A, "DW_AT_decl_line": 0x3B,
    "DW_AT_declaration": 0x3C, "DW_AT_encoding": 0x3E, "DW_AT_external": 0x3F, "DW_AT_specification": 0x47,
    "DW_AT_type": 0x49, "DW_AT_virtuality": 0x4C, "DW_AT_signature": 0x69, "DW_AT_data_bit_offset": 0x6B,
    "DW_AT_str_offsets_base": 0x72, "DW_AT_alignment": 0x88,
}
TAG_CODES = {
    "DW_TAG_array_type": 0x01, "DW_TAG_class_type": 0x02, "DW_TAG_enumeration_type": 0x04,
    "DW_TAG_formal_parameter": 0x05, "DW_TAG_member": 0x0D, "DW_TAG_pointer_type": 0x0F,
    "DW_TAG_reference_type": 0x10, "DW_TAG_structure_type": 0x13, "DW_TAG_subroutine_type": 0x15,
    "DW_TAG_typedef": 0x16, "DW_TAG_union_type": 0x17, "DW_TAG_unspecified_parameters": 0x18,
    "DW_TAG_inheritance": 0x1C, "DW_TAG_ptr_to_member_type": 0x1F, "DW_TAG_subrange_type": 0x21,
    "DW_TAG_base_type": 0x24, "DW_TAG_const_type": 0x26, "DW_TAG_volatile_type": 0x35,
    "DW_TAG_restrict_type": 0x37, "DW_TAG_namespace": 0x39, "DW_TAG_unspecified_type": 0x3B,
    "DW_TAG_rvalue_reference_type": 0x42, "DW_TAG_atomic_type": 0x47,
}
# Any other tag is named by its number (``DW_TAG_0x2e``): the walk only jumps over it
TAG_NAMES = {code: name for name, code in TAG_CODES.items()}
AT_NAMES = {code: name for name, code in AT_CODES.items()}
FORM_NAMES = {code: name for name, code in FORM_CODES.items()}


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
