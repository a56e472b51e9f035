#include "trainer/options.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace disttrain::trainer {

namespace {

absl::StatusOr<std::vector<float>> ParseRates(const TrainerOptions& o) {
  if (o.mode != "sync")
    return absl::InvalidArgumentError("--worker-learning-rates is for --mode sync only");
  std::vector<float> rates;
  for (absl::string_view part : absl::StrSplit(o.worker_learning_rates, ',')) {
    float rate = 0;
    if (!absl::SimpleAtof(part, &rate) || !(rate > 0))
      return absl::InvalidArgumentError(
          absl::StrCat("--worker-learning-rates: \"", part, "\" is not a positive number"));
    rates.push_back(rate);
  }
  return rates;
}

}  // namespace

void RegisterFlags(FlagSet* f, TrainerOptions* o) {
  f->String("mode", &o->mode,
            absl::StrCat("Training scheme: ", SchemeNames(),
                         " (docs/trainer.md has each one's update rule). Unless set, --steps and "
                         "--learning-rate take the scheme's defaults: ",
                         SchemeDefaultsHelp(), "."));
  f->Double("learning-rate", &o->learning_rate,
            "Learning rate (eta) of the servers' updates and of the workers' local steps; the "
            "default depends on --mode.");
  f->Int("local-steps", &o->local_steps,
         "Local steps per exchange with the servers: lambda of downpour, downpour-sgd, agn and "
         "sagn, tau of aeasgd and aeamsgd (ignored by the other schemes).");
  f->Double("elastic-alpha", &o->elastic_alpha,
            "aeasgd/aeamsgd: the moving rate alpha; negative means 5 x --learning-rate (rho = 5, "
            "as the EASGD paper), at most 0.9 / training replicas (the live ones, as workers "
            "join and leave).");
  f->Double("momentum", &o->momentum, "aeamsgd: the Nesterov momentum delta of the local steps.");
  f->Double("adagrad-initial-accumulator", &o->adagrad_initial_accumulator,
            "downpour: the starting value of the Adagrad accumulators (workers' and servers').");
  f->String("worker-learning-rates", &o->worker_learning_rates,
            "sync: one learning rate per training replica (chief first, then the workers), "
            "comma-separated; each replica's gradients are weighted by its rate.");
  f->Int("local-replicas", &o->local_replicas,
         "Towers per training replica (one thread each) that compute gradients on separate "
         "batches, averaged locally before one push. 0 (the default): one per visible GPU with "
         "--device cuda, else 1.");
  f->String("device", &o->device,
            "cpu, or cuda: the MLP's forward and backward pass run on the GPUs this process sees "
            "(NVIDIA_VISIBLE_DEVICES as Kubernetes' device plugin sets it, CUDA_VISIBLE_DEVICES), "
            "tower t of --local-replicas on GPU t mod their number; exits 2 when the binary has "
            "no CUDA kernels or no GPU is visible.");
  f->String("eval-source", &o->eval_source,
            "evaluator: where checkpoints come from: ps (the chief publishes each checkpoint to "
            "ps 0 over gRPC; no shared volume) or model-dir (read from --model-dir).");
  f->Int("final-snapshot-seconds", &o->final_snapshot_seconds,
         "ps 0, on SIGTERM: when it holds the chief's final checkpoint and an evaluator follows "
         "it, it keeps serving it until the evaluator has fetched it, at most this long (keep "
         "it under the pod's terminationGracePeriodSeconds, 30 s by default); 0: stop at once.");
  f->Int("batch-size", &o->batch_size, "Examples per replica per step.");
  f->Int("steps", &o->steps,
         "Global steps to train; the chief finishes at this global step. The default depends on "
         "--mode.");
  f->String("model", &o->model,
            "Dense models on Fashion-MNIST: toy, softmax or mlp. Recommendation models on the "
            "data --schema describes, with embedding tables on the parameter servers: lr "
            "(logistic regression), fm (factorization machine), deepfm, widedeep (Wide & Deep).");
  f->String("hidden", &o->hidden,
            "Hidden layers of --model mlp, deepfm and widedeep: their widths, comma-separated, "
            "input side first (100: one layer of 100 ReLU units; 1024,1024: two of 1024).");
  f->String("dataset", &o->dataset, "fashion-mnist (IDX files; ignored by --model toy).");
  f->String("data-dir", &o->data_dir,
            "Folder of the IDX files (default /usr/share/datasets/fashion-mnist); for the "
            "recommendation models, the folder relative file names of the schema resolve in "
            "(default: the schema file's own folder).");
  f->String("schema", &o->schema,
            "Recommendation models: the schema file (YAML or JSON) naming the data files, their "
            "columns and the embedding tables (docs/trainer.md#the-schema-file).");
  f->Bool("skip-bad-records", &o->skip_bad_records,
          "Recommendation models: skip (and count) records the schema cannot read instead of "
          "stopping with an error that names the file, line or record and column.");
  f->Int("full-checkpoint-every", &o->full_checkpoint_every,
         "Recommendation models: every Nth checkpoint of the embedding tables holds all their "
         "rows; the ones between hold the rows changed since the checkpoint before.");
  f->String("model-dir", &o->model_dir,
            "Where the chief writes checkpoints and the evaluator reads them.");
  f->Int("checkpoint-steps", &o->checkpoint_steps, "Global steps between checkpoints.");
  f->Int("keep-checkpoints", &o->keep_checkpoints, "Checkpoints kept in --model-dir.");
  f->Double("ps-copy-seconds", &o->ps_copy_seconds,
            "The chief keeps an in-memory copy of the parameter servers' variables, pulled this "
            "often (a pull never more than a tenth of the time); a parameter server that dies is "
            "restored from it, losing about this many seconds of updates rather than everything "
            "since the last checkpoint. 0: no copy (restores come from checkpoints). Models with "
            "embedding tables restore from checkpoints unless --ps-copy-tables.");
  f->Bool("ps-copy-tables", &o->ps_copy_tables,
          "Recommendation models: the chief's copy (--ps-copy-seconds) also keeps every embedding "
          "row, merged each round from the rows the servers changed since the last, so a parameter "
          "server that dies gets its rows back from the copy rather than from the last table "
          "checkpoint. Costs the tables' size in the chief's memory (about 110 bytes a row of 16 "
          "floats with adagrad).");
  f->Int("seed", &o->seed, "Seed of the initial values and of each replica's data order.");
  f->Int("replicas-to-aggregate", &o->replicas_to_aggregate,
         "sync: gradients averaged per step; fewer than the replicas makes the rest backup workers "
         "(0: one per live replica, as workers join and leave).");
  f->Int("log-every", &o->log_every, "Steps between step events on stdout.");
  f->Int("retry-seconds", &o->retry_seconds,
         "How long parameter servers may be unreachable before exiting 138.");
  f->Int("replica-timeout-seconds", &o->replica_timeout_seconds,
         "ps: a training replica that made no call for this long while others did counts as "
         "gone, and synchronous "
         "steps stop waiting for its gradient (a replica stopped with SIGTERM says so at once); "
         "it counts again from its next push. 0: only when it says so.");
  f->Int("eval-examples", &o->eval_examples, "Test examples the evaluator uses.");
  f->Int("ps-connections", &o->ps_connections,
         "Connections from every worker to every parameter server (the servers hold their shards "
         "in as many partitions), so one server's traffic uses several cores: a server's share "
         "under 1 MiB uses one, then one per 32 MiB, at least two and at most this many. Every "
         "task must use the same value.");
  f->Int(
      "ps-push-buffers", &o->ps_push_buffers,
      "ps: pushes received at once per partition, each held whole (in the buffers it arrived in) "
      "until complete; resident memory is about (1 + this) x the server's share of the model.");
  f->String("summary-dir", &o->summary_dir,
            "TensorBoard event files: the chief writes loss, global_step/sec and examples/sec to "
            "<dir>/train, the evaluator accuracy and loss to <dir>/eval (default: --model-dir).");
  f->String("metrics-address", &o->metrics_address,
            "Where /metrics (Prometheus) and /healthz are served, \"host:port\" or \":port\"; "
            "\"0\" turns them off. The pod port is named \"metrics\".");
  if (const char* env = std::getenv("DISTTRAIN_TLS_DIR"); env != nullptr) o->tls_dir = env;
  f->String("tls-dir", &o->tls_dir,
            "Mutual TLS between tasks: a directory holding ca.crt (the job's CA), tls.crt and "
            "tls.key (this task's certificate); servers then require a client certificate of "
            "the same CA and clients verify the server's. Default: $DISTTRAIN_TLS_DIR (the "
            "operator sets it for spec.tls); empty: plaintext.");
  f->String("termination-message-path", &o->termination_message_path,
            "The chief and the evaluator write their final result here as JSON when the file "
            "exists (Kubernetes creates it; the operator copies it into the job's status).");
}

