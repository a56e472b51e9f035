// The NetworkPolicy of a job (spec.networkPolicy, on unless the job or the operator's
// --network-policy turns it off): the job's pods accept connections only from the job's own pods
// (same namespace, the job's labels), on the ports TF_CONFIG lists (jobPorts TFConfig, the
// default) or on every port (All), and on their metrics port also from the peers
// spec.networkPolicy.metricsFrom names. Egress is untouched. Named like the job, labelled like
// its children and owned by it, so the garbage collector deletes it with the job. Pure function;
// thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_NETWORK_POLICY_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_NETWORK_POLICY_BUILDER_H_

#include <optional>

#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

// The trainer's /metrics port (disttrain-trainer --metrics-address :9095), used when the main
// container names no port "metrics".
inline constexpr int kDefaultMetricsPort = 9095;

// True when the job gets a NetworkPolicy: spec.networkPolicy.enabled, else options' default.
bool WantsNetworkPolicy(const api::DistributedTraining& job, const BuildOptions& options);

// nullopt when the job gets none.
std::optional<nlohmann::json> BuildNetworkPolicy(const api::DistributedTraining& job,
                                                 const BuildOptions& options);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_NETWORK_POLICY_BUILDER_H_
