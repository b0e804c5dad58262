"""zlib data of a byte string compressed in parts, each where it was made (pigz's way).

The whole-bundle memo is ``evidence.json`` compressed (zlib, level 1): on vLLM 50 MB, 0.13 s of
the driver's CPU after the bundle is written, serial time. Most of those bytes are the graph's
nodes and edges, which extractor.support.forkmap's children encode anyway: each child compresses
what it encoded (:func:`deflate`) and the driver only joins the parts (:class:`DeflatingWriter`).

A part is a raw deflate stream ended by a sync flush: it stops on a byte boundary without a final
block, so parts compressed apart follow one another as one valid stream (each part's
back-references stay inside it). The zlib frame around them is a two-byte header, an empty final
block, and the Adler-32 of the whole, combined from the parts' own checksums as zlib's
``adler32_combine`` does: ``zlib.decompress`` reads the result like ``zlib.compress``'s (the bytes
differ; they are a cache's, never evidence).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable

from zlib_ng import gzip_ng, zlib_ng

LEVEL = 1  # as the fact cache compresses: the memo is written once per cold run, read by warm ones
# zlib-ng writes and reads zlib's format in a third to a half of zlib's time at this level (vLLM's
# scan results: 0.31 -> 0.12 CPU s in the workers, 13% larger; evidence.json's parts 0.11 -> 0.045 s).
# What it writes differs from zlib's bytes: a cache's, never evidence.
ZlibError: type[Exception] = getattr(zlib_ng, "error")  # noqa: B009 (its stub declares an instance)
decompress = zlib_ng.decompress
# gzip's reader through zlib-ng, with gzip's errors (archives: vLLM's sdist 0.080 -> 0.036 CPU s)
GzipFile = gzip_ng.GzipFile


def compress(data: bytes | bytearray | memoryview, level: int = LEVEL) -> bytes:
    """zlib data of ``data`` (``zlib.decompress`` reads it)."""
    return zlib_ng.compress(data, level)

_HEADER = b"\x78\x01"  # deflate, 32 KB window, "fastest" level: what zlib.compress(data, 1) writes
_FINAL_BLOCK = b"\x03\x00"  # an empty fixed-Huffman block with the final bit set
_ADLER_BASE = 65521


@dataclasses.dataclass(frozen=True, slots=True)
class Deflated:
    """One part: raw deflate ending on a byte boundary, and the checksum and length of what it holds."""

    data: bytes
    adler: int  # Adler-32 of the uncompressed part
    size: int  # its length in bytes


def deflate(part: bytes | bytearray) -> Deflated:
    """``part`` compressed on its own, ready to be joined with others by :func:`zlib_join`."""
    compressor = zlib_ng.compressobj(LEVEL, zlib_ng.DEFLATED, -15)
    return Deflated(compressor.compress(part) + compressor.flush(zlib_ng.Z_SYNC_FLUSH), zlib_ng.adler32(part),
                    len(part))


def adler32_combine(first: int, second: int, second_size: int) -> int:
    """The Adler-32 of two byte strings one after the other, from theirs (zlib's ``adler32_combine``)."""
    rem = second_size % _ADLER_BASE
    low = (first & 0xFFFF) + (second & 0xFFFF) + _ADLER_BASE - 1
    high = (rem * (first & 0xFFFF)) % _ADLER_BASE + (first >> 16) + (second >> 16) + _ADLER_BASE - rem
    return (low % _ADLER_BASE) | ((high % _ADLER_BASE) << 16)


def zlib_join(parts: Iterable[Deflated]) -> bytes:
    """zlib data of the parts' bytes one after the other."""
    checksum, streams = 1, []  # 1: the Adler-32 of nothing
    for part in parts:
        checksum = adler32_combine(checksum, part.adler, part.size)
        streams.append(part.data)
    return b"".join((_HEADER, *streams, _FINAL_BLOCK, checksum.to_bytes(4, "big")))


class DeflatingWriter:
    """A buffer that keeps the zlib form of what is written into it: bytes written here are
    compressed here (in one part up to the next part compressed elsewhere, or the end); a part
    compressed elsewhere is written with its :class:`Deflated` and only joined."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self._parts: list[Deflated] = []
        self._pending = bytearray()

    def write(self, data: bytes | bytearray) -> None:
        self.buffer.write(data)
        self._pending += data

    def write_deflated(self, data: bytes | bytearray, deflated: Deflated) -> None:
        self._compress_pending()
        self.buffer.write(data)
        self._parts.append(deflated)

    def zlib_data(self) -> bytes:
        """Everything written so far, as zlib data."""
        self._compress_pending()
        return zlib_join(self._parts)

    def _compress_pending(self) -> None:
        if self._pending:
            self._parts.append(deflate(self._pending))
            self._pending = bytearray()
