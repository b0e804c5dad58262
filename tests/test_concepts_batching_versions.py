"""Dynamic batching through TensorFlow's batching library and Ray Serve's batch timeout, and model
versions polled from a storage path and loaded by a manager, as a TF-based server writes them. The
mini-repo is written here; a sequence batcher (not dynamic batching) is not taken for one."""

from __future__ import annotations

from pathlib import Path

from handmade_context import build_context

from extractor.concepts import extract_concepts

FILES = {
    "server/batching/session.h": """\
#include "tensorflow/core/kernels/batching_util/shared_batch_scheduler.h"

namespace server {
class BatchingSession {
 public:
  static Status Create(int n);
};
}  // namespace server
""",
    "server/batching/session.cc": """\
#include "server/batching/session.h"

namespace server {
Status BatchingSession::Create(int n) {
  BasicBatchScheduler<Task>::Options options;
  std::unique_ptr<BasicBatchScheduler<Task>> scheduler;
  return BasicBatchScheduler<Task>::Create(options, Process, &scheduler);
}
}  // namespace server
""",
    "server/core/sources.h": """\
namespace server {
class FileSystemStoragePathSource {
 public:
  void PollFileSystem();
};
class AspiredVersionsManager {};
class SequenceBatchScheduler {};
}  // namespace server
""",
    "deploy/app.py": """\
def configure(handle):
    return handle.batch_wait_timeout_s
""",
}


def test_batch_schedulers_timeouts_and_polled_versions(tmp_path: Path):
    for rel, code in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    concepts = {c.id: c for c in extract_concepts(build_context({"": tmp_path})).records}
    assert {(e.path, e.line, e.matched) for e in concepts["dynamic-batching"].evidence} == {
        ("server/batching/session.h", 1, "tensorflow/core/kernels/batching_util/shared_batch_scheduler.h"),
        ("server/batching/session.cc", 5, "BasicBatchScheduler::Options"),
        ("server/batching/session.cc", 7, "BasicBatchScheduler::Create"),
        ("deploy/app.py", 2, "batch_wait_timeout_s"),
    }
    assert {(e.path, e.line, e.matched) for e in concepts["model-repository-polling"].evidence} == {
        ("server/core/sources.h", 2, "server::FileSystemStoragePathSource"),
        ("server/core/sources.h", 6, "server::AspiredVersionsManager"),
    }
