"""Files in a language archdiff does not read are said, once per language, never silently absent."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
import tarfile

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.model import Diagnostic, Severity
from extractor.run.pipeline import extract_system
from tests.compare_support import evidence

# A server with a Java frontend, a TypeScript UI and Thrift services beside its Python backend and
# its gRPC services (.proto, read); its build scripts and documents are no language of the
# architecture, a vendored node_modules no part.
FILES = {
    "backend/__init__.py": "",
    "backend/worker.py": "def handle(request):\n    return request\n",
    "frontend/server/Main.java": "class Main {}\n",
    "frontend/server/Metrics.java": "class Metrics {}\n",
    "frontend/client/Client.java": "class Client {}\n",
    "tools/Bench.java": "class Bench {}\n",
    "ui/app.tsx": "export const App = () => null;\n",
    "ui/state.ts": "export const state = {};\n",
    "proto/inference.proto": 'syntax = "proto3";\nservice Inference {}\n',
    "idl/inference.thrift": "service Inference {}\n",
    "node_modules/lib/index.js": "module.exports = {};\n",
    "build.sh": "make\n",
    "README.md": "# server\n",
}


def _tree(tmp_path):
    root = tmp_path / "server"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _not_read(bundle) -> list[tuple[str, str, str]]:
    return [(d["path"], d["message"], d["severity"]) for d in bundle["diagnostics"] if d["code"] == "language-not-read"]


EXPECTED = [
    ("frontend/", "4 Java files not read, 3 of them under frontend/", "info"),
    ("idl/", "1 Thrift file not read, under idl/", "info"),
    ("ui/", "2 TypeScript files not read, all under ui/", "info"),
]


def test_each_language_not_read_is_one_diagnostic_at_the_folder_holding_most(tmp_path):
    bundle = extract_system([str(_tree(tmp_path))], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    assert _not_read(bundle) == EXPECTED  # no JavaScript: node_modules is never listed; no shell, no Markdown
    assert bundle["stats"]["files"] == {"proto": 1, "python": 2}
    # the .proto file is read: its service is a node of the graph
    proto = {(n["id"], n["kind"], n["path"], n["line"]) for n in bundle["graph"]["nodes"] if n["language"] == "proto"}
    assert proto == {("file:proto/inference.proto", "file", "proto/inference.proto", 0),
                     ("proto:Inference", "interface", "proto/inference.proto", 2)}


def test_an_archive_streamed_while_unpacked_says_the_same_as_its_tree(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel, text in sorted(FILES.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"server-1.0/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = tmp_path / "server-1.0.tar.gz"
    archive.write_bytes(buffer.getvalue())
    run = extract_system([str(archive)], options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c"))
    assert "unpack" in run.log["order"]  # listed from the archive's members, not from a tree on disk
    assert _not_read(run.bundle) == EXPECTED


def test_the_run_prints_a_note_per_language_not_read(tmp_path):
    root, out = _tree(tmp_path), tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", str(root), "-o", str(out),
                           "--cache-dir", str(tmp_path / "c"), "-j", "1", "--no-probes"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    notes = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("note:")]
    read = "Python, C/C++, CUDA, Rust, Go and Protocol Buffers"
    assert notes == [f"note: {message} (archdiff reads {read}) [language-not-read]"
                     for _path, message, _severity in EXPECTED]


def test_a_comparison_heads_with_what_each_side_does_not_read():
    java = Diagnostic("frontend/", 0, "language-not-read", "220 Java files not read, 191 of them under frontend/",
                      Severity.INFO)
    other = Diagnostic("a.py", 3, "syntax-error", "not Python", Severity.WARNING)
    a = dataclasses.replace(evidence("torchserve", "0.12"), diagnostics=(java, other))
    b = dataclasses.replace(evidence("vllm", "0.10.2"), diagnostics=(other,))
    findings = compare_evidence(a, b)
    assert [s.get("not_read") for s in findings["systems"]] == [[java.message], None]  # the key only with some
    markdown = render_markdown(findings, KINDS)
    assert f"| not read | {java.message} | — |" in markdown
    assert f"<td>Not read</td><td class=num>{java.message}</td><td class=num>—</td>" in render_html(findings, KINDS)
    # a comparison where neither side misses a language has no such row
    plain = compare_evidence(b, b)
    assert "not read" not in render_markdown(plain, KINDS) and "Not read" not in render_html(plain, KINDS)


def test_in_a_system_of_several_sources_the_folder_is_named_with_its_source(tmp_path):
    server = _tree(tmp_path)
    client = tmp_path / "client"
    (client / "java").mkdir(parents=True)
    (client / "java" / "Client.java").write_text("class Client {}\n")
    (client / "lib.py").write_text("X = 1\n")
    bundle = extract_system([str(server), str(client)],
                            options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    labels = [s["label"] for s in bundle["sources"]]
    assert labels == ["server", "client"]
    assert ("client/java/", "1 Java file not read, under client/java/", "info") in _not_read(bundle)
    assert ("server/frontend/", "4 Java files not read, 3 of them under server/frontend/", "info") in _not_read(bundle)


def test_a_build_recipe_named_with_a_language_suffix_is_no_source_of_it(tmp_path):
    """TorchServe's docker/Dockerfile.cpp (the image of its C++ backend) was parsed as C++: ERROR nodes
    and bogus definitions. A recipe's suffix names its variant (Makefile.inc, Dockerfile.cuda)."""
    from extractor.acquire.inventory import list_files
    from extractor.context import SourceTree

    for rel, text in {"docker/Dockerfile.cpp": "FROM ubuntu\nRUN make\n", "Makefile.inc": "CFLAGS=-O2\n",
                      "docker/dockerfile.cu": "FROM cuda\n", "src/engine.cpp": "int f() { return 1; }\n",
                      "src/Makefile": "all:\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    entries, _ = list_files(SourceTree("", str(tmp_path), "dir", tmp_path))
    assert [(e.rel, e.language.value) for e in entries] == [("src/engine.cpp", "cpp")]
