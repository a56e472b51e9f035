// The objects a job's pods need before the first of them is created: the PodGroup a gang
// scheduler reads, and with kube-scheduler's own gangs the Workload it belongs to
// (pod_group_builder.h), the NetworkPolicy that protects them from their first
// second (network_policy_builder.h), the Secret with their TLS certificates, which they mount
// (tls_secret_builder.h). One list, in creation order: the reconciler creates each in turn and
// creates no pod while one is missing. A new kind of prerequisite is one more entry here and one
// more row in the reconciler's table. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_PREREQUISITES_H_
#define DISTTRAIN_OPERATOR_POLICY_PREREQUISITES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

enum class PrerequisiteKind { kGangWorkload, kPodGroup, kNetworkPolicy, kTlsSecret };

struct Prerequisite {
  PrerequisiteKind kind;
  // An error: it cannot be built, and the job's pods wait (a TLS Secret's keys).
  absl::StatusOr<nlohmann::json> object;
};

// The job's prerequisites, in creation order: with Kubernetes' own gangs its Workload (its
// PodGroup must name an existing one), its PodGroup (runPolicy.schedulingPolicy; one
// whose quantities do not parse is left out, the job is failed for them when its pods are
// built), its NetworkPolicy (WantsNetworkPolicy) and its TLS Secret (spec.tls, certificates
// valid from `now`).
std::vector<Prerequisite> BuildPrerequisites(const api::DistributedTraining& job,
                                             const BuildOptions& options, absl::Time now);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_PREREQUISITES_H_
