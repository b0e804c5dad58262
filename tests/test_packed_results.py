"""Scan results cross the process boundary and sit in the fact cache packed (zlib): smaller than
the facts they carry, read back to the same facts, and a cache entry that does not unpack is a
miss that is scanned again, never a failed run."""

from __future__ import annotations

import sqlite3
import sys

import msgspec

from extractor.context import ExtractOptions
from extractor.run.facts import FileFacts, decode_result, encode_result, stored_form
from extractor.run.pipeline import extract_system
from extractor.run.scan import failed_result, scan_file, scan_files
from extractor.steps import STEPS
from tests.conftest import FIXTURES


def _module(classes: int) -> bytes:
    """A module whose facts repeat themselves the way real ones do (scopes, callees, imports)."""
    body = ["import collections.abc", "from typing import Any", ""]
    for i in range(classes):
        body += [f"class Scheduler{i}(collections.abc.Mapping):",
                 "    def schedule(self, requests: list[Any]) -> None:",
                 "        self.waiting.append(requests)",
                 "        self.running.extend(self.waiting.popleft() for _ in requests)", ""]
    return "\n".join(body).encode()


def test_workers_send_packed_results_that_decode_to_the_plain_ones():
    data = _module(40)
    packed = list(scan_files([("python", data)], STEPS, jobs=1))
    plain = scan_file("python", data)  # this process has not run the worker's init: no step ran
    assert len(packed) == 1 and packed[0][:1] == b"\x78" and plain[:1] != b"\x78"
    result = decode_result(packed[0])
    assert result.lines == data.count(b"\n") == 5 * 40 + 2
    assert "python" in result.facts and "concepts" in result.facts
    assert len(packed[0]) * 3 < sum(len(raw) for raw in result.facts.values())  # the facts repeat: packing pays


def test_the_local_pool_sends_the_plain_bytes_beside_the_packed_ones_and_the_cache_keeps_the_packed(tmp_path):
    """On one machine the driver decodes the plain bytes (no decompressing what a worker just
    compressed); the fact cache still keeps packed entries, which decode to the same facts."""
    data = _module(40)
    (both,) = scan_files([("python", data)], STEPS, jobs=1, plain_too=True)
    (packed,) = scan_files([("python", data)], STEPS, jobs=1)
    assert both[:1] == b"\x00" and stored_form(both) == packed and stored_form(packed) == packed
    assert decode_result(both) == decode_result(packed)
    assert len(both) > len(packed) + sum(len(raw) for raw in decode_result(packed).facts.values())

    options = ExtractOptions(jobs=2, cache_dir=tmp_path / "cache", probe_structs=False)
    first = extract_system([str(FIXTURES / "pysample")], options=options)
    db = sqlite3.connect(tmp_path / "cache" / "facts.sqlite")
    heads = {bytes(value[:1]) for (value,) in db.execute("SELECT value FROM facts WHERE key NOT LIKE 'bundle:%'")}
    db.close()
    assert heads == {b"\x78"}  # zlib only: the plain bytes never reach the disk
    again = extract_system([str(FIXTURES / "pysample")], options=options, name="other")  # the memo missed, facts read
    assert again.cache["hits"] > 0 and again.cache["misses"] == 0 and again.bundle["graph"] == first.bundle["graph"]


def test_a_crashed_file_is_packed_too():
    result = decode_result(failed_result(b"x = 1\n", "parser-crashed", "died"))
    assert result.transient and [d[1] for d in result.diagnostics] == ["parser-crashed"]


def test_a_cache_entry_that_does_not_unpack_is_scanned_again(tmp_path):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    spec = str(FIXTURES / "pysample")
    clean = extract_system([spec], options=options)
    db = sqlite3.connect(tmp_path / "cache" / "facts.sqlite")
    with db:
        db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%'")
        # zlib's header, then nothing it can inflate; and bytes that are neither packed nor a result
        broken = db.execute("UPDATE facts SET value = CASE WHEN rowid % 2 THEN x'78010000' ELSE x'c1' END "
                            "WHERE key NOT LIKE 'bundle:%'").rowcount
    db.close()
    again = extract_system([spec], options=options)
    assert broken > 1 and again.cache["misses"] == broken and again.cache["hits"] == 0
    assert again.data == clean.data
    db = sqlite3.connect(tmp_path / "cache" / "facts.sqlite")
    rows = [decode_result(value) for (value,) in db.execute("SELECT value FROM facts WHERE key NOT LIKE 'bundle:%'")]
    db.close()
    assert len(rows) == broken  # rewritten, each one readable again


