// The headless Service of one replica: it gives the pod the stable DNS name TF_CONFIG lists.
// Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_

#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::policy {

// Named like the pod, clusterIP None, selecting exactly that pod, and publishing its address
// before it is ready, so peers resolve it while the pod starts (workers dialling parameter
// servers that are still starting must not die on DNS errors).
nlohmann::json BuildService(const api::DistributedTraining& job, api::ReplicaType type, int index);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_SERVICE_BUILDER_H_
