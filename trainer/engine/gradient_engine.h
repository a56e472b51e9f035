// How a training replica computes, whatever the model and the device: the dense variables it
// trains (which the dense parameter-server path moves, trainer/worker/ps_client.h), the loss and
// gradient of its next batch, what else it keeps on the servers, and its evaluation. The step
// loop (trainer/worker/replica.cc) and the evaluator never ask which engine they have:
//   dense_engine.h   the dense models (toy, softmax, mlp) on the CPU, or on GPUs (--device cuda)
//   sparse_engine.h  the recommendation models (lr, fm, deepfm, widedeep), whose embedding rows
//                    travel on their own path (trainer/worker/sparse_client.h) inside Gradient()
// Thread-compatible: one replica's loop (or the evaluator) owns an engine.
#ifndef DISTTRAIN_TRAINER_ENGINE_GRADIENT_ENGINE_H_
#define DISTTRAIN_TRAINER_ENGINE_GRADIENT_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/checkpoint/table_checkpoint.h"
#include "trainer/cluster_spec.h"
#include "trainer/models/model.h"
#include "trainer/options.h"

namespace disttrain::trainer {

class GradientEngine {
 public:
  virtual ~GradientEngine() = default;

  // The variables of the dense parameter-server path, and their seeded initial values.
  virtual std::vector<VariableSpec> Variables() const = 0;
  virtual Params Initialize(uint64_t seed) const = 0;
  // Batches one Gradient() call computes (towers), for the step reporter's counts.
  virtual int batches_per_gradient() const { return 1; }
  // False for the toy problem, which has no data (its variables are its result).
  virtual bool needs_data() const { return true; }

  // The mean loss of the next batch at `at`, and its gradient in `grads` (shaped like `at`).
  // An engine that exchanges with the servers itself keeps the first failure for TakeError()
  // (and returns 0): the step loop then drops the round and reconnects.
  virtual float Gradient(const Params& at, Params* grads) = 0;
  virtual absl::Status TakeError() { return absl::OkStatus(); }
  // The servers were restored or restarted: drop what refers to their old values.
  virtual void Reset() {}
  // Sends what the engine still holds for the servers (the last batch's row gradients).
  virtual absl::Status Flush() { return absl::OkStatus(); }

  // The chief, before it initialises or restores the dense variables: sets up what else the
  // servers hold, restored from the checkpoint at `restore_step` in `model_dir` (fresh when none).
  virtual absl::Status PrepareServers(const std::string& model_dir,
                                      std::optional<int64_t> restore_step) {
    return absl::OkStatus();
  }
  // The embedding tables the servers hold besides the dense variables, which the chief's
  // in-memory copy (worker/ps_copy.h) keeps too; none for the dense models.
  virtual std::vector<std::string> ServerTableNames() const { return {}; }
  // The chief, restoring from its in-memory copy instead of a checkpoint: sets up what else the
  // servers hold afresh, with the rows `read` passes (PsCopy::ReadTables).
  using ReadRows = absl::FunctionRef<absl::Status(TableRowsFn)>;
  virtual absl::Status PrepareServersFromCopy(ReadRows read) { return absl::OkStatus(); }
  // The chief, after writing the dense checkpoint of `step`: saves what else the servers hold,
  // keeping what the newest `keep` checkpoints need.
  virtual absl::Status SaveCheckpoint(const std::string& model_dir, int64_t step, int keep) {
    return absl::OkStatus();
  }

  // Evaluates `params` on the engine's evaluation examples: the test split for the evaluator,
  // the first examples of its own shard for a replica.
  virtual EvalResult Evaluate(const Params& params) = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_ENGINE_GRADIENT_ENGINE_H_
