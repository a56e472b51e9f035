// The trainer's Prometheus metrics: one process-wide set, since a process plays one role. Every
// role serves them at /metrics on --metrics-address (default :9095, the pod port named
// "metrics"; docs/trainer.md lists them). Thread-safe.
#ifndef DISTTRAIN_TRAINER_METRICS_TRAINER_METRICS_H_
#define DISTTRAIN_TRAINER_METRICS_TRAINER_METRICS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http_server.h"
#include "common/metrics.h"
#include "trainer/cluster_spec.h"

namespace disttrain::trainer {

struct TrainerMetrics {
  TrainerMetrics();

  MetricsRegistry registry;
  // Chief and workers.
  MetricFamily* global_step;  // the step of the variables last pulled
  // The operator's status.progress reads these two with the step (operator/progress/).
  MetricFamily* target_steps;              // the global step training stops at (--steps)
  MetricFamily* examples_per_global_step;  // examples one global step stands for
  MetricFamily* loss;                      // of the last local step
  MetricFamily* local_steps;               // gradients computed here
  MetricFamily* examples_per_second;       // this replica's, over the last few seconds
  MetricFamily* rpc_seconds;               // {op}: push_pull (one step, every server), init
  MetricFamily* rpc_bytes;                 // {direction}: pushed, pulled (tensor bytes)
  MetricFamily* rpc_errors;                // {op}
  MetricFamily* sparse_bytes;              // {direction}: embedding rows pushed, pulled
  // Chief.
  MetricFamily* checkpoint_step;
  MetricFamily* checkpoint_age_seconds;  // refreshed at every scrape
  std::atomic<double> last_checkpoint_unix{0};
  // Parameter servers' embedding tables, refreshed from the tables at every scrape.
  MetricFamily* ps_table_rows;          // {table}
  MetricFamily* ps_table_memory_bytes;  // {table}
  MetricFamily* ps_table_rows_created;  // {table}
  MetricFamily* ps_table_evictions;     // {table}
  MetricFamily* ps_table_not_admitted;  // {table}: gradients dropped, the id not admitted yet
  MetricFamily* ps_table_rows_pulled;   // {table}
  MetricFamily* ps_table_rows_updated;  // {table}
  // `fn` runs before every scrape (the parameter server refreshes its tables' figures).
  void SetBeforeScrape(std::function<void()> fn);
  // Parameter servers.
  MetricFamily* ps_applied;        // complete pushes applied
  MetricFamily* ps_dropped;        // complete pushes dropped as stale (sync)
  MetricFamily* ps_refused;        // {code}: pushes received in part and refused (nothing applied)
  MetricFamily* ps_live_replicas;  // training replicas counted live (membership.h)
  MetricFamily* ps_replicas_to_aggregate;  // sync: gradients the next step averages
  // Evaluator.
  MetricFamily* eval_accuracy;
  MetricFamily* eval_auc;  // click-through models
  MetricFamily* eval_loss;
  MetricFamily* eval_step;

  // The text a scrape returns: the families named `prefix`* (refreshes the checkpoint age first).
  std::string Render(const std::string& prefix);

 private:
  absl::Mutex scrape_mu_;
  std::function<void()> before_scrape_ ABSL_GUARDED_BY(scrape_mu_);
};

TrainerMetrics& Metrics();

// The metric name prefix of a role's families: disttrain_ps_, disttrain_evaluator_ or
// disttrain_trainer_ (chief and workers).
std::string MetricsPrefix(Role role);

// Serves the role's Metrics() at /metrics and "ok" at /healthz on `address` ("host:port" or
// ":port"; "0" disables it and returns null).
absl::StatusOr<std::unique_ptr<HttpServer>> ServeMetrics(const std::string& address, Role role);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_METRICS_TRAINER_METRICS_H_
