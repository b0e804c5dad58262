"""Parts compressed apart and joined (extractor.support.deflate) are zlib data of the parts one
after the other: what ``zlib.decompress`` reads back, whatever the parts' sizes and contents."""

from __future__ import annotations

import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.support.deflate import DeflatingWriter, adler32_combine, deflate, zlib_join

# repetitive text (long matches inside a part) and random bytes (stored blocks), empty parts included
_parts = st.lists(st.binary(max_size=3000) | st.text("ab,\n{}", max_size=6000).map(str.encode), max_size=6)


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=70_000), st.binary(max_size=70_000))
def test_combined_checksum_is_the_checksum_of_both(first, second):
    assert adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second)) == zlib.adler32(first + second)


@settings(max_examples=80, deadline=None)
@given(_parts)
def test_joined_parts_decompress_to_their_bytes(parts):
    assert zlib.decompress(zlib_join(deflate(p) for p in parts)) == b"".join(parts)


@settings(max_examples=80, deadline=None)
@given(_parts, st.lists(st.booleans(), min_size=6, max_size=6))
def test_the_writer_keeps_its_bytes_and_their_zlib_form(parts, elsewhere):
    writer = DeflatingWriter()
    for part, compressed_elsewhere in zip(parts, elsewhere):
        if compressed_elsewhere:
            writer.write_deflated(part, deflate(part))
        else:
            writer.write(part)
    assert writer.buffer.getvalue() == b"".join(parts)
    assert zlib.decompress(writer.zlib_data()) == b"".join(parts)


def test_a_large_checksum_sum_wraps_as_zlib_does():
    """Sums near the modulus (65521) on both halves: the combined value must still be reduced."""
    first, second = b"\xff" * 5552, b"\xff" * 65_520
    assert adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second)) == zlib.adler32(first + second)
