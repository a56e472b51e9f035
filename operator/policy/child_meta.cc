#include "operator/policy/child_meta.h"

#include "absl/strings/str_cat.h"
#include "operator/api/names.h"

namespace disttrain::policy {

using nlohmann::json;

json ReplicaSelector(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  const api::ChildLabels& l = job.kind->labels;
  return {{l.job_name, job.metadata.name},
          {l.replica_type, std::string(api::RoleName(job.spec, type))},
          {l.replica_index, absl::StrCat(index)}};
}

std::string RoleSelector(const api::DistributedTraining& job, api::ReplicaType type) {
  const api::ChildLabels& l = job.kind->labels;
  return absl::StrCat(l.job_name, "=", job.metadata.name, ",", l.replica_type, "=",
                      api::RoleName(job.spec, type));
}

bool IsSurplusReplica(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  auto it = job.spec.replica_specs.find(type);
  return it == job.spec.replica_specs.end() || index >= it->second.replicas;
}

bool IsSuccessReplica(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  auto chief = job.spec.replica_specs.find(api::ReplicaType::kChief);
  bool has_chief = chief != job.spec.replica_specs.end() && chief->second.replicas > 0;
  if (has_chief) return type == api::ReplicaType::kChief;
  return type == api::ReplicaType::kWorker && index == 0;
}

json OwnerReference(const api::DistributedTraining& job) {
  json ref = {{"apiVersion", job.kind->api_version},
              {"kind", job.kind->kind},
              {"name", job.metadata.name},
              {"controller", true},
              {"blockOwnerDeletion", true}};
  if (!job.metadata.uid.empty()) ref["uid"] = job.metadata.uid;
  return ref;
}

json ReplicaMeta(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  json labels = ReplicaSelector(job, type, index);
  const api::ChildLabels& l = job.kind->labels;
  labels[l.owner_key] = l.owner_value;
  if (IsSuccessReplica(job, type, index)) labels[l.job_role] = l.job_role_value;
  return {{"name", api::ReplicaName(job, type, index)},
          {"namespace", job.metadata.namespace_name},
          {"labels", std::move(labels)},
          {"ownerReferences", json::array({OwnerReference(job)})}};
}

}  // namespace disttrain::policy
