// The chief's and a worker's training loop (roles.h's RunReplica), split over replica.cc (the
// loop, its start and end, checkpoints) and replica_compute.cc (batches and gradients, on the CPU
// or the GPUs); what it sends and reads is step_tracker.h's, what it reports step_reporter.h's.
// Internal to trainer/worker. Not thread-safe: one thread runs it (the towers' threads only
// within Gradient).
#ifndef DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_
#define DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "trainer/cluster_spec.h"
#include "trainer/data/dataset.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/models/model.h"
#include "trainer/options.h"
#include "trainer/schemes/scheme.h"
#include "trainer/setup.h"
#include "trainer/worker/ps_client.h"
#include "trainer/worker/schemes/worker_scheme.h"
#include "trainer/worker/step_reporter.h"

namespace disttrain::trainer::internal {

class Replica {
 public:
  Replica(const ClusterSpec& spec, const TrainerOptions& o, Setup setup, SchemeConfig scheme);

  int Run(const std::atomic<bool>& stop);
  // Computes the MLP's gradients on `devices` GPUs: one device context per tower, tower t on
  // GPU t mod `devices`.
  absl::Status UseCuda(int devices);

 private:
  // Handles an unreachable or failing peer; false once the retry budget is spent.
  bool Tolerate(const absl::Status& s);
  void Recovered();
  bool AwaitInitialized(int* exit_code);
  absl::Status InitializeOrRestore();
  // `final`: the last one, after training (ps 0 holds it for the evaluator when stopping).
  void SaveCheckpoint(int64_t step, const Params& params, bool final = false);
  void CheckpointBeforeStopping();
  // The next batch's loss and gradient at `at`; with --local-replicas N, the mean over N batches
  // computed by N threads.
  float Gradient(const Params& at, Params* grads);
  // Tower t's next batch; with --device cuda it is gathered straight into the GPU's staging
  // buffer and its upload started.
  Batch Fetch(int tower);
  // One tower's batch, on its GPU with --device cuda (staged there by Fetch, or copied now).
  float TowerGradient(int tower, const Params& at, const Batch& batch, Params* grads);
  int Finish();

  const ClusterSpec& spec_;
  const TrainerOptions& o_;
  Setup setup_;
  const bool chief_;
  const bool sync_;
  const int towers_;
  std::unique_ptr<WorkerScheme> scheme_;
  std::vector<Params> tower_grads_;
  // --device cuda: each tower's device context (empty: the CPU computes); cuda_failed_ once a
  // GPU failed, after which every tower computes on the CPU.
  std::vector<std::unique_ptr<kernels::CudaMlp>> cuda_;
  std::atomic<bool> cuda_failed_ = false;
  const std::vector<VariableSpec> variables_;
  PsClient client_;
  std::unique_ptr<v1::ParameterServer::Stub> snapshot_stub_;  // to ps 0, made at first use
  Dataset shard_;
  std::vector<Dataset> tower_shards_;                    // with --local-replicas > 1
  std::vector<std::unique_ptr<BatchIterator>> batches_;  // by tower; empty without data
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
  // By tower: its fetched batch is staged on its GPU. Not vector<bool>: the towers' threads
  // write their own elements at once.
  std::vector<char> staged_;
  // By tower: a batch gathered into the GPU's staging buffer whose upload then failed.
  std::vector<std::vector<float>> unstaged_x_;
  std::vector<std::vector<int32_t>> unstaged_y_;
};

}  // namespace disttrain::trainer::internal

#endif  // DISTTRAIN_TRAINER_WORKER_INTERNAL_REPLICA_H_