void ApplySchemeDefaults(const FlagSet& flags, int num_replicas, TrainerOptions* o) {
  absl::StatusOr<Scheme> scheme = ParseScheme(o->mode);
  if (!scheme.ok()) return;
  const SchemeDefaults d = DefaultsFor(*scheme, num_replicas);
  if (!flags.WasSet("steps")) o->steps = d.steps;
  if (!flags.WasSet("learning-rate")) o->learning_rate = d.learning_rate;
}

absl::StatusOr<std::vector<int>> ParseHiddenLayers(absl::string_view hidden) {
  // Bounds that keep every size computation in range: 32 layers of 64Ki units is already far
  // beyond what one worker trains.
  constexpr int kMaxLayers = 32, kMaxWidth = 1 << 16;
  if (hidden.empty())
    return absl::InvalidArgumentError(
        "--hidden is empty: give layer widths such as 100 or 512,512");
  std::vector<int> widths;
  for (absl::string_view part : absl::StrSplit(hidden, ',')) {
    int width = 0;
    if (!absl::SimpleAtoi(part, &width) || width < 1 || width > kMaxWidth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--hidden \"", hidden, "\": \"", part, "\" is not a layer width from 1 to ", kMaxWidth));
    }
    widths.push_back(width);
  }
  if (widths.size() > kMaxLayers)
    return absl::InvalidArgumentError(absl::StrCat("--hidden: at most ", kMaxLayers, " layers"));
  return widths;
}

