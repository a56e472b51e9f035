#include "trainer/ps/parameter_server.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/ps/push_pull_reactor.h"
#include "trainer/ps/shard_receiver.h"

namespace disttrain::trainer {

ParameterServer::ParameterServer(const std::function<std::unique_ptr<UpdateRule>()>& make_rule,
                                 int push_buffers, int partitions, const Clock* clock)
    : push_buffers_(push_buffers),
      clock_(clock),
      incarnation_(absl::StrCat(std::random_device{}(), "-", absl::ToUnixMicros(absl::Now()))),
      embeddings_(std::make_unique<EmbeddingStore>(0, 1)) {
  for (int i = 0; i < std::max(1, partitions); ++i) rules_.push_back(make_rule());
  {
    absl::MutexLock lock(&mu_);
    stores_.resize(rules_.size());
  }
  ticker_ = std::thread([this] {
    for (int64_t tick = 1; !stop_; ++tick) {
      absl::SleepFor(absl::Milliseconds(10));
      for (int i = 0; i < this->partitions(); ++i) {
        if (std::shared_ptr<ShardStore> s = store(i)) s->ExpireWaiters(absl::Now());
      }
      if (tick % 10 != 0) continue;
      absl::MutexLock lock(&members_mu_);
      if (!members_.has_value()) continue;
      for (const std::string& gone : members_->Expire(clock_->Now()))
        ReplicasChanged("a training replica went silent; no longer waiting for it", gone);
      silence_checks_.fetch_add(1);
    }
  });
}

ParameterServer::ParameterServer(std::unique_ptr<UpdateRule> rule, int push_buffers,
                                 const Clock* clock)
    : ParameterServer([&rule] { return std::move(rule); }, push_buffers, 1, clock) {}

ParameterServer::~ParameterServer() {
  stop_ = true;
  ticker_.join();
  Close();
}

void ParameterServer::Close() {
  snapshot_.Close();
  for (int i = 0; i < partitions(); ++i) {
    if (std::shared_ptr<ShardStore> s = store(i)) s->Close();
  }
}

std::shared_ptr<ShardStore> ParameterServer::store(int partition) const {
  absl::MutexLock lock(&mu_);
  if (partition < 0 || partition >= static_cast<int>(stores_.size())) return nullptr;
  return stores_[partition];
}

grpc::Status ParameterServer::Init(grpc::ServerContext* ctx,
                                   grpc::ServerReader<v1::InitRequest>* reader, v1::InitResponse*) {
  v1::InitRequest req;
  if (!reader->Read(&req) || !req.has_header()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Init must start with a header");
  }
  const int64_t step = req.header().global_step();
  const int partition = req.header().partition();
  if (partition < 0 || partition >= partitions()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("partition ", partition, " of a server with ", partitions()));
  }
  std::map<std::string, std::vector<float>> values;
  for (const v1::ShardSpec& s : req.header().shards()) {
    if (s.size() > (size_t{1} << 31))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "shard too large");
    values[s.shard()].assign(s.size(), 0.0f);
  }
  ShardReceiver receiver(&values);
  while (reader->Read(&req)) {
    if (!req.has_chunk())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected chunks after the header");
    if (grpc::Status s = receiver.Add(req.chunk()); !s.ok()) return s;
  }
  if (ctx->IsCancelled())
    return grpc::Status(grpc::StatusCode::CANCELLED, "init cancelled; nothing was applied");
  if (grpc::Status s = receiver.Finish(); !s.ok()) return s;
  const size_t shards = values.size();
  auto fresh = std::make_shared<ShardStore>(std::move(values), step, push_buffers_);
  std::shared_ptr<ShardStore> old;
  {
    absl::MutexLock lock(&mu_);
    old = std::exchange(stores_[partition], std::move(fresh));
  }
  if (old) old->Close();
  LogInfo("parameter server initialised", {{"partition", absl::StrCat(partition)},
                                           {"shards", absl::StrCat(shards)},
                                           {"global_step", absl::StrCat(step)}});
  return grpc::Status::OK;
}

grpc::Status ParameterServer::Describe(grpc::ServerContext*, const v1::DescribeRequest* request,
                                       v1::DescribeResponse* response) {
  // A replica waiting for the servers to be initialised or restored is still there.
  if (!request->worker().empty()) Seen(request->worker(), /*push=*/false);
  response->set_incarnation(incarnation_);
  response->set_partitions(partitions());
  bool initialized = true;
  for (int i = 0; i < partitions(); ++i) {
    std::shared_ptr<ShardStore> s = store(i);
    if (s == nullptr) {
      initialized = false;
      continue;
    }
    if (i == 0) response->set_global_step(s->global_step());
    for (const ShardStore::ShardInfo& info : s->shards()) {
      v1::ShardSpec* spec = response->add_shards();
      spec->set_shard(info.name);
      spec->set_size(info.size);
    }
  }
  response->set_initialized(initialized);
  return grpc::Status::OK;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ParameterServer::PushPull(
    grpc::CallbackServerContext* ctx) {
  return new PushPullReactor(this, ctx);
}

grpc::Status ParameterServer::PutSnapshot(grpc::ServerContext*,
                                          grpc::ServerReader<v1::SnapshotPart>* reader,
                                          v1::PutSnapshotResponse*) {
  SnapshotReader assembled;
  v1::SnapshotPart part;
  while (reader->Read(&part)) {
    if (absl::Status s = assembled.Add(part); !s.ok())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(s.message()));
  }
  absl::StatusOr<Checkpoint> snapshot = assembled.Finish();
  if (!snapshot.ok())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(snapshot.status().message()));
  snapshot_.Put(std::make_shared<const Checkpoint>(*std::move(snapshot)));
  return grpc::Status::OK;
}

