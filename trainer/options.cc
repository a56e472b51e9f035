#include "trainer/options.h"

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

void RegisterFlags(FlagSet* f, TrainerOptions* o) {
  f->String("mode", &o->mode,
            "sync (SyncReplicasOptimizer semantics) or async (every push applied at once).");
  f->Double("learning-rate", &o->learning_rate,
            "SGD learning rate, applied on the parameter servers.");
  f->Int("batch-size", &o->batch_size, "Examples per replica per step.");
  f->Int("steps", &o->steps, "Global steps to train; the chief finishes at this global step.");
  f->String("model", &o->model, "toy, softmax or mlp.");
  f->Int("hidden", &o->hidden, "Hidden units of --model mlp.");
  f->String("dataset", &o->dataset, "fashion-mnist (IDX files; ignored by --model toy).");
  f->String("data-dir", &o->data_dir,
            "Folder of the IDX files; default /usr/share/datasets/fashion-mnist.");
  f->String("model-dir", &o->model_dir,
            "Where the chief writes checkpoints and the evaluator reads them.");
  f->Int("checkpoint-steps", &o->checkpoint_steps, "Global steps between checkpoints.");
  f->Int("keep-checkpoints", &o->keep_checkpoints, "Checkpoints kept in --model-dir.");
  f->Int("seed", &o->seed, "Seed of the initial values and of each replica's data order.");
  f->Int("replicas-to-aggregate", &o->replicas_to_aggregate,
         "sync: gradients averaged per step; fewer than the replicas makes the rest backup workers "
         "(0: all).");
  f->Int("log-every", &o->log_every, "Steps between step events on stdout.");
  f->Int("retry-seconds", &o->retry_seconds,
         "How long parameter servers may be unreachable before exiting 138.");
  f->Int("eval-examples", &o->eval_examples, "Test examples the evaluator uses.");
  f->Int("ps-connections", &o->ps_connections,
         "Connections from every worker to every parameter server (the servers hold their shards "
         "in as many "
         "partitions), so one server's traffic uses several cores. Every task must use the same "
         "value.");
  f->Int(
      "ps-push-buffers", &o->ps_push_buffers,
      "ps: pushes received at once, each buffered whole until complete; resident memory is about "
      "(1 + this) x the server's share of the model.");
  f->String("summary-dir", &o->summary_dir,
            "TensorBoard event files: the chief writes loss, global_step/sec and examples/sec to "
            "<dir>/train, the evaluator accuracy and loss to <dir>/eval (default: --model-dir).");
  f->String("metrics-address", &o->metrics_address,
            "Where /metrics (Prometheus) and /healthz are served, \"host:port\" or \":port\"; "
            "\"0\" turns them off. The pod port is named \"metrics\".");
  f->String("termination-message-path", &o->termination_message_path,
            "The chief and the evaluator write their final result here as JSON when the file "
            "exists (Kubernetes creates it; the operator copies it into the job's status).");
}

std::string SummaryDir(const TrainerOptions& o, const std::string& run) {
  return absl::StrCat(o.summary_dir.empty() ? o.model_dir : o.summary_dir, "/", run);
}

absl::Status ValidateOptions(const TrainerOptions& o) {
  auto bad = [](absl::string_view m) { return absl::InvalidArgumentError(m); };
  if (o.mode != "sync" && o.mode != "async")
    return bad(absl::StrCat("--mode must be sync or async, got \"", o.mode, "\""));
  if (o.learning_rate <= 0) return bad("--learning-rate must be positive");
  if (o.batch_size < 1) return bad("--batch-size must be at least 1");
  if (o.steps < 1) return bad("--steps must be at least 1");
  if (o.checkpoint_steps < 1) return bad("--checkpoint-steps must be at least 1");
  if (o.keep_checkpoints < 1) return bad("--keep-checkpoints must be at least 1");
  if (o.ps_connections < 1 || o.ps_connections > 64)
    return bad("--ps-connections must be between 1 and 64");
  if (o.ps_push_buffers < 1) return bad("--ps-push-buffers must be at least 1");
  if (o.replicas_to_aggregate < 0) return bad("--replicas-to-aggregate must not be negative");
  if (o.dataset != "fashion-mnist")
    return bad(absl::StrCat("--dataset \"", o.dataset, "\" is not fashion-mnist"));
  if (o.model != "toy" && o.model != "softmax" && o.model != "mlp") {
    return bad(absl::StrCat("--model \"", o.model, "\" is not toy, softmax or mlp"));
  }
  if (o.model == "mlp" && o.hidden < 1) return bad("--hidden must be positive for --model mlp");
  return absl::OkStatus();
}

}  // namespace disttrain::trainer
