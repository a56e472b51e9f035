#include "operator/policy/running_policy.h"

#include <algorithm>

namespace disttrain::policy {

Readiness CountReadiness(const api::DistributedTraining& job, const PodsByReplica& pods,
                         const std::function<bool(api::ReplicaType, int)>& succeeded) {
  Readiness r;
  for (const auto& [type, spec] : job.spec.replica_specs) {
    int wanted = 0, running = 0;
    for (int i = 0; i < spec.replicas; ++i) {
      if (succeeded(type, i)) continue;
      auto it = pods.find({type, i});
      const PodState* pod = it == pods.end() ? nullptr : &it->second;
      if (pod != nullptr && pod->phase == PodPhase::kFailed && type == api::ReplicaType::kEvaluator)
        continue;
      ++wanted;
      if (pod != nullptr && !pod->terminating && pod->phase == PodPhase::kRunning && pod->ready)
        ++running;
    }
    if (type == api::ReplicaType::kWorker) {
      r.workers_wanted = wanted;
      r.workers_running = running;
      r.workers_enough = job.spec.elastic_policy
                             ? std::min(wanted, job.spec.elastic_policy->min_replicas)
                             : wanted;
    }
    r.wanted += wanted;
    r.running += running;
  }
  return r;
}

}  // namespace disttrain::policy
