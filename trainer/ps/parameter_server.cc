#include "trainer/ps/parameter_server.h"

#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "trainer/ps/shard_receiver.h"

namespace disttrain::trainer {
ParameterServer::ParameterServer(std::unique_ptr<UpdateRule> rule)
    : rule_(std::move(rule)), incarnation_(absl::StrCat(std::random_device{}(), "-", absl::ToUnixMicros(absl::Now()))) {}

grpc::Status ParameterServer::Init(grpc::ServerContext* ctx, grpc::ServerReader<v1::InitRequest>* reader,
                                   v1::InitResponse*) {
  v1::InitRequest req;
  if (!reader->Read(&req) || !req.has_header()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Init must start with a header");
  }
  ShardTable fresh;
  fresh.global_step = req.header().global_step();
  for (const v1::ShardSpec& s : req.header().shards()) {
    if (s.size() > (size_t{1} << 31)) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "shard too large");
    fresh.values[s.shard()].assign(s.size(), 0.0f);
  }
  ShardReceiver receiver(&fresh.values);
  while (reader->Read(&req)) {
    if (!req.has_chunk()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected chunks after the header");
    if (grpc::Status s = receiver.Add(req.chunk()); !s.ok()) return s;
  }
  if (ctx->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "init cancelled; nothing was applied");
  if (grpc::Status s = receiver.Finish(); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  table_ = std::move(fresh);
  rule_->Reset();
  initialized_ = true;
  LogInfo("parameter server initialised", {{"shards", absl::StrCat(table_.values.size())},
                                           {"global_step", absl::StrCat(table_.global_step)}});
  return grpc::Status::OK;
}

grpc::Status ParameterServer::Pull(grpc::ServerContext* ctx, const v1::PullRequest* request,
                                   grpc::ServerWriter<v1::TensorChunk>* writer) {
  ShardTable snapshot;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this, request]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !initialized_ || table_.global_step >= request->min_step();
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(request->wait_ms()));
    if (!initialized_) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not initialized");
    snapshot = table_;
  }
  v1::TensorChunk chunk;
  for (const auto& [name, values] : snapshot.values) {
    for (size_t off = 0; off < values.size(); off += kChunkElements) {
      const size_t n = std::min(kChunkElements, values.size() - off);
      chunk.set_shard(name);
      chunk.set_offset(off);
      chunk.set_data(reinterpret_cast<const char*>(values.data() + off), n * sizeof(float));
      if (ctx->IsCancelled() || !writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "pull cancelled");
    }
  }
  ctx->AddTrailingMetadata("global-step", absl::StrCat(snapshot.global_step));
  return grpc::Status::OK;
}

grpc::Status ParameterServer::Push(grpc::ServerContext* ctx, grpc::ServerReader<v1::PushRequest>* reader,
                                   v1::PushResponse* response) {
  v1::PushRequest req;
  if (!reader->Read(&req) || !req.has_header()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Push must start with a header");
  }
  const int64_t step = req.header().step();
  std::map<std::string, std::vector<float>> gradient;
  {
    absl::MutexLock lock(&mu_);
    if (!initialized_) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not initialized");
    for (const auto& [name, values] : table_.values) gradient[name].assign(values.size(), 0.0f);
  }
  // A push is applied whole or not at all: a torn stream must not count as a gradient whose
  // missing part is zeros.
  ShardReceiver receiver(&gradient);
  while (reader->Read(&req)) {
    if (!req.has_chunk()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected chunks after the header");
    if (grpc::Status s = receiver.Add(req.chunk()); !s.ok()) return s;
  }
  if (ctx->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "push cancelled; nothing was applied");
  if (grpc::Status s = receiver.Finish(); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (!initialized_) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not initialized");
  PushResult r = rule_->Push(step, gradient, &table_);
  response->set_global_step(table_.global_step);
  response->set_dropped(r.dropped);
  return grpc::Status::OK;
}

grpc::Status ParameterServer::Describe(grpc::ServerContext*, const v1::DescribeRequest*,
                                       v1::DescribeResponse* response) {
  absl::MutexLock lock(&mu_);
  response->set_initialized(initialized_);
  response->set_global_step(table_.global_step);
  response->set_incarnation(incarnation_);
  for (const auto& [name, values] : table_.values) {
    v1::ShardSpec* s = response->add_shards();
    s->set_shard(name);
    s->set_size(values.size());
  }
  return grpc::Status::OK;
}

}  // namespace disttrain::trainer
