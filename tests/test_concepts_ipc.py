"""A server and its worker processes talking over a Unix domain socket, as mosec's Rust server and
Python workers do: the mechanism across the language boundary that no binding edge shows; and the
data they pass through a Plasma shared-memory store. The mini-repo is written here; a TCP socket is
not taken for a Unix one."""

from __future__ import annotations

from tests.native_support import written_bundle

FILES = {
    "workers/protocol.py": """\
import socket


class Protocol:
    def __init__(self, addr):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.connect(addr)
""",
    "workers/plasma.py": """\
class PlasmaWorker:
    def client(self, path):
        from pyarrow import plasma

        return plasma.connect(path)
""",
    "src/protocol.rs": """\
use tokio::net::{UnixListener, UnixStream};

pub async fn serve(path: &str) {
    let listener = UnixListener::bind(path).expect("bind");
    let _ = listener.accept().await;
}

pub async fn probe(path: &str) {
    let _stream = UnixStream::connect(path).await.unwrap();
}
""",
}


def test_unix_domain_sockets_on_both_sides(tmp_path):
    concepts = {c["id"]: c for c in written_bundle(tmp_path, FILES)["concepts"]}
    assert {(e["path"], e["line"], e["matched"]) for e in concepts["unix-socket-ipc"]["evidence"]} == {
        ("workers/protocol.py", 6, "socket.AF_UNIX"),
        ("src/protocol.rs", 4, "tokio::net::UnixListener::bind"),
        ("src/protocol.rs", 9, "tokio::net::UnixStream::connect"),
    }


def test_a_plasma_store_is_shared_memory(tmp_path):
    concepts = {c["id"]: c for c in written_bundle(tmp_path, FILES)["concepts"]}
    assert {(e["path"], e["line"], e["matched"]) for e in concepts["shared-memory"]["evidence"]} == {
        ("workers/plasma.py", 3, "pyarrow.plasma"),
    }
