// Everything that must exist in the cluster for a job: its PodGroup (with gang scheduling), its
// NetworkPolicy (unless turned off), its headless Service (one per job, or one per replica: see
// api::Addressing) and one Pod per replica. The
// reconciler creates what is missing; `render` prints it. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_DESIRED_OBJECTS_H_
#define DISTTRAIN_OPERATOR_POLICY_DESIRED_OBJECTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"
#include "operator/policy/pod_builder.h"

namespace disttrain::policy {

struct ReplicaObjects {
  api::ReplicaType type;
  int index = 0;
  nlohmann::json service;  // null with the job's Service
  nlohmann::json pod;
};

struct DesiredObjects {
  // With kube-scheduler's own gangs, the Workload its PodGroup belongs to.
  std::optional<nlohmann::json> gang_workload;
  std::optional<nlohmann::json> pod_group;
  std::optional<nlohmann::json> network_policy;
  // The job's headless Service (api::NeedsJobService).
  std::optional<nlohmann::json> job_service;
  // In the order Chief, PS, Worker, Evaluator, then by index.
  std::vector<ReplicaObjects> replicas;
  std::vector<BuildWarning> warnings;
};

// `job` must be defaulted and valid (api::ApplyDefaults, api::Validate).
absl::StatusOr<DesiredObjects> BuildDesiredObjects(const api::DistributedTraining& job,
                                                   const BuildOptions& options);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_DESIRED_OBJECTS_H_
