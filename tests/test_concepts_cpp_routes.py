"""HTTP routes a C/C++ server registers with literal paths: a router's method named after the HTTP
method (cpp-httplib's ``svr.Post("/completion", handler)``, llama.cpp's server shape) and a
registration given the method and the path (rtp-llm's ``http_server.RegisterRoute("GET", "/health",
cb)``); a computed path, a lookup and a map's ``Get`` are no routes. The mini-repo is written here."""

from __future__ import annotations

from tests.native_support import written_bundle

FILES = {
    "server/health_service.cc": """\
#include "server/http_server.h"

bool HealthService::registerService(HttpServer& http_server) {
    return http_server.RegisterRoute("GET", "/health", callback)
           && http_server.RegisterRoute("POST", "/health", callback)
           && http_server.RegisterRoute("GET", api_prefix + "/status", callback);
}
""",
    "server/server.cpp": """\
#include "httplib.h"

int main() {
    httplib::Server svr;
    svr.Get("/v1/models", handle_models);
    svr.Post("/v1/chat/completions", handle_chat);
    svr.Post(prefix + "/completion", handle_completion);
    cache.Get("/not/a/route");
    auto found = router.find("GET", "/v1/models", &params);
    return 0;
}
""",
}


def test_cpp_routes_and_the_concepts_they_show(tmp_path):
    concepts = {c["id"]: c for c in written_bundle(tmp_path, FILES)["concepts"]}
    assert {(e["path"], e["line"], e["matched"]) for e in concepts["http-routes"]["evidence"]} == {
        ("server/health_service.cc", 4, "GET /health"),
        ("server/health_service.cc", 5, "POST /health"),
        ("server/server.cpp", 5, "GET /v1/models"),
        ("server/server.cpp", 6, "POST /v1/chat/completions"),
    }
    assert {(e["path"], e["line"]) for e in concepts["openai-compatible-api"]["evidence"]} == {
        ("server/server.cpp", 5), ("server/server.cpp", 6)}
