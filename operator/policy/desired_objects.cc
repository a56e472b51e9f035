#include "operator/policy/desired_objects.h"

#include "operator/api/names.h"
#include "operator/policy/network_policy_builder.h"
#include "operator/policy/pod_builder.h"
#include "operator/policy/pod_group_builder.h"
#include "operator/policy/service_builder.h"

namespace disttrain::policy {

absl::StatusOr<DesiredObjects> BuildDesiredObjects(const api::DistributedTraining& job,
                                                   const BuildOptions& options) {
  DesiredObjects out;
  absl::StatusOr<std::optional<nlohmann::json>> group = BuildPodGroup(job, options);
  if (!group.ok()) return group.status();
  out.pod_group = *std::move(group);
  out.gang_workload = BuildGangWorkload(job, options);
  out.network_policy = BuildNetworkPolicy(job, options);
  if (api::NeedsJobService(job)) out.job_service = BuildJobService(job);

  for (api::ReplicaType type : api::kReplicaTypes) {
    auto it = job.spec.replica_specs.find(type);
    if (it == job.spec.replica_specs.end()) continue;
    for (int i = 0; i < it->second.replicas; ++i) {
      absl::StatusOr<BuiltPod> pod = BuildPod(job, type, i, options);
      if (!pod.ok()) return pod.status();
      out.warnings.insert(out.warnings.end(), pod->warnings.begin(), pod->warnings.end());
      out.replicas.push_back(
          {type, i, api::UsesJobService(job) ? nlohmann::json() : BuildService(job, type, i),
           std::move(pod->pod)});
    }
  }
  return out;
}

}  // namespace disttrain::policy
