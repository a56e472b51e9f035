#include "operator/controller/child_meta.h"

#include "absl/strings/str_cat.h"
#include "operator/api/labels.h"
#include "operator/api/names.h"

namespace disttrain::controller {

using nlohmann::json;

json ReplicaSelector(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  return {{api::kLabelJobName, job.metadata.name},
          {api::kLabelReplicaType, std::string(api::ReplicaTypeRole(type))},
          {api::kLabelReplicaIndex, absl::StrCat(index)}};
}

bool IsSuccessReplica(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  auto chief = job.spec.replica_specs.find(api::ReplicaType::kChief);
  bool has_chief = chief != job.spec.replica_specs.end() && chief->second.replicas > 0;
  if (has_chief) return type == api::ReplicaType::kChief;
  return type == api::ReplicaType::kWorker && index == 0;
}

json OwnerReference(const api::DistributedTraining& job) {
  json ref = {{"apiVersion", api::kApiVersion},
              {"kind", api::kKind},
              {"name", job.metadata.name},
              {"controller", true},
              {"blockOwnerDeletion", true}};
  if (!job.metadata.uid.empty()) ref["uid"] = job.metadata.uid;
  return ref;
}

json ReplicaMeta(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  json labels = ReplicaSelector(job, type, index);
  labels[api::kLabelManagedBy] = api::kManagedByValue;
  if (IsSuccessReplica(job, type, index)) labels[api::kLabelJobRole] = "chief";
  return {{"name", api::ReplicaName(job.metadata.name, type, index)},
          {"namespace", job.metadata.namespace_name},
          {"labels", std::move(labels)},
          {"ownerReferences", json::array({OwnerReference(job)})}};
}

}  // namespace disttrain::controller
