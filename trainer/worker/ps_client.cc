#include "trainer/worker/ps_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/wire/chunks.h"
#include "trainer/wire/transport_security.h"
#include "trainer/worker/push_pull_call.h"

namespace disttrain::trainer {

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
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

// Streams the shards of `values` that endpoint `ps` holds as Init chunks (a rare call, so
// plain protobuf); false once the stream breaks.
bool WriteInitChunks(grpc::ClientWriter<v1::InitRequest>* writer, const std::vector<Shard>& plan,
                     int ps, const Params& values) {
  bool ok = true;
  for (const Shard& s : plan) {
    if (s.ps != ps) continue;
    const float* base = values[s.variable].data() + s.offset;
    for (size_t off = 0; ok && off < s.size; off += kChunkElements) {
      v1::InitRequest r;
      v1::TensorChunk* chunk = r.mutable_chunk();
      chunk->set_shard(s.name);
      chunk->set_offset(off);
      chunk->set_data(reinterpret_cast<const char*>(base + off),
                      std::min(kChunkElements, s.size - off) * sizeof(float));
      ok = writer->Write(r);
    }
  }
  return ok;
}

}  // namespace

PsClient::PsClient(const std::vector<std::string>& addresses, std::vector<VariableSpec> variables,
                   std::string worker_name, int connections_per_ps)
    : addresses_(addresses),
      connections_(std::max(1, connections_per_ps)),
      variables_(std::move(variables)),
      plan_(Plan(variables_, static_cast<int>(addresses.size()), connections_)),
      worker_(std::move(worker_name)) {
  for (int e = 0; e < num_endpoints(); ++e) {
    grpc::ChannelArguments args;
    // Chunks are 512 KiB; this deliberate limit leaves headroom without allowing unbounded
    // messages.
    args.SetMaxReceiveMessageSize(8 << 20);
    args.SetMaxSendMessageSize(8 << 20);
    wire::SetTransportArgs(&args);
    // Channels with different arguments never share a connection: one TCP connection per partition.
    args.SetInt("disttrain.partition", partition(e));
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateCustomChannel(addresses_[ps_of(e)], ChannelCredentials(), args);
    stubs_.push_back(v1::ParameterServer::NewStub(channel));
    generic_.push_back(std::make_unique<grpc::GenericStub>(channel));
  }
  shards_of_.resize(num_endpoints());
  for (const Shard& s : plan_) shards_of_[s.ps][s.name] = &s;
}

int PartitionsUsed(size_t share_bytes, int partitions) {
  constexpr size_t kChunkBytes = kChunkElements * sizeof(float);
  constexpr size_t kBytesPerPartition = size_t{32} << 20;
  if (partitions < 2 || share_bytes < 2 * kChunkBytes) return 1;
  const size_t by_size = share_bytes / kBytesPerPartition;
  return static_cast<int>(std::clamp<size_t>(by_size, 2, static_cast<size_t>(partitions)));
}

std::vector<Shard> PsClient::Plan(const std::vector<VariableSpec>& variables, int num_ps,
                                  int connections) {
  size_t bytes = 0;
  for (const VariableSpec& v : variables) bytes += v.size * sizeof(float);
  const int used = PartitionsUsed(bytes / static_cast<size_t>(num_ps), connections);
  std::vector<Shard> plan = PlanShards(variables, num_ps * used);
  for (Shard& s : plan) s.ps = (s.ps / used) * connections + s.ps % used;  // logical -> endpoint
  return plan;
}

std::string PsClient::Name(int e) const {
  return absl::StrCat("ps ", ps_of(e), " (partition ", partition(e), ") at ", addresses_[ps_of(e)]);
}

absl::StatusOr<std::vector<PsState>> PsClient::DescribeAll() {
  std::vector<PsState> out(addresses_.size());
  absl::Status s = ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::DescribeRequest req;
    req.set_worker(worker_);
    v1::DescribeResponse resp;
    absl::Status st = FromGrpc(stubs_[i * connections_]->Describe(&ctx, req, &resp),
                               absl::StrCat("describe ps ", i, " at ", addresses_[i]));
    if (st.ok() && resp.partitions() != connections_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ps ", i, " at ", addresses_[i], " has ", resp.partitions(),
          " partitions but this task uses ", connections_,
          " connections per parameter server: give every task the same --ps-connections"));
    }
    out[i] = {resp.initialized(), resp.global_step(), resp.incarnation()};
    return st;
  });
  if (!s.ok()) return s;
  return out;
}

absl::Status PsClient::LeaveAll(absl::Duration deadline) {
  return ForEachPs(num_ps(), [&](int i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    v1::LeaveRequest req;
    req.set_worker(worker_);
    v1::LeaveResponse resp;
    return FromGrpc(stubs_[i * connections_]->Leave(&ctx, req, &resp),
                    absl::StrCat("leave ps ", i, " at ", addresses_[i]));
  });
}

