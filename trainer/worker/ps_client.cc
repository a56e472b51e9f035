#include "trainer/worker/ps_client.h"

#include <grpcpp/grpcpp.h>

#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "trainer/ps/parameter_server.h"

namespace disttrain::trainer {

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), absl::StrCat(what, ": ", s.error_message()));
}

namespace {

// Runs fn(i) for every server in parallel and returns the first error.
template <typename Fn>
absl::Status ForEachPs(int n, Fn fn) {
  std::vector<absl::Status> results(n);
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back([&, i] { results[i] = fn(i); });
  results[0] = fn(0);
  for (auto& t : threads) t.join();
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Streams the shards of `values` that server `ps` holds as 1 MiB chunks; false once the stream
// breaks. Request is InitRequest or PushRequest (both carry a TensorChunk).
template <typename Request, typename Writer>
bool WriteChunks(Writer* writer, const std::vector<Shard>& plan, int ps, const Params& values) {
  bool ok = true;
  for (const Shard& s : plan) {
    if (s.ps != ps) continue;
    const float* base = values[s.variable].data() + s.offset;
    for (size_t off = 0; ok && off < s.size; off += kChunkElements) {
      Request r;
      v1::TensorChunk* chunk = r.mutable_chunk();
      chunk->set_shard(s.name);
      chunk->set_offset(off);
      chunk->set_data(reinterpret_cast<const char*>(base + off), std::min(kChunkElements, s.size - off) * sizeof(float));
      ok = writer->Write(r);
    }
  }
  return ok;
}

}  // namespace

PsClient::PsClient(const std::vector<std::string>& addresses, std::vector<VariableSpec> variables,
                   std::vector<Shard> plan, std::string worker_name)
    : addresses_(addresses), variables_(std::move(variables)), plan_(std::move(plan)), worker_(std::move(worker_name)) {
  grpc::ChannelArguments args;
  // Chunks are 1 MiB; this deliberate limit leaves headroom without allowing unbounded messages.
  args.SetMaxReceiveMessageSize(8 << 20);
  args.SetMaxSendMessageSize(8 << 20);
  for (const std::string& a : addresses) {
    stubs_.push_back(v1::ParameterServer::NewStub(
        grpc::CreateCustomChannel(a, grpc::InsecureChannelCredentials(), args)));
  }
}

absl::StatusOr<std::vector<PsState>> PsClient::DescribeAll() {
  std::vector<PsState> out(stubs_.size());
  absl::Status s = ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::DescribeResponse resp;
    absl::Status st = FromGrpc(stubs_[i]->Describe(&ctx, v1::DescribeRequest(), &resp),
                               absl::StrCat("describe ps ", i, " at ", addresses_[i]));
    out[i] = {resp.initialized(), resp.global_step(), resp.incarnation()};
    return st;
  });
  if (!s.ok()) return s;
  return out;
}

absl::Status PsClient::InitAll(const Params& params, int64_t global_step) {
  return ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    v1::InitResponse resp;
    auto writer = stubs_[i]->Init(&ctx, &resp);
    v1::InitRequest req;
    req.mutable_header()->set_global_step(global_step);
    for (const Shard& s : plan_) {
      if (s.ps != i) continue;
      v1::ShardSpec* spec = req.mutable_header()->add_shards();
      spec->set_shard(s.name);
      spec->set_size(s.size);
    }
    if (writer->Write(req)) WriteChunks<v1::InitRequest>(writer.get(), plan_, i, params);
    writer->WritesDone();
    return FromGrpc(writer->Finish(), absl::StrCat("init ps ", i, " at ", addresses_[i]));
  });
}

absl::StatusOr<int64_t> PsClient::PullAll(int64_t min_step, absl::Duration wait, Params* params) {
  if (params->size() != variables_.size()) {
    params->clear();
    for (const VariableSpec& v : variables_) params->emplace_back(v.size, 0.0f);
  }
  std::map<std::string, const Shard*> by_name;
  for (const Shard& s : plan_) by_name[s.name] = &s;
  std::vector<int64_t> steps(num_ps(), 0);
  absl::Status st = ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoSeconds(wait) + std::chrono::seconds(30));
    v1::PullRequest req;
    req.set_min_step(min_step);
    req.set_wait_ms(absl::ToInt64Milliseconds(wait));
    auto reader = stubs_[i]->Pull(&ctx, req);
    v1::TensorChunk chunk;
    while (reader->Read(&chunk)) {
      auto it = by_name.find(chunk.shard());
      if (it == by_name.end() || it->second->ps != i) continue;
      const Shard& s = *it->second;
      const size_t n = chunk.data().size() / sizeof(float);
      if (chunk.offset() + n > s.size) continue;
      std::memcpy((*params)[s.variable].data() + s.offset + chunk.offset(), chunk.data().data(), n * sizeof(float));
    }
    absl::Status r = FromGrpc(reader->Finish(), absl::StrCat("pull from ps ", i, " at ", addresses_[i]));
    auto md = ctx.GetServerTrailingMetadata().find("global-step");
    if (md != ctx.GetServerTrailingMetadata().end()) steps[i] = std::stoll(std::string(md->second.data(), md->second.size()));
    return r;
  });
  if (!st.ok()) return st;
  return steps[0];
}

absl::StatusOr<v1::PushResponse> PsClient::PushAll(int64_t step, const Params& grads) {
  std::vector<v1::PushResponse> responses(num_ps());
  absl::Status st = ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto writer = stubs_[i]->Push(&ctx, &responses[i]);
    v1::PushRequest req;
    req.mutable_header()->set_step(step);
    req.mutable_header()->set_worker(worker_);
    if (writer->Write(req)) WriteChunks<v1::PushRequest>(writer.get(), plan_, i, grads);
    writer->WritesDone();
    return FromGrpc(writer->Finish(), absl::StrCat("push to ps ", i, " at ", addresses_[i]));
  });
  if (!st.ok()) return st;
  return responses[0];
}

}  // namespace disttrain::trainer
