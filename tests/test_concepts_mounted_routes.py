"""Routes of a router that another module mounts with a prefix: FastAPI's
`app.include_router(chat.router, prefix="/v1")` in the app's module, `@router.post("/chat/completions")`
in the router's, serve POST /v1/chat/completions. Read without the mount, an OpenAI-compatible server
laid out this way was not seen as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from tests.conftest import extract_real

MAIN = '''from fastapi import FastAPI

from .routers import chat
from .routers.models import router as models_router
from .routers import health

app = FastAPI()
app.include_router(chat.router, prefix="/v1")
app.include_router(models_router, prefix="/v1")
app.include_router(health.router, prefix="/a")
app.include_router(health.router, prefix="/b")
'''

CHAT = '''from fastapi import APIRouter

router = APIRouter(prefix="/chat")
other = APIRouter()


@router.post("/completions")
async def create_chat_completion(): ...


@other.post("/completions")
async def not_mounted(): ...
'''

MODELS = '''from fastapi import APIRouter

router = APIRouter()


@router.get("/models")
def list_models(): ...
'''

HEALTH = '''from fastapi import APIRouter

router = APIRouter()


@router.get("/health")
def health(): ...
'''


@pytest.fixture(scope="module")
def concepts(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    for rel, code in {"server/__init__.py": "", "server/main.py": MAIN, "server/routers/__init__.py": "",
                      "server/routers/chat.py": CHAT, "server/routers/models.py": MODELS,
                      "server/routers/health.py": HEALTH}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    options = ExtractOptions(jobs=1, cache_dir=Path(tmp_path_factory.mktemp("cache")), probe_structs=False)
    return {c["id"]: c for c in extract_real(root, options=options).bundle["concepts"]}


def test_routes_of_a_router_mounted_with_a_prefix_in_another_module_are_under_it(concepts):
    routes = {(e["path"], e["line"], e["matched"]) for e in concepts["http-routes"]["evidence"]}
    assert routes == {("server/routers/chat.py", 7, "POST /v1/chat/completions"),
                      ("server/routers/chat.py", 11, "POST /completions"),
                      ("server/routers/models.py", 6, "GET /v1/models"),
                      # mounted under two prefixes: as its file declares it
                      ("server/routers/health.py", 6, "GET /health")}
    assert {e["matched"] for e in concepts["openai-compatible-api"]["evidence"]} == {
        "POST /v1/chat/completions", "GET /v1/models"}
