"""A Go or Python type serving a protobuf service: `implements` edges to the service and from its methods
to the rpcs they serve (Seldon Core's scheduler, agent and pipeline gateway serve seven services; the code
serving them had no edge to them)."""

from __future__ import annotations

from tests.native_support import edges, written_bundle

TWICE = 'syntax = "proto3";\npackage {package};\nmessage R {{}}\nservice Twice {{ rpc Go(R) returns (R); }}\n'
SERVED = {
    "go.mod": "module example.com/sched\n\ngo 1.22\n",
    "apis/scheduler.proto": """syntax = "proto3";
package demo.scheduler;

message LoadRequest { string name = 1; }
message LoadResponse {}

service Scheduler {
  rpc LoadModel(LoadRequest) returns (LoadResponse);
  rpc UnloadModel(LoadRequest) returns (LoadResponse);
}
""",
    "apis/other.proto": TWICE.format(package="demo.other"),
    "apis/again.proto": TWICE.format(package="demo.again"),
    "apis/go/scheduler/scheduler_grpc.pb.go": """package scheduler

type UnimplementedSchedulerServer struct{}

type UnimplementedTwiceServer struct{}
""",
    "server/server.go": """package server

import pb "example.com/sched/apis/go/scheduler"

type SchedulerServer struct {
\tpb.UnimplementedSchedulerServer
\tpb.UnimplementedTwiceServer
}

func (s *SchedulerServer) LoadModel() error { return nil }

func (s *SchedulerServer) helper() {}

func (s *SchedulerServer) Go() {}
""",
    "py/servicer.py": """import scheduler_pb2_grpc


class Servicer(scheduler_pb2_grpc.SchedulerServicer):
    def UnloadModel(self, request, context):
        return None

    def other(self):
        pass
""",
}


def test_types_serving_a_protobuf_service_implement_it_and_its_rpcs(tmp_path):
    bundle = written_bundle(tmp_path, SERVED)
    server = "go:example.com/sched/server.SchedulerServer"
    assert {(s, t) for s, t in edges(bundle, "implements") if t.startswith("proto:")} == {
        (server, "proto:demo.scheduler.Scheduler"),  # embeds protoc-gen-go-grpc's UnimplementedSchedulerServer
        (f"{server}.LoadModel", "proto:demo.scheduler.Scheduler.LoadModel"),
        ("py:servicer.Servicer", "proto:demo.scheduler.Scheduler"),  # inherits grpcio-tools' SchedulerServicer
        ("py:servicer.Servicer.UnloadModel", "proto:demo.scheduler.Scheduler.UnloadModel"),
    }  # not Twice: two services of the system have that name
    stats = bundle["stats"]["ffi"]
    assert (stats["grpc_servers"], stats["grpc_rpcs_served"]) == (2, 2)


GENERATED_IN_PACKAGE = {
    # rtp-llm's servicers: grpcio-tools writes `model_rpc_service_pb2_grpc.py` into the package at build
    # time, beside the .proto; the tree has no such file, so the Python step left the base unresolved
    "eng/__init__.py": "",
    "eng/proto/__init__.py": "",
    "eng/proto/model_rpc.proto": """syntax = "proto3";
package eng;
message Req {}
service ModelRpc { rpc Generate(Req) returns (Req); rpc Stop(Req) returns (Req); }
""",
    "eng/server.py": """from eng.proto.model_rpc_pb2_grpc import ModelRpcServicer
from eng.proto import model_rpc_pb2_grpc as rpc


class Server(ModelRpcServicer):
    def Generate(self, request, context):
        return request


class Other(rpc.ModelRpcServicer):
    def Stop(self, request, context):
        return request


class Plain(ModelRpc):
    def Generate(self, request, context):
        return request
""",
}


def test_a_servicer_whose_generated_module_lies_in_a_package_of_the_system_implements_the_service(tmp_path):
    bundle = written_bundle(tmp_path, GENERATED_IN_PACKAGE)
    assert {(s, t) for s, t in edges(bundle, "implements") if t.startswith("proto:")} == {
        ("py:eng.server.Server", "proto:eng.ModelRpc"),
        ("py:eng.server.Server.Generate", "proto:eng.ModelRpc.Generate"),
        ("py:eng.server.Other", "proto:eng.ModelRpc"), ("py:eng.server.Other.Stop", "proto:eng.ModelRpc.Stop")}


