"""A file's scan result as bytes: what a worker sends back, what the fact cache keeps, and the
typed facts the steps read, decoded only when a step asks for them.

A worker encodes each step's facts on its own (msgpack, :mod:`msgspec`) and wraps them in one
:class:`FileResult`; the driver reads the wrapper (lines, diagnostics, which steps found something)
and leaves every step's facts as raw bytes until that step reads them. A scanner's facts are typed
by its own return annotation (``def scan_rust(parsed) -> RustFacts | None``): a ``msgspec.Struct``
comes back as that Struct, validated on the way in; plain JSON-like values (dicts, lists) come back
as dicts and lists, as they did through JSON. Measured on vLLM's 2,466 scanned files, the bytes are
about a third of the JSON they replace and decode several times faster than they unpickle.

A result crosses the process boundary and sits in the fact cache *packed* (:func:`pack_result`:
zlib, level 1). The facts repeat themselves (scopes, qualified names, imported modules): vLLM's
33.6 MB of results pack into 7.6 MB, compressed by the workers in parallel rather than by the
driver on its way into the cache (0.27 s of zlib in the driver, where unpacking them is 0.1 s; the
scan's driver CPU went from 1.51 to 1.35 s, medians of 3 cold -j2 runs), and the cache stores the
packed bytes as they came. A local worker sends the plain bytes too
(:func:`pack_result_with_plain`), so that the driver reads them without unpacking.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from extractor.model import Language, Step
from extractor.support import deflate

_ENCODER = msgspec.msgpack.Encoder()
_PLAIN = msgspec.msgpack.Decoder()


class FileResult(msgspec.Struct, array_like=True, frozen=True):
    """One file's scan: its line count, its own diagnostics, and each step's encoded facts."""

    lines: int
    # (line, code, message, severity): see extractor.model.Diagnostic
    diagnostics: tuple[tuple[int, str, str, str], ...] = ()
    facts: dict[str, msgspec.Raw] = {}
    # True when the worker crashed or timed out: never cached, so a later run tries the file again
    transient: bool = False

    def without_facts(self) -> FileResult:
        """This result once its facts are decoded (:meth:`FileFacts.decode_all`): lines and
        diagnostics are all a run still reads. Let go as each result is decoded, the encoded facts
        (vLLM: 33 MB) leave their memory to the next result's instead of adding to it."""
        return msgspec.structs.replace(self, facts={})


_RESULT = msgspec.msgpack.Decoder(FileResult)
# zlib's first byte at every level; a plain result begins with a msgpack array header (0x9N), never this
_PACKED = 0x78
_WITH_PLAIN = 0x00  # neither of those: a packed result followed by its plain bytes


def encode_result(lines: int, diagnostics: Sequence[Sequence[Any]], facts: Mapping[str, Any],
                  transient: bool = False) -> bytes:
    """The bytes of one file's result; ``facts``: step name -> what its scanner returned."""
    raw: dict[str, msgspec.Raw] = {}
    rewritten: dict[str, list[str]] = {}  # what had to be written otherwise -> the steps it was in
    for name, value in facts.items():
        try:
            raw[name] = msgspec.Raw(_ENCODER.encode(value))
        except (UnicodeEncodeError, OverflowError):
            changed: set[str] = set()
            raw[name] = msgspec.Raw(_ENCODER.encode(_encodable(
                msgspec.to_builtins(value, builtin_types=(bytes, bytearray, memoryview)), changed)))
            for change in sorted(changed):
                rewritten.setdefault(change, []).append(name)
    notes = [(d[0], d[1], d[2], d[3]) for d in diagnostics]
    for change, names in rewritten.items():
        code, message = _REWRITTEN[change]
        notes.append((0, code, f"{message} in the facts of {', '.join(names)}", "info"))
    return _ENCODER.encode(FileResult(lines, tuple(notes), raw, transient))


_REWRITTEN = {
    "integers": ("integers-as-text",
                 "an integer beyond 64 bits (msgpack cannot carry it): written as its decimal text"),
    "surrogates": ("surrogates-escaped", "a string holds lone surrogates (UTF-8 cannot encode them): "
                   "written as \\uXXXX escapes"),
}
_MSGPACK_INTS = range(-2 ** 63, 2 ** 64)


def _encodable(value: Any, changed: set[str]) -> Any:
    """``value`` (plain data) in a form msgpack carries, adding to ``changed`` what had to be
    written otherwise: every lone surrogate of its strings as a ``\\uXXXX`` escape (Python reads
    ``"\\ud800"`` in a string literal as one, and UTF-8, msgpack's strings and evidence.json's,
    has no way to carry it: litellm's base_utils.py); every integer outside msgpack's 64 bits as
    its decimal text, exact (scipy's ``_fixed_default_rng(seed=1638083107694713882823079058616272161)``,
    a parameter default the metrics scanner keeps). Either used to fail the whole file as
    unparsable, every other kind's facts with it."""
    if isinstance(value, str):
        escaped = value.encode("utf-8", "backslashreplace").decode("utf-8")
        if escaped != value:
            changed.add("surrogates")
        return escaped
    if isinstance(value, int) and value not in _MSGPACK_INTS:
        changed.add("integers")
        return str(value)
    if isinstance(value, (list, tuple)):  # to_builtins keeps tuples
        return [_encodable(v, changed) for v in value]
    if isinstance(value, dict):
        return {_encodable(k, changed): _encodable(v, changed) for k, v in value.items()}
    return value