absl::Status PsClient::InitAll(const Params& params, int64_t global_step) {
  return ForEachPs(num_endpoints(), [&](int i) {
    grpc::ClientContext ctx;
    v1::InitResponse resp;
    auto writer = stubs_[i]->Init(&ctx, &resp);
    v1::InitRequest req;
    req.mutable_header()->set_global_step(global_step);
    req.mutable_header()->set_partition(partition(i));
    for (const Shard& s : plan_) {
      if (s.ps != i) continue;
      v1::ShardSpec* spec = req.mutable_header()->add_shards();
      spec->set_shard(s.name);
      spec->set_size(s.size);
    }
    if (writer->Write(req)) WriteInitChunks(writer.get(), plan_, i, params);
    writer->WritesDone();
    return FromGrpc(writer->Finish(), absl::StrCat("init ", Name(i)));
  });
}

absl::StatusOr<PsClient::StepResult> PsClient::PushPull(const Params* grads, const StepOptions& o,
                                                        Params* params) {
  return Measured(grads, nullptr, o, params);
}

absl::StatusOr<PsClient::StepResult> PsClient::PushPull(std::shared_ptr<const Params> grads,
                                                        const StepOptions& o, Params* params) {
  const Params* raw = grads.get();
  return Measured(raw, std::move(grads), o, params);
}

absl::StatusOr<PsClient::StepResult> PsClient::Measured(const Params* grads,
                                                        std::shared_ptr<const Params> owner,
                                                        const StepOptions& o, Params* params) {
  const absl::Time start = absl::Now();
  const std::string op = grads != nullptr ? "push_pull" : "pull";
  absl::StatusOr<StepResult> r = PushPullOnce(grads, std::move(owner), o, params);
  TrainerMetrics& m = Metrics();
  if (!r.ok()) {
    m.rpc_errors->Add({op}, 1);
    return r;
  }
  m.rpc_seconds->Observe({op}, absl::ToDoubleSeconds(absl::Now() - start));
  size_t bytes = 0;
  for (const VariableSpec& v : variables_) bytes += v.size * sizeof(float);
  if (grads != nullptr) m.rpc_bytes->Add({"pushed"}, static_cast<double>(bytes));
  m.rpc_bytes->Add({"pulled"}, static_cast<double>(bytes));
  return r;
}

absl::StatusOr<PsClient::StepResult> PsClient::PushPullOnce(const Params* grads,
                                                            std::shared_ptr<const Params> owner,
                                                            const StepOptions& o, Params* params) {
  if (params->size() != variables_.size()) {
    params->clear();
    for (const VariableSpec& v : variables_) params->emplace_back(v.size, 0.0f);
  }
  v1::PushPullHeader header;
  header.set_step(o.step);
  header.set_worker(worker_);
  header.set_push(grads != nullptr);
  header.set_min_step(o.min_step);
  header.set_wait_ms(absl::ToInt64Milliseconds(o.wait));
  header.set_pull_early(o.pull_early);
  // gRPC may hold the gradient's slices a little past a call's end: the gradient is reused only
  // once the last slice let go of the pin. The pin keeps the notification (and a shared
  // gradient) alive however long gRPC holds it, so this may return before.
  auto released = std::make_shared<absl::Notification>();
  const bool can_leave = owner != nullptr;
  std::vector<std::unique_ptr<PushPullCall>> calls;
  {
    std::shared_ptr<const void> pin(
        nullptr, [released, owner = std::move(owner)](const void*) { released->Notify(); });
    for (int i = 0; i < num_endpoints(); ++i) {
      header.set_partition(partition(i));
      // A partition without shards (a small model) is initialised empty and never called.
      calls.push_back(shards_of_[i].empty() ? nullptr
                                            : std::make_unique<PushPullCall>(header, shards_of_[i],
                                                                             grads, pin, params));
    }
  }
  for (int i = 0; i < num_endpoints(); ++i) {
    if (calls[i]) calls[i]->Start(generic_[i].get(), o.wait + absl::Seconds(60));
  }
  absl::Status first;
  for (int i = 0; i < num_endpoints(); ++i) {
    if (!calls[i]) continue;
    absl::Status s = calls[i]->Wait();
    if (!s.ok() && first.ok())
      first = absl::Status(s.code(), absl::StrCat(Name(i), ": ", s.message()));
  }
  // After a failure, a connection to a server that died may hold the gradient until TCP gives
  // up on it (30 s and more were seen on the real node after a ps was SIGKILLed): a shared
  // gradient is left to gRPC then, and the failure returned at once.
  const bool leave = !first.ok() && can_leave;
  if (!released->WaitForNotificationWithTimeout(leave ? absl::Seconds(1) : absl::Seconds(30))) {
    if (leave) return first;
    return absl::InternalError("gRPC still holds the gradient 30 s after the calls ended");
  }
  if (!first.ok()) return first;
  StepResult r;
  r.global_step = calls[0]->status().global_step();  // partition 0 of server 0 always holds shards
  r.dropped = calls[0]->status().dropped();
  r.live_replicas = calls[0]->status().live_replicas();
  for (const auto& c : calls) {
    if (c) r.incarnations.push_back(c->status().incarnation());
  }
  return r;
}

absl::StatusOr<int64_t> PsClient::PullAll(Params* params) {
  absl::StatusOr<StepResult> r = PushPull(nullptr, {}, params);
  if (!r.ok()) return r.status();
  return r->global_step;
}

}  // namespace disttrain::trainer