grpc::Status ParameterServer::GetSnapshot(grpc::ServerContext*,
                                          const v1::GetSnapshotRequest* request,
                                          grpc::ServerWriter<v1::SnapshotPart>* writer) {
  const absl::Duration wait = absl::Milliseconds(std::clamp<int64_t>(request->wait_ms(), 0, 60000));
  snapshot_.Asked();
  std::shared_ptr<const Checkpoint> s =
      snapshot_.WaitNewer(request->after_step(), absl::Now() + wait);
  if (s == nullptr)
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no snapshot after step ", request->after_step()));
  if (!WriteSnapshotParts(*s, [&](const v1::SnapshotPart& p) { return writer->Write(p); }))
    return grpc::Status(grpc::StatusCode::CANCELLED, "the evaluator went away");
  snapshot_.Delivered(s->global_step);
  return grpc::Status::OK;
}

void ParameterServer::FollowReplicas(const std::vector<std::string>& initial,
                                     absl::Duration timeout) {
  absl::MutexLock lock(&members_mu_);
  members_.emplace(initial, timeout);
  live_ = members_->live();
  for (int i = 0; i < partitions(); ++i) rules_[i]->SetLiveReplicas(members_->live(), nullptr);
  Metrics().ps_live_replicas->Set({}, members_->live());
  Metrics().ps_replicas_to_aggregate->Set({}, rules_[0]->quorum());
}

void ParameterServer::Seen(const std::string& replica, bool push) {
  absl::MutexLock lock(&members_mu_);
  if (members_.has_value() && members_->Seen(replica, push))
    ReplicasChanged("a training replica joined", replica);
}

int ParameterServer::live_replicas() const { return live_.load(); }

bool ParameterServer::AwaitEvaluatorDone(absl::Time deadline) {
  return evaluator_done_.WaitForNotificationWithDeadline(deadline);
}

grpc::Status ParameterServer::Leave(grpc::ServerContext*, const v1::LeaveRequest* request,
                                    v1::LeaveResponse* response) {
  if (request->worker().rfind("evaluator", 0) == 0) {
    if (!evaluator_done_.HasBeenNotified()) evaluator_done_.Notify();
    return grpc::Status::OK;
  }
  absl::MutexLock lock(&members_mu_);
  if (!members_.has_value()) return grpc::Status::OK;
  if (members_->Leave(request->worker()))
    ReplicasChanged("a training replica left", request->worker());
  response->set_live_replicas(members_->live());
  return grpc::Status::OK;
}

void ParameterServer::HoldIdsOf(int ps_index, int num_ps) {
  embeddings_ = std::make_unique<EmbeddingStore>(ps_index, num_ps);
}

namespace {

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

}  // namespace

grpc::Status ParameterServer::CreateTables(grpc::ServerContext*,
                                           const v1::CreateTablesRequest* request,
                                           v1::CreateTablesResponse*) {
  absl::Status s = embeddings_->CreateTables(*request);
  if (s.ok()) {
    LogInfo("embedding tables declared", {{"tables", absl::StrCat(request->tables_size())},
                                          {"reset", request->reset() ? "true" : "false"}});
  }
  return ToGrpc(s);
}

grpc::Status ParameterServer::SparsePushPull(grpc::ServerContext*,
                                             const v1::SparsePushPullRequest* request,
                                             v1::SparsePushPullResponse* response) {
  if (!request->worker().empty() && !request->push().empty()) Seen(request->worker(), false);
  absl::Status s = embeddings_->PushPull(*request, response);
  if (!s.ok()) {
    Metrics().ps_refused->Add({absl::StatusCodeToString(s.code())}, 1);
    return ToGrpc(s);
  }
  response->set_incarnation(incarnation_);
  return grpc::Status::OK;
}

grpc::Status ParameterServer::ExportRows(grpc::ServerContext*, const v1::ExportRowsRequest* request,
                                         grpc::ServerWriter<v1::RowBlock>* writer) {
  return ToGrpc(embeddings_->Export(*request, incarnation_, size_t{1} << 20,
                                    [&](const v1::RowBlock& b) { return writer->Write(b); }));
}

grpc::Status ParameterServer::ImportRows(grpc::ServerContext* ctx,
                                         grpc::ServerReader<v1::RowBlock>* reader,
                                         v1::ImportRowsResponse* response) {
  v1::RowBlock block;
  uint64_t rows = 0;
  while (reader->Read(&block)) {
    if (absl::Status s = embeddings_->Import(block); !s.ok()) return ToGrpc(s);
    rows += static_cast<uint64_t>(block.ids_size());
  }
  if (ctx->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "import cancelled");
  response->set_rows(rows);
  return grpc::Status::OK;
}

void ParameterServer::ReplicasChanged(absl::string_view why, const std::string& replica) {
  const int live = members_->live();
  live_ = live;
  for (int i = 0; i < partitions(); ++i) {
    std::shared_ptr<ShardStore> s = store(i);
    rules_[i]->SetLiveReplicas(live, s.get());
  }
  const int quorum = rules_[0]->quorum();
  Metrics().ps_live_replicas->Set({}, live);
  Metrics().ps_replicas_to_aggregate->Set({}, quorum);
  if (quorum > 0) {
    LogInfo(why, {{"replica", replica},
                  {"live_replicas", absl::StrCat(live)},
                  {"replicas_to_aggregate", absl::StrCat(quorum)}});
  } else {
    LogInfo(why, {{"replica", replica}, {"live_replicas", absl::StrCat(live)}});
  }
}

}  // namespace disttrain::trainer
