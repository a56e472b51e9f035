// The headless Services that give a job's pods the stable DNS names TF_CONFIG lists: one named
// like the job, or one per replica (api::Addressing). Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_

#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::policy {

// Named like the pod, clusterIP None, selecting exactly that pod, and publishing its address
// before it is ready, so peers resolve it while the pod starts (workers dialling parameter
// servers that are still starting must not die on DNS errors).
nlohmann::json BuildService(const api::DistributedTraining& job, api::ReplicaType type, int index);

// Named like the job, clusterIP None, selecting every pod of the job (each sets hostname and
// subdomain, so it resolves as <pod>.<job>.<ns>.svc), publishing addresses before readiness.
// Its ports are the roles' TF_CONFIG ports ("tfjob-port", or "tfjob-port-<n>" when the roles
// use several).
nlohmann::json BuildJobService(const api::DistributedTraining& job);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_
