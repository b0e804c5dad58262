"""The per-file scanners: facts resolved through imports, never raw text."""

from __future__ import annotations

import ast
import textwrap

from extractor.concepts.facts import ConceptFacts, Definition, Import
from extractor.concepts.scan import scan_cpp, scan_python
from extractor.cpp.parse import parse_source
from extractor.model import Language, ParsedFile


def python_facts(source: str) -> ConceptFacts | None:
    data = textwrap.dedent(source).encode()
    return scan_python(ParsedFile(Language.PYTHON, data, ast.parse(data)))


def cpp_facts(source: str, language: Language = Language.CPP) -> ConceptFacts | None:
    data = textwrap.dedent(source).encode()
    return scan_cpp(ParsedFile(language, data, parse_source(data, language)))


def test_from_import_resolves_the_called_name():
    facts = python_facts("""\
        from heapq import heappush as push
        import torch.distributed as dist
        import queue

        def f(h, t):
            push(h, 1)
            dist.all_reduce(t)
            return queue.PriorityQueue()
        """)
    assert ("heapq.heappush", 6) in facts.names
    assert ("torch.distributed.all_reduce", 7) in facts.names
    assert ("queue.PriorityQueue", 8) in facts.names
    # the maximal chain only: not "torch.distributed" on its own at line 7
    assert ("torch.distributed", 7) not in facts.names


def test_relative_imports_keep_their_level_for_the_extractor():
    facts = python_facts("""\
        from ..core.block_pool import BlockPool
        from . import utils

        class Pool(BlockPool):
            pass
        """)
    assert Import("core.block_pool", "BlockPool", 2, 1) in facts.imports
    assert Import("", "utils", 1, 2) in facts.imports
    assert Definition("Pool", "class", 4, ("..core.block_pool.BlockPool",)) in facts.defs


def test_keywords_method_calls_attrs_and_strings():
    facts = python_facts('''\
        """Docstrings are not strings worth matching: /dev/shm."""
        import torch

        def stage(self, n, flag):
            a = torch.zeros(n, pin_memory=True)
            b = torch.zeros(n, pin_memory=flag)
            c = torch.zeros(n, pin_memory=False)
            self.cache.pin_memory()
            path = "/dev/shm"
            return self.max_num_batched_tokens
        ''')
    assert ("pin_memory=True", 5) in facts.keywords
    assert ("pin_memory=...", 6) in facts.keywords
    assert ("pin_memory=False", 7) in facts.keywords
    assert ("pin_memory", 8) in facts.calls
    assert facts.strings == (("/dev/shm", 9),)
    assert ("max_num_batched_tokens", 10) in facts.attrs


def test_methods_are_qualified_by_their_class():
    facts = python_facts("""\
        class Scheduler:
            def schedule(self):
                pass

        async def serve():
            pass
        """)
    assert facts.defs == (Definition("Scheduler", "class", 1), Definition("Scheduler.schedule", "function", 2),
                          Definition("serve", "function", 5))


def test_cpp_names_drop_template_arguments_and_keep_scope():
    facts = cpp_facts("""\
        #include <queue>
        #include "core/memory.h"
        namespace mini {
        struct Slot : public Base<int>, Other { int x; };
        int f(std::priority_queue<int>& q, void* p) {
          cudaIpcMemHandle_t h;
          cudaIpcGetMemHandle(&h, p);
          q.push(1);
          const char* root = "/dev/shm";
          return 0;
        }
        }
        """)
    assert facts.includes == (("core/memory.h", 2), ("queue", 1))
    assert ("std::priority_queue", 5) in facts.names
    assert ("cudaIpcGetMemHandle", 7) in facts.names
    assert ("push", 8) in facts.calls
    assert ("/dev/shm", 9) in facts.strings
    assert Definition("mini::Slot", "struct", 4, ("Base", "Other")) in facts.defs
    assert Definition("mini::f", "function", 5) in facts.defs


def test_cuda_global_functions_are_kernels():
    facts = cpp_facts("""\
        template <typename T>
        __global__ void scale_kernel(T* x) { x[threadIdx.x] *= 2; }
        void launch(float* x) { scale_kernel<<<1, 32>>>(x); }
        """, Language.CUDA)
    kinds = {d.qualname: d.kind for d in facts.defs}
    assert kinds == {"scale_kernel": "kernel", "launch": "function"}


