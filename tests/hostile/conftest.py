"""The hostile-input suite: every case builds its input at test time, runs the real CLI (or the
one function at the boundary) in a sandbox, and checks what came out and what was touched."""

import signal

import pytest

from tests.hostile.support import Sandbox

# Every case's own bound: the CLI runs have their subprocess timeouts; this one also holds the
# cases that call a reader in-process (a hang there would otherwise hang the suite). The slowest
# case, twenty concurrent extractions on a busy two-core machine, takes about two minutes.
CASE_LIMIT = 600


def pytest_collection_modifyitems(items):
    for item in items:
        if "/hostile/" in str(item.fspath):
            item.add_marker(pytest.mark.hostile)


@pytest.fixture(autouse=True)
def _case_limit():
    def expire(signum, frame):
        raise TimeoutError(f"hostile case still running after {CASE_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(CASE_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def sandbox(tmp_path):
    return Sandbox(tmp_path / "sandbox")
