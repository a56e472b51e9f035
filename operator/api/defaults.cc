#include "operator/api/defaults.h"

#include "operator/api/job_kind.h"

namespace disttrain::api {

void ApplyDefaults(DistributedTraining* job) {
  RunPolicy& run = job->spec.run_policy;
  if (!run.backoff_limit) {
    run.backoff_limit = job->kind == &kTfJobKind ? kTfJobDefaultBackoffLimit : kDefaultBackoffLimit;
  }
  if (!run.node_loss_toleration_seconds && job->kind != &kTfJobKind) {
    run.node_loss_toleration_seconds = kDefaultNodeLossTolerationSeconds;
  }
  if (run.scheduling_policy && !run.scheduling_policy->min_available) {
    int32_t total = 0;
    for (const auto& [type, replica] : job->spec.replica_specs) total += replica.replicas;
    run.scheduling_policy->min_available = total;
  }
}

}  // namespace disttrain::api
