#include "operator/policy/running_policy.h"

namespace disttrain::policy {

Readiness CountReadiness(const api::DistributedTraining& job, const PodsByReplica& pods,
                         const std::function<bool(api::ReplicaType, int)>& succeeded) {
  Readiness r;
  for (const auto& [type, spec] : job.spec.replica_specs) {
    for (int i = 0; i < spec.replicas; ++i) {
      if (succeeded(type, i)) continue;
      auto it = pods.find({type, i});
      const PodState* pod = it == pods.end() ? nullptr : &it->second;
      if (pod != nullptr && pod->phase == PodPhase::kFailed && type == api::ReplicaType::kEvaluator)
        continue;
      ++r.wanted;
      if (pod != nullptr && !pod->terminating && pod->phase == PodPhase::kRunning && pod->ready)
        ++r.running;
    }
  }
  return r;
}

}  // namespace disttrain::policy
