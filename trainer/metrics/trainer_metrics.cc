#include "trainer/metrics/trainer_metrics.h"

#include "absl/time/clock.h"

namespace disttrain::trainer {

TrainerMetrics::TrainerMetrics() {
  MetricsRegistry& r = registry;
  global_step = r.Gauge("disttrain_trainer_global_step", "Global step of the variables last seen.");
  target_steps =
      r.Gauge("disttrain_trainer_target_steps", "Global step the training stops at (--steps).");
  examples_per_global_step =
      r.Gauge("disttrain_trainer_examples_per_global_step",
              "Training examples one global step stands for: a replica's commit (its local steps "
              "times its batches), or in synchronous schemes one commit per aggregated replica.");
  loss = r.Gauge("disttrain_trainer_loss", "Training loss of the last step computed here.");
  local_steps = r.Counter("disttrain_trainer_local_steps_total", "Gradients computed here.");
  examples_per_second = r.Gauge("disttrain_trainer_examples_per_second",
                                "Training examples per second on this replica.");
  rpc_seconds = r.Histogram("disttrain_trainer_rpc_duration_seconds",
                            "Parameter-server calls of a step (push_pull: every server at once).",
                            {"op"}, MetricsRegistry::DurationBuckets());
  rpc_bytes = r.Counter("disttrain_trainer_rpc_bytes_total",
                        "Tensor bytes sent to (pushed) or read from (pulled) parameter servers.",
                        {"direction"});
  rpc_errors =
      r.Counter("disttrain_trainer_rpc_errors_total", "Failed parameter-server calls.", {"op"});
  // At zero from the start, so a rate over them (the dashboard's errors panel, an alert) reads
  // 0 for a healthy job rather than no data.
  for (const char* op : {"push_pull", "pull"}) rpc_errors->Add({op}, 0);
  sparse_bytes = r.Counter("disttrain_trainer_sparse_bytes_total",
                           "Embedding-row bytes sent to (pushed: gradients) or read from (pulled: "
                           "rows) parameter servers.",
                           {"direction"});
  checkpoint_step =
      r.Gauge("disttrain_trainer_checkpoint_step", "Global step of the chief's last checkpoint.");
  checkpoint_age_seconds =
      r.Gauge("disttrain_trainer_checkpoint_age_seconds",
              "Seconds since the chief's last checkpoint (0 before the first).");
  ps_applied = r.Counter("disttrain_ps_pushes_applied_total",
                         "Complete gradient pushes applied by this parameter server.");
  ps_dropped = r.Counter("disttrain_ps_pushes_dropped_total",
                         "Complete gradient pushes dropped as stale (synchronous training).");
  ps_refused =
      r.Counter("disttrain_ps_pushes_refused_total",
                "Pushes this parameter server began to receive and refused, nothing of them "
                "applied: cancelled or torn by the client, or malformed (by gRPC code).",
                {"code"});
  ps_live_replicas =
      r.Gauge("disttrain_ps_live_replicas",
              "Training replicas (chief and workers) this parameter server counts live: joined "
              "with a push, not left, not silent past --replica-timeout-seconds.");
  ps_replicas_to_aggregate =
      r.Gauge("disttrain_ps_replicas_to_aggregate",
              "Synchronous training: the gradients the next step averages (follows the live "
              "replicas).");
  eval_accuracy =
      r.Gauge("disttrain_evaluator_accuracy", "Test accuracy of the last checkpoint evaluated.");
  eval_auc = r.Gauge("disttrain_evaluator_auc",
                     "ROC AUC of the last checkpoint evaluated (click-through models).");
  ps_table_rows =
      r.Gauge("disttrain_ps_table_rows", "Rows of an embedding table on this server.", {"table"});
  ps_table_memory_bytes = r.Gauge(
      "disttrain_ps_table_memory_bytes",
      "Bytes an embedding table's rows, optimiser state, index and counts take here.", {"table"});
  ps_table_rows_created = r.Counter("disttrain_ps_table_rows_created_total",
                                    "Rows created (first sight, or once admitted).", {"table"});
  ps_table_evictions = r.Counter("disttrain_ps_table_evictions_total",
                                 "Rows evicted to keep a table within its capacity.", {"table"});
  ps_table_not_admitted = r.Counter(
      "disttrain_ps_table_not_admitted_total",
      "Row gradients dropped because their id was not seen min_count times yet.", {"table"});
  ps_table_rows_pulled =
      r.Counter("disttrain_ps_table_rows_pulled_total", "Rows read by lookups.", {"table"});
  ps_table_rows_updated = r.Counter("disttrain_ps_table_rows_updated_total",
                                    "Rows updated by pushed gradients.", {"table"});
  eval_loss = r.Gauge("disttrain_evaluator_loss", "Test loss of the last checkpoint evaluated.");
  eval_step =
      r.Gauge("disttrain_evaluator_global_step", "Global step of the last checkpoint evaluated.");
}

void TrainerMetrics::SetBeforeScrape(std::function<void()> fn) {
  absl::MutexLock lock(&scrape_mu_);
  before_scrape_ = std::move(fn);
}

std::string TrainerMetrics::Render(const std::string& prefix) {
  {
    absl::MutexLock lock(&scrape_mu_);
    if (before_scrape_) before_scrape_();
  }
  const double last = last_checkpoint_unix.load();
  checkpoint_age_seconds->Set({}, last > 0 ? absl::ToUnixMicros(absl::Now()) / 1e6 - last : 0);
  return registry.Render(prefix);
}

TrainerMetrics& Metrics() {
  static TrainerMetrics* metrics = new TrainerMetrics();
  return *metrics;
}

std::string MetricsPrefix(Role role) {
  switch (role) {
    case Role::kPs:
      return "disttrain_ps_";
    case Role::kEvaluator:
      return "disttrain_evaluator_";
    case Role::kChief:
    case Role::kWorker:
      break;
  }
  return "disttrain_trainer_";
}

absl::StatusOr<std::unique_ptr<HttpServer>> ServeMetrics(const std::string& address, Role role) {
  if (address == "0") return nullptr;
  auto server = std::make_unique<HttpServer>();
  server->Handle("/metrics", [prefix = MetricsPrefix(role)] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", Metrics().Render(prefix)};
  });
  server->Handle("/healthz", [] { return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}; });
  if (absl::Status s = server->Start(address); !s.ok()) return s;
  return server;
}

}  // namespace disttrain::trainer
