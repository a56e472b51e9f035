// The chief's and a worker's training loop (roles.h's RunReplica): its start and end, the step
// loop and the checkpoints. What it computes is its gradient engine's
// (trainer/engine/gradient_engine.h), what it sends and reads step_tracker.h's, what it reports
// step_reporter.h's. Internal to trainer/worker. Not thread-safe: one thread runs it.
#ifndef DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_
#define DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "trainer/cluster_spec.h"
#include "trainer/engine/gradient_engine.h"
#include "trainer/models/model.h"
#include "trainer/options.h"
#include "trainer/schemes/scheme.h"
#include "trainer/worker/ps_client.h"
#include "trainer/worker/ps_copy.h"
#include "trainer/worker/schemes/worker_scheme.h"
#include "trainer/worker/sparse_client.h"
#include "trainer/worker/step_reporter.h"

namespace disttrain::trainer::internal {

class Replica {
 public:
  Replica(const ClusterSpec& spec, const TrainerOptions& o, std::unique_ptr<GradientEngine> engine,
          SchemeConfig scheme, const Clock* clock = RealClock::Get());

  int Run(const std::atomic<bool>& stop);

 private:
  // Handles an unreachable or failing peer; false once the retry budget is spent.
  bool Tolerate(const absl::Status& s);
  void Recovered();
  bool AwaitInitialized(int* exit_code);
  absl::Status InitializeOrRestore();
  // `final`: the last one, after training (ps 0 holds it for the evaluator when stopping).
  void SaveCheckpoint(int64_t step, const Params& params, bool final = false);
  void CheckpointBeforeStopping();
  int Finish();

  const ClusterSpec& spec_;
  const TrainerOptions& o_;
  const Clock* const clock_;
  std::unique_ptr<GradientEngine> engine_;
  const bool chief_;
  const bool sync_;
  std::unique_ptr<WorkerScheme> scheme_;
  const std::vector<VariableSpec> variables_;
  PsClient client_;
  // The chief's copy of the servers (ps_copy.h): its own connections, and the copy; null when
  // off (--ps-copy-seconds 0, a worker, a model with embedding tables without --ps-copy-tables).
  std::unique_ptr<PsClient> copy_client_;
  std::unique_ptr<SparseClient> copy_rows_client_;  // the copy's exports of embedding rows
  std::unique_ptr<PsCopy> copy_;
  bool copy_started_ = false;
  std::unique_ptr<v1::ParameterServer::Stub> snapshot_stub_;  // to ps 0, made at first use
  absl::Time failing_since_ = absl::InfiniteFuture();
  int64_t last_checkpoint_ = -1;
  bool usage_error_ = false;
  absl::Time train_start_ = absl::InfiniteFuture();  // this replica's first step
  absl::Time train_end_ = absl::InfiniteFuture();    // the pull that reached --steps
  // From the first step on: time in the exchange with the servers (PushPull, including the
  // synchronous wait for the other replicas) and in the scheme's round (the gradient's compute,
  // with --device cuda its copies to and from the GPU). The done event reports both.
  absl::Duration exchange_time_, round_time_;
  std::unique_ptr<StepReporter> reporter_;
};

}  // namespace disttrain::trainer::internal

#endif  // DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_
