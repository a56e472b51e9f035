// A controller runs a Reconciler over the keys of a WorkQueue with N workers. A key is never
// reconciled by two workers at once. Errors requeue the key with per-key backoff; a result may
// ask for a requeue after a delay (time-based policies use that, never a sleep).
// Metrics: controller_runtime_reconcile_total{controller,result},
// controller_runtime_reconcile_errors_total{controller}, controller_runtime_reconcile_time_seconds,
// controller_runtime_reconcile_panics_total{controller}; the counters exist at 0 from construction.
// Thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_CONTROLLER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_CONTROLLER_H_

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "operator/runtime/work_queue.h"

namespace disttrain::runtime {

struct ReconcileResult {
  std::optional<absl::Duration> requeue_after;
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // `key` is "namespace/name". Must be idempotent: it may run any number of times.
  virtual absl::StatusOr<ReconcileResult> Reconcile(const std::string& key) = 0;
};

class Controller {
 public:
  Controller(std::string name, Reconciler* reconciler, WorkQueue* queue, int workers,
             MetricsRegistry* metrics);
  ~Controller();

  void Start();
  // Shuts the queue down and waits for in-flight reconciles to finish.
  void Stop();
  const std::string& name() const { return name_; }

 private:
  void Work();
  absl::StatusOr<ReconcileResult> SafeReconcile(const std::string& key);

  const std::string name_;
  Reconciler* const reconciler_;
  WorkQueue* const queue_;
  const int workers_;
  std::vector<std::thread> threads_;
  MetricFamily* total_;
  MetricFamily* errors_;
  MetricFamily* time_;
  MetricFamily* panics_;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_CONTROLLER_H_
