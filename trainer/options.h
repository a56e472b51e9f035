// The trainer's flags, shared by every role, and the documented exit codes.
#ifndef DISTTRAIN_TRAINER_OPTIONS_H_
#define DISTTRAIN_TRAINER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/flags.h"
#include "trainer/schemes/scheme.h"
#include "trainer/schemes/scheme_defaults.h"

namespace disttrain::trainer {

// Exit codes (docs/trainer.md): 0 done, 1 internal error, 2 invalid configuration (permanent:
// bad TF_CONFIG or flags), 138 transient failure (parameter servers unreachable past the retry
// budget) that the operator's ExitCode policy retries.
inline constexpr int kExitTransient = 138;

struct TrainerOptions {
  std::string mode = "sync";
  double learning_rate = kDefaultLearningRate;  // unless set, the scheme's (ApplySchemeDefaults)
  int64_t batch_size = 64;
  int64_t steps = kDefaultSteps;  // unless set, the scheme's (ApplySchemeDefaults)
  std::string model = "mlp";
  std::string hidden = "100";  // widths of the MLP's hidden layers, comma-separated
  std::string dataset = "fashion-mnist";
  std::string data_dir;
  // Recommendation models (lr, fm, deepfm, widedeep): the schema file of their data
  // (trainer/data/schema.h), whether records it cannot read are skipped (and counted) rather than
  // fatal, and how often a table checkpoint is a full one rather than the rows changed since the
  // last (every Nth).
  std::string schema;
  bool skip_bad_records = false;
  int64_t full_checkpoint_every = 5;
  std::string model_dir = "/tmp/disttrain-model";
  int64_t checkpoint_steps = 100;
  // chief: seconds between its pulls of the servers' in-memory copy (worker/ps_copy.h); 0: none
  double ps_copy_seconds = 0.5;
  // chief, recommendation models: the copy also keeps the embedding rows (worker/table_copy.h)
  bool ps_copy_tables = false;
  int64_t keep_checkpoints = 5;
  int64_t seed = 1;
  int64_t replicas_to_aggregate = 0;  // sync: 0 means every training replica
  int64_t log_every = 50;
  int64_t retry_seconds = 60;  // how long peers may be unreachable before exiting 138
  // ps: a training replica silent this long no longer counts live (0: only when it leaves)
  int64_t replica_timeout_seconds = 60;
  int64_t eval_examples = 10000;
  int64_t ps_push_buffers = 1;  // ps: pushes received at once per partition (each held whole)
  int64_t ps_connections = 4;   // partitions per ps = connections from each worker to each ps
  std::string summary_dir;      // TensorBoard event files; empty: --model-dir
  std::string metrics_address = ":9095";
  std::string termination_message_path = "/dev/termination-log";
  // Training schemes (trainer/schemes/scheme.h): hyper-parameters beyond --learning-rate.
  int64_t local_steps = 4;    // λ of downpour, downpour-sgd, agn, sagn; τ of aeasgd, aeamsgd
  double elastic_alpha = -1;  // α of aeasgd/aeamsgd; negative: min(5 η, 0.9 / replicas)
  double momentum = 0.9;      // δ of aeamsgd
  double adagrad_initial_accumulator = 0.1;  // downpour
  std::string worker_learning_rates;         // sync: one rate per training replica, comma-separated
  int64_t local_replicas = 0;  // towers per worker averaged locally; 0: one per GPU, or 1 on CPU
  std::string device = "cpu";  // where the MLP's gradients are computed: cpu or cuda
  std::string eval_source = "ps";  // evaluator: "ps" (over gRPC) or "model-dir"
  // ps 0, stopping: how long it keeps serving the final snapshot until the evaluator fetched it.
  int64_t final_snapshot_seconds = 20;
  // Mutual TLS (trainer/wire/transport_security.h): ca.crt, tls.crt, tls.key; empty: plaintext.
  // Defaults to $DISTTRAIN_TLS_DIR, which the operator sets for a job with spec.tls.
  std::string tls_dir;
};

// Where TensorBoard event files go: the chief's under train/, the evaluator's under eval/.
std::string SummaryDir(const TrainerOptions& options, const std::string& run);

void RegisterFlags(FlagSet* flags, TrainerOptions* options);
// Gives the flags that `flags` did not set the defaults of the scheme named by --mode
// (trainer/schemes/scheme_defaults.h) for `num_replicas` training replicas; a flag set on the
// command line keeps its value. Leaves `options` alone when --mode names no scheme.
void ApplySchemeDefaults(const FlagSet& flags, int num_replicas, TrainerOptions* options);
// --hidden: positive layer widths separated by commas ("100", "1024,1024"). InvalidArgument
// naming the bad part otherwise.
absl::StatusOr<std::vector<int>> ParseHiddenLayers(absl::string_view hidden);
absl::Status ValidateOptions(const TrainerOptions& options);

// The scheme and its hyper-parameters for a cluster of `num_replicas` training replicas.
// InvalidArgument for a bad --mode or a hyper-parameter the scheme cannot use.
absl::StatusOr<SchemeConfig> MakeSchemeConfig(const TrainerOptions& options, int num_replicas);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_OPTIONS_H_