def test_a_cache_that_does_not_exist_is_created_by_a_write_not_by_a_look_up(tmp_path):
    from extractor.run.cache import FactCache

    path = tmp_path / "cache" / "facts.sqlite"
    cache = FactCache(path)
    assert cache.get_many(["k"]) == {} and cache.get_bytes("k") is None
    assert not path.exists()
    cache.put_many({"k": b"\x78packed"})
    assert path.exists() and cache.get_many(["k", "other"]) == {"k": b"\x78packed"}
    cache.close()
    assert FactCache(path).get_many(["k"]) == {"k": b"\x78packed"}


def _extract_module(tmp_path, source: str):
    """(bundle, node ids, the one diagnostic of pkg/mod.py) of a package whose module is ``source``."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(source)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "cache",
                                                                     probe_structs=False)).bundle
    (diagnostic,) = [d for d in bundle["diagnostics"] if d["path"] == "pkg/mod.py"]
    return bundle, {node["id"] for node in bundle["graph"]["nodes"]}, diagnostic


def test_a_string_with_lone_surrogates_keeps_its_file_and_says_how_it_was_written(tmp_path):
    """Python reads "\\ud800" in a literal as a lone surrogate, which UTF-8 cannot carry (litellm's
    base_utils.py holds such a regex): the file's facts are kept with the surrogate escaped, and an
    info diagnostic says so, instead of the whole file failing as unparsable."""
    _bundle, ids, diagnostic = _extract_module(tmp_path, 'import re\nPAT = re.compile("[\\ud800-\\udfff]")\n\n\n'
                                                         'def strip(text):\n    return PAT.sub("", text)\n')
    assert {"py:pkg.mod.PAT", "py:pkg.mod.strip"} <= ids
    assert (diagnostic["code"], diagnostic["severity"]) == ("surrogates-escaped", "info")
    assert "concepts" in diagnostic["message"]


def test_an_integer_beyond_64_bits_keeps_its_file_and_says_how_it_was_written(tmp_path):
    """msgpack carries integers of 64 bits at most; a scanner that keeps a literal beyond them
    (scipy's ``_fixed_default_rng(seed=1638083107694713882823079058616272161)``, a default the
    metrics scanner reads when the function makes a metric) used to fail the whole file as
    unparsable. The facts are kept, that integer as its exact decimal text, with an info note."""
    seed = 1638083107694713882823079058616272161
    source = ("from prometheus_client import Histogram\n\n\n"
              f"def timer(name, seed={seed}, buckets=(1, {2 ** 64}, -{2 ** 63})):\n"
              "    return Histogram(name, 'doc', buckets=buckets)\n\n\n"
              "LATENCY = timer('app_latency_seconds')\n")
    bundle, ids, diagnostic = _extract_module(tmp_path, source)
    assert {"py:pkg.mod.timer", "py:pkg.mod.LATENCY"} <= ids
    assert (diagnostic["code"], diagnostic["severity"]) == ("integers-as-text", "info")
    assert diagnostic["message"].endswith("in the facts of metrics")
    (metric,) = [m for m in bundle["metrics"] if m["name"] == "app_latency_seconds"]
    assert metric["path"] == "pkg/mod.py"
    # the one number beyond 64 bits is written exactly; those at msgpack's edges stay numbers
    (packed,) = scan_files([("python", source.encode())], STEPS, jobs=1)
    metrics = msgspec.msgpack.decode(decode_result(packed).facts["metrics"])
    _class, _line, _params, defaults = metrics["functions"]["timer"]  # a Signature, array-like
    assert defaults["seed"] == ["lit", str(seed)]
    assert defaults["buckets"] == ["seq", [["lit", 1], ["lit", str(2 ** 64)], ["lit", -2 ** 63]]]


def test_decoded_facts_let_the_encoded_result_go():
    """After the scan the driver holds each file's facts decoded, not also the result they came
    from: a decoded msgspec.Raw keeps the whole buffer it was cut from alive."""
    plain = encode_result(7, [(1, "c", "m", "info")], {"python": {"defs": ["f", "g"]}, "concepts": [1, 2]})
    result = decode_result(plain)
    holders = sys.getrefcount(plain)
    facts = FileFacts(result.facts, {})
    facts.decode_all()
    lean = result.without_facts()
    del result
    assert sys.getrefcount(plain) < holders  # no Raw of it is left
    assert dict(facts) == {"python": {"defs": ["f", "g"]}, "concepts": [1, 2]}
    assert len(facts) == 2 and "python" in facts and "metrics" not in facts and sorted(facts) == ["concepts", "python"]
    assert (lean.lines, lean.diagnostics, lean.facts) == (7, ((1, "c", "m", "info"),), {})


def test_files_of_the_same_content_each_get_their_facts(tmp_path):
    tree = tmp_path / "tree"
    (tree / "pkg" / "a").mkdir(parents=True)
    (tree / "pkg" / "b").mkdir()
    for folder in ("a", "b"):
        (tree / "pkg" / folder / "__init__.py").write_bytes(_module(2))
    result = extract_system([str(tree)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c", probe_structs=False))
    ids = {n["id"] for n in result.bundle["graph"]["nodes"]}
    assert {"py:pkg.a.Scheduler1.schedule", "py:pkg.b.Scheduler1.schedule"} <= ids


def test_facts_left_encoded_are_decoded_once_on_first_use_from_bytes_of_their_own():
    """The facts of a step that runs in a forked child stay encoded in the driver (decode_all's
    ``later``), as a copy: the result they were cut from is let go all the same."""
    plain = encode_result(3, [], {"python": {"defs": ["f"]}, "concepts": [1, 2]})
    result = decode_result(plain)
    holders = sys.getrefcount(plain)
    calls = []

    def counted(raw):
        calls.append(bytes(raw))
        return list(msgspec.msgpack.decode(raw))

    facts = FileFacts(result.facts, {"concepts": counted})
    facts.decode_all(frozenset({"concepts"}))
    del result
    assert sys.getrefcount(plain) < holders and calls == []
    assert sorted(facts) == ["concepts", "python"] and "concepts" in facts and len(facts) == 2
    assert facts["concepts"] == [1, 2] and facts["concepts"] == [1, 2] and len(calls) == 1
    assert dict(facts) == {"python": {"defs": ["f"]}, "concepts": [1, 2]}


def test_the_driver_leaves_the_facts_of_forked_steps_to_their_children(tmp_path, monkeypatch):
    """With two jobs, the metrics and concepts steps run in forked children, which decode their
    own facts; the driver decodes only what its own steps read. The evidence is the same as with
    one job, where the driver runs every step."""
    from extractor.run import compute

    decoded: list[str] = []
    original = compute.fact_decoders

    def counting(steps):
        def wrap(name, decode):
            def run(raw):
                decoded.append(name)  # a child's appends stay in the child
                return decode(raw)
            return run
        return {language: {name: wrap(name, decode) for name, decode in by_step.items()}
                for language, by_step in original(steps).items()}

    monkeypatch.setattr(compute, "fact_decoders", counting)
    tree = FIXTURES / "pysample"
    many = extract_system([str(tree)], options=ExtractOptions(jobs=2, cache_dir=tmp_path / "a", probe_structs=False))
    in_driver = set(decoded)
    decoded.clear()
    one = extract_system([str(tree)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "b", probe_structs=False))
    assert "python" in in_driver and not in_driver & {"metrics", "concepts"}
    assert {"metrics", "concepts"} <= set(decoded)  # with one job the driver runs those steps itself
    assert many.data == one.data and many.bundle["concepts"]