CPP_SERVED = {
    # rtp-llm's model_rpc: C++ classes inherit grpc_cpp_plugin's `<S>::Service` (from the generated
    # `model_rpc.grpc.pb.h`, no file of the tree) and override the rpcs they serve
    "proto/model_rpc.proto": """syntax = "proto3";
package eng.rpc;
message Req {}
service ModelRpc { rpc Generate(Req) returns (Req); rpc Stop(Req) returns (Req); }
service Health { rpc Check(Req) returns (Req); }
""",
    "proto/store.proto": """syntax = "proto3";
package store;
option cc_generic_services = true;
message Block {}
service BlockStore { rpc Load(Block) returns (Block); }
""",
    "server/store_impl.h": """#pragma once
#include "proto/store.pb.h"
namespace eng {
// arpc and brpc servers inherit the class protoc writes for a generic service
class StoreImpl : public store::BlockStore {
public:
    void Load(google::protobuf::RpcController* c, const store::Block* req, store::Block* resp,
              google::protobuf::Closure* done) override {}
};
}
""",
    "server/rpc_impl.h": """#pragma once
#include "proto/model_rpc.grpc.pb.h"
namespace eng {
class RpcImpl : public ModelRpc::Service {
public:
    grpc::Status Generate(grpc::ServerContext* ctx, const Req* req, Req* resp) override;
    void helper();
};
class AsyncHealth final : public ::eng::rpc::Health::AsyncService {
public:
    grpc::Status Check(grpc::ServerContext* ctx, const Req* req, Req* resp);
};
class NotGrpc : public Engine::Service {};
}
""",
    "server/rpc_impl.cc": """#include "rpc_impl.h"
namespace eng {
grpc::Status RpcImpl::Generate(grpc::ServerContext* ctx, const Req* req, Req* resp) { return grpc::Status(); }
void RpcImpl::helper() {}
grpc::Status AsyncHealth::Check(grpc::ServerContext* ctx, const Req* req, Req* resp) { return grpc::Status(); }
}
""",
}


def test_cpp_classes_that_inherit_a_grpc_service_implement_it_and_its_rpcs(tmp_path):
    bundle = written_bundle(tmp_path, CPP_SERVED)
    assert {(s, t) for s, t in edges(bundle, "implements") if t.startswith("proto:")} == {
        ("cpp:eng::RpcImpl", "proto:eng.rpc.ModelRpc"),
        ("cpp:eng::RpcImpl::Generate", "proto:eng.rpc.ModelRpc.Generate"),
        ("cpp:eng::AsyncHealth", "proto:eng.rpc.Health"),
        ("cpp:eng::AsyncHealth::Check", "proto:eng.rpc.Health.Check"),
        ("cpp:eng::StoreImpl", "proto:store.BlockStore"),
        ("cpp:eng::StoreImpl::Load", "proto:store.BlockStore.Load")}  # Engine: no service of the system
    stats = bundle["stats"]["ffi"]
    assert (stats["grpc_servers"], stats["grpc_rpcs_served"]) == (3, 3)


# C++: a class inheriting what grpc_cpp_plugin nests in the service's class (`<S>::Service`, synchronous;
# `<S>::AsyncService`), its overrides named as the rpcs (TensorFlow Serving's PredictionServiceImpl)
CPP_SERVED_TF = {
    "apis/prediction.proto": """syntax = "proto3";
package demo.serving;

message PredictRequest {}
message PredictResponse {}

service PredictionService {
  rpc Predict(PredictRequest) returns (PredictResponse);
  rpc Classify(PredictRequest) returns (PredictResponse);
}
service ModelService {
  rpc GetModelStatus(PredictRequest) returns (PredictResponse);
}
""",
    "apis/other.proto": TWICE.format(package="demo.other"),
    "apis/again.proto": TWICE.format(package="demo.again"),
    "server/prediction_service_impl.h": """#pragma once
#include "apis/prediction.grpc.pb.h"

namespace demo {
namespace serving {

class PredictionServiceImpl final : public PredictionService::Service {
 public:
  ::grpc::Status Predict(::grpc::ServerContext* context, const PredictRequest* request,
                         PredictResponse* response) override;
  void Helper();
};

class AsyncModelService : public ::demo::serving::ModelService::AsyncService {};

class Twiced : public Twice::Service {
 public:
  ::grpc::Status Go(::grpc::ServerContext* context, const R* request, R* response) override;
};

class Unrelated : public Base::ServiceImpl {
 public:
  void Predict();
};

}  // namespace serving
}  // namespace demo
""",
    "server/prediction_service_impl.cc": """#include "server/prediction_service_impl.h"

namespace demo {
namespace serving {

::grpc::Status PredictionServiceImpl::Predict(::grpc::ServerContext* context, const PredictRequest* request,
                                              PredictResponse* response) {
  Helper();
  return ::grpc::Status::OK;
}

}  // namespace serving
}  // namespace demo
""",
}


def test_cpp_classes_serving_a_protobuf_service_implement_it_and_its_rpcs(tmp_path):
    bundle = written_bundle(tmp_path, CPP_SERVED_TF)
    impl = "cpp:demo::serving::PredictionServiceImpl"
    assert {(s, t) for s, t in edges(bundle, "implements") if t.startswith("proto:")} == {
        (impl, "proto:demo.serving.PredictionService"),
        (f"{impl}::Predict", "proto:demo.serving.PredictionService.Predict"),
        ("cpp:demo::serving::AsyncModelService", "proto:demo.serving.ModelService"),
    }  # not Twice: two services of the system have that name; not Base::ServiceImpl
    stats = bundle["stats"]["ffi"]
    assert (stats["grpc_servers"], stats["grpc_rpcs_served"]) == (2, 1)
