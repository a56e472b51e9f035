#include "operator/runtime/controller.h"

#include "absl/time/clock.h"
#include "common/log.h"

namespace disttrain::runtime {

Controller::Controller(std::string name, Reconciler* reconciler, WorkQueue* queue, int workers,
                       MetricsRegistry* metrics)
    : name_(std::move(name)),
      reconciler_(reconciler),
      queue_(queue),
      workers_(workers),
      total_(metrics->Counter("controller_runtime_reconcile_total",
                              "Total number of reconciliations per controller",
                              {"controller", "result"})),
      errors_(metrics->Counter("controller_runtime_reconcile_errors_total",
                               "Total number of reconciliation errors per controller",
                               {"controller"})),
      time_(metrics->Histogram("controller_runtime_reconcile_time_seconds",
                               "Length of time per reconciliation per controller", {"controller"},
                               MetricsRegistry::DurationBuckets())),
      panics_(metrics->Counter("controller_runtime_reconcile_panics_total",
                               "Total number of reconciliation panics per controller",
                               {"controller"})) {
  // Every series exists from the start, as in controller-runtime, so dashboards and alerts on
  // rates see 0 before the first reconcile instead of no data.
  for (const char* result : {"error", "requeue", "requeue_after", "success"})
    total_->Add({name_, result}, 0);
  errors_->Add({name_}, 0);
  panics_->Add({name_}, 0);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { Work(); });
  LogInfo("controller started", {{"controller", name_}, {"workers", std::to_string(workers_)}});
}

void Controller::Stop() {
  queue_->ShutDown();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

absl::StatusOr<ReconcileResult> Controller::SafeReconcile(const std::string& key) {
  // Nothing thrown in one reconcile may end the process: every other job would lose its
  // controller. The key is retried with backoff like any error.
  try {
    return reconciler_->Reconcile(key);
  } catch (const std::exception& e) {
    panics_->Add({name_}, 1);
    return absl::InternalError(std::string("reconcile threw: ") + e.what());
  } catch (...) {
    panics_->Add({name_}, 1);
    return absl::InternalError("reconcile threw a non-standard exception");
  }
}

void Controller::Work() {
  while (std::optional<std::string> key = queue_->Get()) {
    const absl::Time start = absl::Now();
    absl::StatusOr<ReconcileResult> result = SafeReconcile(*key);
    time_->Observe({name_}, absl::ToDoubleSeconds(absl::Now() - start));
    if (!result.ok()) {
      total_->Add({name_, "error"}, 1);
      errors_->Add({name_}, 1);
      LogWarning("reconcile failed, will retry",
                 {{"controller", name_}, {"key", *key}, {"error", result.status().ToString()}});
      queue_->AddRateLimited(*key);
    } else {
      queue_->Forget(*key);
      if (result->requeue_after) {
        total_->Add({name_, "requeue_after"}, 1);
        queue_->AddAfter(*key, *result->requeue_after);
      } else {
        total_->Add({name_, "success"}, 1);
      }
    }
    queue_->Done(*key);
  }
}

}  // namespace disttrain::runtime