def test_scanner_output_does_not_depend_on_anything_but_the_bytes():
    source = "from heapq import heappush\nheappush([], 1)\n"
    assert python_facts(source) == python_facts(source)
    # without a stdlib tree the scanner parses the bytes itself; unparseable bytes give no facts
    assert scan_python(ParsedFile(Language.PYTHON, source.encode(), None)) == python_facts(source)
    assert scan_python(ParsedFile(Language.PYTHON, b"def (:\n", None)) is None


def test_http_routes_of_decorators_and_registrations():
    facts = python_facts('''
        from fastapi import APIRouter, FastAPI
        app = FastAPI()
        router = APIRouter()
        prefix = "/api"

        @app.post("/v1/chat/completions")
        async def chat(): ...

        @router.api_route("/v1/models", methods=["GET", "post"])
        def models(): ...

        @router.api_route("/any")
        def anything(): ...

        @app.get(f"{prefix}/health", include_in_schema=False)
        def health(): ...

        @app.websocket("/ws")
        async def socket(): ...

        @app.get("not a path")
        def odd(): ...

        def setup(client):
            app.add_api_route("/metrics", setup, methods=["GET"])
            client.get("/v1/models")  # a request, not a route
            client.post("/v1/files")
    ''')
    assert facts is not None
    assert facts.routes == (("ANY /any", 13), ("GET /metrics", 26), ("GET {prefix}/health", 16),
                            ("GET|POST /v1/models", 10), ("POST /v1/chat/completions", 7), ("WS /ws", 19))


def test_cpp_routes_registered_with_a_literal_method_and_path_then_a_handler():
    # rtp-llm's C++ HTTP server: each service registers its callbacks, several in one expression
    facts = cpp_facts('''
        bool ChatService::registerRoutes(HttpServer& server, HttpServer* other) {
            auto cb = [](const Request& r) { return r; };
            return server.RegisterRoute("POST", "/v1/chat/completions", cb)
                   && other->RegisterRoute("GET", "/", cb)
                   && add_route("PUT", "/v1/models/load", cb, 3);
        }
        void client(HttpClient& c, const std::string& body) {
            c.Request("GET", "/v1/models");  // a request: no handler
            c.Request("POST", "/v1/chat/completions", body);  // nor one with a body: no registering name
            server.RegisterRoute("FETCH", "/x", cb);  // no HTTP method
            server.RegisterRoute("GET", "no path", cb);
            server.RegisterRoute(method, "/dynamic", cb);
            server.RegisterRoute("GET", "/a\\nb", cb);
        }
    ''')
    assert facts is not None
    assert facts.routes == (("GET /", 5), ("POST /v1/chat/completions", 4), ("PUT /v1/models/load", 6))


def test_routes_of_a_router_made_or_mounted_with_a_prefix_are_under_it():
    """`APIRouter(prefix="/v1")` and `@router.post("/chat/completions")` serve POST /v1/chat/completions:
    read without the prefix, an OpenAI-compatible server was not seen as one."""
    facts = python_facts('''
        from fastapi import APIRouter, FastAPI
        from flask import Blueprint
        router = APIRouter(prefix="/v1", tags=["chat"])
        admin = APIRouter()
        bp = Blueprint("api", __name__, url_prefix="/api")
        both = APIRouter(prefix="/openai")
        twice = APIRouter()
        app = FastAPI()

        @router.post("/chat/completions")
        async def chat(): ...

        @admin.get("/health")
        def health(): ...

        @bp.route("/models", methods=["GET"])
        def models(): ...

        @both.post("/v1/embeddings")
        def embeddings(): ...

        @twice.get("/ping")
        def ping(): ...

        app.include_router(admin, prefix="/admin")
        app.include_router(both, prefix="/x")
        app.include_router(twice, prefix="/a")
        app.include_router(twice, prefix="/b")
    ''')
    assert facts is not None
    assert facts.routes == (("GET /admin/health", 14), ("GET /api/models", 17), ("GET /ping", 23),
                            ("POST /v1/chat/completions", 11), ("POST /x/openai/v1/embeddings", 20))


