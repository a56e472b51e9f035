// The PodGroup that lets a gang scheduler (Volcano, scheduler-plugins' coscheduling, or
// kube-scheduler's own GangScheduling with the Workload API) start a job's pods all together or
// not at all. Pure functions; thread-safe.
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
// With GangScheduler::kKubernetes: a scheduling.k8s.io/v1alpha2 PodGroup of the Workload
// BuildGangWorkload makes (podGroupTemplateRef), spec.schedulingPolicy.gang.minCount = that
// minMember; the API makes its spec immutable.
absl::StatusOr<std::optional<nlohmann::json>> BuildPodGroup(const api::DistributedTraining& job,
                                                            const BuildOptions& options);

// The name of the one PodGroup template of a job's Workload.
inline constexpr char kGangTemplateName[] = "gang";

// With GangScheduler::kKubernetes and a schedulingPolicy: the job's scheduling.k8s.io/v1alpha2
// Workload, named and owned like its PodGroup, with one PodGroup template (kGangTemplateName)
// whose gang policy the PodGroup copies. Else nullopt.
std::optional<nlohmann::json> BuildGangWorkload(const api::DistributedTraining& job,
                                                const BuildOptions& options);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_POD_GROUP_BUILDER_H_
