// The trainer's flags, shared by every role, and the documented exit codes.
#ifndef DISTTRAIN_TRAINER_OPTIONS_H_
#define DISTTRAIN_TRAINER_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/flags.h"

namespace disttrain::trainer {

// Exit codes (docs/trainer.md): 0 done, 1 internal error, 2 invalid configuration (permanent:
// bad TF_CONFIG or flags), 138 transient failure (parameter servers unreachable past the retry
// budget) that the operator's ExitCode policy retries.
inline constexpr int kExitTransient = 138;

struct TrainerOptions {
  std::string mode = "sync";
  double learning_rate = 0.1;
  int64_t batch_size = 64;
  int64_t steps = 1000;
  std::string model = "mlp";
  int64_t hidden = 100;
  std::string dataset = "fashion-mnist";
  std::string data_dir;
  std::string model_dir = "/tmp/disttrain-model";
  int64_t checkpoint_steps = 100;
  int64_t keep_checkpoints = 5;
  int64_t seed = 1;
  int64_t replicas_to_aggregate = 0;  // sync: 0 means every training replica
  int64_t log_every = 50;
  int64_t retry_seconds = 60;  // how long peers may be unreachable before exiting 138
  int64_t eval_examples = 10000;
  int64_t ps_push_buffers = 1;  // ps: pushes received at once (each buffered whole)
  int64_t ps_connections = 2;   // partitions per ps = connections from each worker to each ps
  std::string summary_dir;      // TensorBoard event files; empty: --model-dir
  std::string metrics_address = ":9095";
  std::string termination_message_path = "/dev/termination-log";
};

// Where TensorBoard event files go: the chief's under train/, the evaluator's under eval/.
std::string SummaryDir(const TrainerOptions& options, const std::string& run);

void RegisterFlags(FlagSet* flags, TrainerOptions* options);
absl::Status ValidateOptions(const TrainerOptions& options);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_OPTIONS_H_