def test_a_prefix_not_written_as_a_path_is_read_through_a_constant_or_kept_as_written():
    """`APIRouter(prefix=settings.API_V1_STR)`: the routes are not at the root. A module constant bound
    once to a path is read through; any other value stays as written, in braces, as an f-string's do.
    A router bound with an annotation (`router: Final = APIRouter(...)`) is a router too."""
    facts = python_facts('''
        from typing import Final
        from fastapi import APIRouter, FastAPI
        from app.core.config import settings
        API_PREFIX: Final = "/api/v2"
        EMPTY = ""
        AGAIN = "/one"
        AGAIN = "/two"
        users = APIRouter(prefix=settings.API_V1_STR)
        items: Final = APIRouter(prefix=API_PREFIX)
        plain = APIRouter(prefix=EMPTY)
        moved = APIRouter(prefix=AGAIN)
        computed = APIRouter(prefix=settings.root + "/x")
        app = FastAPI()

        @users.get("/me")
        def me(): ...

        @items.post("/items")
        def create(): ...

        @plain.get("/ping")
        def ping(): ...

        @moved.get("/where")
        def where(): ...

        @computed.get("/c")
        def c(): ...

        @app.get("/health")
        def health(): ...
    ''')
    assert facts is not None
    assert facts.routes == (("GET /health", 31), ("GET /ping", 22), ("GET {?}/c", 28),
                            ("GET {AGAIN}/where", 25), ("GET {settings.API_V1_STR}/me", 16),
                            ("POST /api/v2/items", 19))


def test_a_decorator_that_declares_its_route_by_keyword_declares_a_route():
    """Llama Stack declares its 119 endpoints with its own `@webmethod(route="/models", method="GET")`;
    BentoML with `@bentoml.api(route=...)`, Litestar and FastAPI may write `path=`. Read only by
    position, such a server had no routes at all. `path=` on a decorator not named by a verb is no
    route (a cache's `@memoize(path="/tmp/c")`)."""
    facts = python_facts('''
        from fastapi import APIRouter
        from litestar import get
        import bentoml
        from .schema_utils import webmethod, memoize
        router = APIRouter(prefix="/v2")

        class Models:
            @webmethod(route="/models", method="GET")
            async def list_models(self): ...

            @webmethod(route="/models/{model_id:path}", method="DELETE", descriptive_name="drop")
            async def drop(self, model_id): ...

            @webmethod(route="/openai/v1/chat/completions", methods=["POST"])
            async def chat(self): ...

        @bentoml.api(route="/v1/generate")
        def generate(): ...

        @get(path="/health")
        def health(): ...

        @router.post(path="/embeddings")
        def embeddings(): ...

        @memoize(path="/tmp/cache")
        def cached(): ...

        @webmethod(route="models")
        def relative(): ...
    ''')
    assert facts is not None
    assert facts.routes == (("ANY /v1/generate", 18), ("DELETE /models/{model_id:path}", 12), ("GET /health", 21),
                            ("GET /models", 9), ("POST /openai/v1/chat/completions", 15),
                            ("POST /v2/embeddings", 24))


def test_route_objects_an_application_lists_are_routes():
    """Starlette (and FastAPI beneath its decorators) serves the routes an app lists: `Route("/x",
    endpoint, methods=[...])`, `WebSocketRoute("/ws", endpoint)`. A class of the system's own named
    Route is none, and a mount declares no route of its own."""
    facts = python_facts('''
        from starlette.applications import Starlette
        from starlette.routing import Mount, Route, WebSocketRoute
        from fastapi.routing import APIRoute
        from .routing import Route as OwnRoute

        routes = [
            Route("/", homepage),
            Route("/v1/completions", completions, methods=["POST"]),
            WebSocketRoute("/ws", stream),
            APIRoute(path="/health", endpoint=health, methods=["GET"]),
            Mount("/static", app=files),
            OwnRoute("/not/a/route", handler),
        ]
        app = Starlette(routes=routes)
    ''')
    assert facts is not None
    assert facts.routes == (("ANY /", 8), ("GET /health", 11), ("POST /v1/completions", 9), ("WS /ws", 10))
