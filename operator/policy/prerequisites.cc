#include "operator/policy/prerequisites.h"

#include <optional>

#include "operator/policy/network_policy_builder.h"
#include "operator/policy/pod_group_builder.h"
#include "operator/policy/tls_secret_builder.h"

namespace disttrain::policy {

std::vector<Prerequisite> BuildPrerequisites(const api::DistributedTraining& job,
                                             const BuildOptions& options, absl::Time now) {
  std::vector<Prerequisite> out;
  if (std::optional<nlohmann::json> workload = BuildGangWorkload(job, options)) {
    out.push_back({PrerequisiteKind::kGangWorkload, *std::move(workload)});
  }
  if (job.spec.run_policy.scheduling_policy) {
    absl::StatusOr<std::optional<nlohmann::json>> group = BuildPodGroup(job, options);
    if (group.ok() && group->has_value()) {
      out.push_back({PrerequisiteKind::kPodGroup, **std::move(group)});
    }
  }
  if (std::optional<nlohmann::json> policy = BuildNetworkPolicy(job, options)) {
    out.push_back({PrerequisiteKind::kNetworkPolicy, *std::move(policy)});
  }
  if (job.spec.tls.enabled) {
    out.push_back({PrerequisiteKind::kTlsSecret, BuildTlsSecret(job, options, now)});
  }
  return out;
}

}  // namespace disttrain::policy
