"""The hostile-input suite: every case builds its input at test time, runs the real CLI (or the
one function at the boundary) in a sandbox, and checks what came out and what was touched."""

import pytest

from tests.hostile.support import Sandbox


def pytest_collection_modifyitems(items):
    for item in items:
        if "/hostile/" in str(item.fspath):
            item.add_marker(pytest.mark.hostile)


@pytest.fixture
def sandbox(tmp_path):
    return Sandbox(tmp_path / "sandbox")
