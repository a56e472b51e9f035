// The PodGroup that lets a gang scheduler (Volcano or scheduler-plugins' coscheduling) start a
// job's pods all together or not at all. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_POD_GROUP_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_POD_GROUP_BUILDER_H_

#include <optional>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

// nullopt when the job has no schedulingPolicy. Otherwise a PodGroup named like the job with
// minMember = minAvailable (default: every replica) and minResources = the requests (or limits,
// where a container requests nothing) of the first minMember replicas in the order Chief, PS,
// Worker, Evaluator, GPUs included; plus queue and priorityClassName (Volcano) or
// scheduleTimeoutSeconds (scheduler-plugins). InvalidArgument for an unparsable quantity.
absl::StatusOr<std::optional<nlohmann::json>> BuildPodGroup(const api::DistributedTraining& job,
                                                            const BuildOptions& options);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_POD_GROUP_BUILDER_H_
