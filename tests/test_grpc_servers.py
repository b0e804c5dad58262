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


# C++: a class inheriting what grpc_cpp_plugin nests in the service's class (`<S>::Service`, synchronous;
# `<S>::AsyncService`), its overrides named as the rpcs (TensorFlow Serving's PredictionServiceImpl)
CPP_SERVED = {
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
    bundle = written_bundle(tmp_path, CPP_SERVED)
    impl = "cpp:demo::serving::PredictionServiceImpl"
    assert {(s, t) for s, t in edges(bundle, "implements") if t.startswith("proto:")} == {
        (impl, "proto:demo.serving.PredictionService"),
        (f"{impl}::Predict", "proto:demo.serving.PredictionService.Predict"),
        ("cpp:demo::serving::AsyncModelService", "proto:demo.serving.ModelService"),
    }  # not Twice: two services of the system have that name; not Base::ServiceImpl
    stats = bundle["stats"]["ffi"]
    assert (stats["grpc_servers"], stats["grpc_rpcs_served"]) == (2, 1)
