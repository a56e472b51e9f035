// The parameter server's gRPC service: holds its shards of the variables in a ShardStore, and
// serves PushPull, one call per training step: receive a gradient, apply it through an
// UpdateRule, then (after waiting for the asked step in synchronous mode) stream the variables
// back. PushPull runs on gRPC's callback API (push_pull_reactor.h): no thread per call, tensor
// bytes never copied through protobuf. Init, Describe and the evaluator's snapshots are rare and
// use the plain sync API.
// Thread-safe.
#ifndef DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_
#define DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "disttrain/trainer/v1/parameter_server.grpc.pb.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/ps/embedding_store.h"
#include "trainer/ps/membership.h"
#include "trainer/ps/partitions.h"
#include "trainer/ps/shard_store.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {

class ParameterServer final
    : public v1::ParameterServer::WithRawCallbackMethod_PushPull<v1::ParameterServer::Service>,
      public Partitions {
 public:
  // `partitions`: independent parts of the server (own variables, step and rule, one made by
  // `make_rule` each), so a client can use one connection per partition and as many cores.
  // `push_buffers`: pushes received at once per partition, each held whole (the size of the
  // partition's variables) until it is complete; more wait. 1 keeps resident memory near twice
  // the model. `clock` times the replicas' silence (FollowReplicas); it outlives the server.
  ParameterServer(const std::function<std::unique_ptr<UpdateRule>()>& make_rule, int push_buffers,
                  int partitions, const Clock* clock = RealClock::Get());
  // One partition.
  explicit ParameterServer(std::unique_ptr<UpdateRule> rule, int push_buffers = 1,
                           const Clock* clock = RealClock::Get());
  ~ParameterServer() override;

  grpc::Status Init(grpc::ServerContext* ctx, grpc::ServerReader<v1::InitRequest>* reader,
                    v1::InitResponse* response) override;
  grpc::Status Describe(grpc::ServerContext* ctx, const v1::DescribeRequest* request,
                        v1::DescribeResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* PushPull(
      grpc::CallbackServerContext* ctx) override;
  // The chief's newest checkpoint for the evaluator (trainer/checkpoint/snapshot.h).
  grpc::Status PutSnapshot(grpc::ServerContext* ctx, grpc::ServerReader<v1::SnapshotPart>* reader,
                           v1::PutSnapshotResponse* response) override;
  grpc::Status GetSnapshot(grpc::ServerContext* ctx, const v1::GetSnapshotRequest* request,
                           grpc::ServerWriter<v1::SnapshotPart>* writer) override;
  grpc::Status Leave(grpc::ServerContext* ctx, const v1::LeaveRequest* request,
                     v1::LeaveResponse* response) override;
  // Embedding tables (embedding_store.h).
  grpc::Status CreateTables(grpc::ServerContext* ctx, const v1::CreateTablesRequest* request,
                            v1::CreateTablesResponse* response) override;
  grpc::Status SparsePushPull(grpc::ServerContext* ctx, const v1::SparsePushPullRequest* request,
                              v1::SparsePushPullResponse* response) override;
  grpc::Status ExportRows(grpc::ServerContext* ctx, const v1::ExportRowsRequest* request,
                          grpc::ServerWriter<v1::RowBlock>* writer) override;
  grpc::Status ImportRows(grpc::ServerContext* ctx, grpc::ServerReader<v1::RowBlock>* reader,
                          v1::ImportRowsResponse* response) override;
  // This server's place among the job's `num_ps` servers: the ids of its share of every table
  // (trainer/embedding/id_hash.h). Call before serving; without it the server holds every id.
  void HoldIdsOf(int ps_index, int num_ps);
  EmbeddingStore& embeddings() { return *embeddings_; }
  // Waits until an evaluator said it is done (Leave) or `deadline`: the embedding rows its final
  // lookups need must outlive training. False at the deadline.
  bool AwaitEvaluatorDone(absl::Time deadline);

  // Counts the training replicas live (trainer/ps/membership.h), starting from `initial`, and
  // tells every partition's rule when their number changes. Call before serving; without it the
  // rules keep their configured counts.
  void FollowReplicas(const std::vector<std::string>& initial, absl::Duration timeout);

  // Answers every waiting pull now; call before grpc::Server::Shutdown.
  void Close();
  // The evaluator's snapshots (the server's stop waits on them).
  SnapshotSlot& snapshots() { return snapshot_; }

  int partitions() const override { return static_cast<int>(rules_.size()); }
  std::shared_ptr<ShardStore> store(int partition) const override;
  UpdateRule& rule(int partition) override { return *rules_[partition]; }
  const std::string& incarnation() const override { return incarnation_; }
  void Observe(CallEvent event) override {
    observed_[static_cast<int>(event)].fetch_add(1, std::memory_order_relaxed);
  }
  void Seen(const std::string& replica, bool push) override;
  // The training replicas counted live; -1 without FollowReplicas.
  int live_replicas() const override;
  // How often PushPull calls reported `event` since the start (tests).
  int64_t observed(CallEvent event) const { return observed_[static_cast<int>(event)].load(); }
  // How often the ticker checked the replicas' silence (tests).
  int64_t silence_checks() const { return silence_checks_.load(); }

 private:
  std::vector<std::unique_ptr<UpdateRule>> rules_;  // by partition
  const int push_buffers_;
  const Clock* const clock_;
  const std::string incarnation_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<ShardStore>> stores_ ABSL_GUARDED_BY(mu_);  // by partition
  SnapshotSlot snapshot_;
  std::unique_ptr<EmbeddingStore> embeddings_;
  absl::Notification evaluator_done_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> observed_[2] = {};
  // Lock order: members_mu_, then a rule's own lock (its step may run waiting pulls' replies).
  mutable absl::Mutex members_mu_;
  std::optional<Membership> members_ ABSL_GUARDED_BY(members_mu_);
  // members_->live(), or -1: read without members_mu_ by replies, which a rule's step may run
  // while members_mu_ is held.
  std::atomic<int> live_{-1};
  std::atomic<int64_t> silence_checks_{0};
  // Tells every rule the live count; `why` and `replica` for the log.
  void ReplicasChanged(absl::string_view why, const std::string& replica)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(members_mu_);
  std::thread ticker_;  // expires the deadlines of waiting pulls and silent replicas
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_