def pack_result(data: bytes) -> bytes:
    """A result as workers send it and the fact cache keeps it (:func:`decode_result` reads both)."""
    return deflate.compress(data)


def pack_result_with_plain(data: bytes) -> bytes:
    """A result as a local worker sends it: the packed bytes the fact cache keeps
    (:func:`stored_form`) and the plain bytes the driver decodes, so that the driver does not
    decompress what a worker has just compressed. The pipe between processes on one machine
    carries the 34 MB of vLLM's plain results in less CPU than zlib takes to restore them from
    7.6 MB (0.12 s of the driver's time in the pool's window, which with many workers sets the
    window's length); a result that crosses a network (Ray) stays packed alone."""
    packed = pack_result(data)
    return bytes((_WITH_PLAIN,)) + len(packed).to_bytes(4, "little") + packed + data


def _plain_from(data: bytes) -> int:
    """Where the plain bytes of a :func:`pack_result_with_plain` result begin (0: it has none)."""
    if data[:1] != bytes((_WITH_PLAIN,)):
        return 0
    return 5 + int.from_bytes(data[1:5], "little")


def stored_form(data: bytes) -> bytes:
    """What the fact cache keeps of a result: its packed bytes."""
    plain = _plain_from(data)
    return data[5:plain] if plain else data


def decode_result(data: bytes) -> FileResult:
    """The wrapper of one file's result, packed, plain or both (the facts stay encoded);
    ValueError if ``data`` is not one."""
    try:
        plain = _plain_from(data)
        if plain:
            return _RESULT.decode(memoryview(data)[plain:])
        return _RESULT.decode(deflate.decompress(data) if data[:1] == bytes((_PACKED,)) else data)
    except (msgspec.DecodeError, msgspec.ValidationError, deflate.ZlibError) as err:
        raise ValueError(f"not a scan result: {err}") from None


Decode = Callable[[msgspec.Raw], Any]


def fact_decoders(steps: Sequence[Step[Any]]) -> dict[Language, dict[str, Decode]]:
    """For each language, each step's decoder of its scanner's facts (typed by the scanner's
    return annotation when it names a msgspec Struct, plain values otherwise)."""
    out: dict[Language, dict[str, Decode]] = {}
    for step in steps:
        for language, scanner in step.scanners.items():
            out.setdefault(language, {})[step.name] = _decoder_for(scanner)
    return out


def _decoder_for(scanner: Callable[..., Any]) -> Decode:
    facts_type = _facts_type(scanner)
    if facts_type is None:
        return _PLAIN.decode
    return msgspec.msgpack.Decoder(facts_type).decode


def _facts_type(scanner: Callable[..., Any]) -> Any:
    """The Struct type a scanner returns (``T`` of ``-> T`` or ``-> T | None``), or None."""
    try:
        returned = typing.get_type_hints(scanner).get("return")
    except Exception:  # noqa: BLE001 (an annotation that does not resolve: decode plain values)
        return None
    options = [t for t in typing.get_args(returned) if t is not type(None)] if typing.get_args(returned) else [returned]
    typed = [t for t in options if isinstance(t, type) and issubclass(t, msgspec.Struct)]
    return typed[0] if len(typed) == 1 and len(options) == 1 else None


class FileFacts(Mapping[str, Any]):
    """Step name -> that step's facts for one file, decoded on first use and kept."""

    __slots__ = ("_raw", "_decoders", "_decoded")

    def __init__(self, raw: Mapping[str, msgspec.Raw], decoders: Mapping[str, Decode]) -> None:
        self._raw = raw
        self._decoders = decoders
        self._decoded: dict[str, Any] = {}

    def __getitem__(self, step: str) -> Any:
        try:
            return self._decoded[step]
        except KeyError:
            pass
        raw = self._raw[step]
        value = self._decoders.get(step, _PLAIN.decode)(raw)
        self._decoded[step] = value
        return value

    def decode_all(self, later: frozenset[str] = frozenset()) -> None:
        """Every step's facts decoded now, but those of the steps in ``later`` (decoded on first
        use, by whoever reads them: a forked child, extractor.run.compute), and the encoded ones
        let go: a :class:`msgspec.Raw` still holds the whole result it was cut from (vLLM: 33 MB
        of results, after the scan), so the facts left encoded keep a copy of their own bytes."""
        settled: dict[str, Any] = {}
        for step, raw in self._raw.items():
            settled[step] = raw.copy() if step in later else self[step]
        self._raw = settled  # the same steps, for iter, len and in; the decoded are read from _decoded

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, step: object) -> bool:
        return step in self._raw

    def __repr__(self) -> str:
        return f"FileFacts({sorted(self._raw)})"