std::string SummaryDir(const TrainerOptions& o, const std::string& run) {
  return absl::StrCat(o.summary_dir.empty() ? o.model_dir : o.summary_dir, "/", run);
}

absl::Status ValidateOptions(const TrainerOptions& o) {
  auto bad = [](absl::string_view m) { return absl::InvalidArgumentError(m); };
  if (absl::StatusOr<Scheme> s = ParseScheme(o.mode); !s.ok()) return s.status();
  if (o.local_steps < 1) return bad("--local-steps must be at least 1");
  if (o.momentum < 0 || o.momentum >= 1) return bad("--momentum must be in [0, 1)");
  if (o.adagrad_initial_accumulator <= 0)
    return bad("--adagrad-initial-accumulator must be positive");
  if (o.local_replicas < 0 || o.local_replicas > 64)
    return bad("--local-replicas must be between 0 (one per GPU) and 64");
  if (!o.worker_learning_rates.empty()) {
    if (absl::StatusOr<std::vector<float>> r = ParseRates(o); !r.ok()) return r.status();
  }
  if (o.device != "cpu" && o.device != "cuda")
    return bad(absl::StrCat("--device must be cpu or cuda, got \"", o.device, "\""));
  if (o.device == "cuda" && o.model != "mlp") return bad("--device cuda needs --model mlp");
  if (o.eval_source != "ps" && o.eval_source != "model-dir")
    return bad(absl::StrCat("--eval-source must be ps or model-dir, got \"", o.eval_source, "\""));
  if (o.learning_rate <= 0) return bad("--learning-rate must be positive");
  if (o.final_snapshot_seconds < 0) return bad("--final-snapshot-seconds must not be negative");
  if (o.replica_timeout_seconds < 0) return bad("--replica-timeout-seconds must not be negative");
  if (o.batch_size < 1) return bad("--batch-size must be at least 1");
  if (o.steps < 1) return bad("--steps must be at least 1");
  if (o.checkpoint_steps < 1) return bad("--checkpoint-steps must be at least 1");
  if (o.keep_checkpoints < 1) return bad("--keep-checkpoints must be at least 1");
  if (!(o.ps_copy_seconds >= 0 && o.ps_copy_seconds <= 3600))
    return bad("--ps-copy-seconds must be between 0 and 3600");
  if (o.ps_connections < 1 || o.ps_connections > 64)
    return bad("--ps-connections must be between 1 and 64");
  if (o.ps_push_buffers < 1) return bad("--ps-push-buffers must be at least 1");
  if (o.replicas_to_aggregate < 0) return bad("--replicas-to-aggregate must not be negative");
  if (o.dataset != "fashion-mnist")
    return bad(absl::StrCat("--dataset \"", o.dataset, "\" is not fashion-mnist"));
  const bool sparse =
      o.model == "lr" || o.model == "fm" || o.model == "deepfm" || o.model == "widedeep";
  if (o.model != "toy" && o.model != "softmax" && o.model != "mlp" && !sparse) {
    return bad(absl::StrCat("--model \"", o.model,
                            "\" is not toy, softmax, mlp, lr, fm, deepfm or widedeep"));
  }
  if (sparse && o.schema.empty())
    return bad(
        absl::StrCat("--model ", o.model, " needs --schema (the data's columns and tables)"));
  if (!sparse && !o.schema.empty())
    return bad("--schema is for the recommendation models (lr, fm, deepfm, widedeep)");
  if (o.full_checkpoint_every < 1) return bad("--full-checkpoint-every must be at least 1");
  if (o.model == "mlp" || o.model == "deepfm" || o.model == "widedeep") {
    if (absl::StatusOr<std::vector<int>> h = ParseHiddenLayers(o.hidden); !h.ok())
      return h.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<SchemeConfig> MakeSchemeConfig(const TrainerOptions& o, int num_replicas) {
  absl::StatusOr<Scheme> scheme = ParseScheme(o.mode);
  if (!scheme.ok()) return scheme.status();
  SchemeConfig c;
  c.scheme = *scheme;
  c.learning_rate = static_cast<float>(o.learning_rate);
  c.local_steps = HasLocalSteps(c.scheme) ? static_cast<int>(o.local_steps) : 1;
  c.elastic_alpha = o.elastic_alpha >= 0 ? static_cast<float>(o.elastic_alpha)
                                         : DefaultElasticAlpha(o.learning_rate, num_replicas);
  c.elastic_alpha_follows = o.elastic_alpha < 0;
  c.momentum = c.scheme == Scheme::kAeamsgd ? static_cast<float>(o.momentum) : 0.0f;
  c.adagrad_initial_accumulator = static_cast<float>(o.adagrad_initial_accumulator);
  c.replicas_to_aggregate =
      o.replicas_to_aggregate > 0 ? static_cast<int>(o.replicas_to_aggregate) : num_replicas;
  c.aggregate_every_replica = o.replicas_to_aggregate == 0;
  if (IsSynchronous(c.scheme) && c.replicas_to_aggregate > num_replicas) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replicas-to-aggregate ", c.replicas_to_aggregate,
                     " exceeds the training replicas (", num_replicas, ")"));
  }
  if (c.elastic_alpha > 1 && (c.scheme == Scheme::kAeasgd || c.scheme == Scheme::kAeamsgd))
    return absl::InvalidArgumentError("--elastic-alpha must be at most 1");
  if (!o.worker_learning_rates.empty()) {
    absl::StatusOr<std::vector<float>> rates = ParseRates(o);
    if (!rates.ok()) return rates.status();
    c.worker_learning_rates = *std::move(rates);
    if (static_cast<int>(c.worker_learning_rates.size()) != num_replicas) {
      return absl::InvalidArgumentError(absl::StrCat("--worker-learning-rates lists ",
                                                     c.worker_learning_rates.size(), " rates for ",
                                                     num_replicas, " training replicas"));
    }
  }
  return c;
}

}  // namespace disttrain::trainer
