// Metadata shared by every object the operator creates for a job: name, namespace, the
// disttrain.io labels and the controller ownerReference. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_CHILD_META_H_
#define DISTTRAIN_OPERATOR_POLICY_CHILD_META_H_

#include <string>

#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::policy {

// Labels selecting exactly one replica's pod: job name, replica type and index.
nlohmann::json ReplicaSelector(const api::DistributedTraining& job, api::ReplicaType type,
                               int index);

// metadata for a replica's Pod or Service: the selector labels, the managed-by label, the chief
// role label where it applies, and a controller ownerReference to the job (uid left out when the
// job has none yet, as in `render`).
nlohmann::json ReplicaMeta(const api::DistributedTraining& job, api::ReplicaType type, int index);

// The controller ownerReference pointing at `job`.
nlohmann::json OwnerReference(const api::DistributedTraining& job);

// The label selector ("k=v,k=v") of every pod of one role of the job.
std::string RoleSelector(const api::DistributedTraining& job, api::ReplicaType type);

// True when the spec no longer has replica (type, index): its role was scaled below the index
// (or removed) while its pod existed.
bool IsSurplusReplica(const api::DistributedTraining& job, api::ReplicaType type, int index);

// True when replica (type, index) decides the job's success: the chief, or worker 0 without one.
bool IsSuccessReplica(const api::DistributedTraining& job, api::ReplicaType type, int index);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_CHILD_META_H_
