"""Files' digests (their cache keys) are computed by forked children with more than one job (and
enough bytes to pay for the fork): the same digests, in the files' order, as one process computes."""

from __future__ import annotations

import hashlib

import pytest

from extractor.run.compute import _digests


@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
def test_digests_are_sha256_in_order_whatever_the_jobs(jobs):
    datas = [b"", b"x", b"\0" * 70_000, *(bytes([i]) * i for i in range(1, 40))]
    expected = [hashlib.sha256(d).hexdigest() for d in datas]
    assert _digests(datas, jobs, fork_from=0) == expected  # forked children whatever the size
    assert _digests(datas, jobs) == expected  # small: hashed here
    assert _digests([], jobs, fork_from=0) == []
