#include "operator/policy/service_builder.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "operator/policy/child_meta.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::policy {

nlohmann::json BuildService(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  const int port = ReplicaPort(job.spec.replica_specs.at(type));
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", ReplicaMeta(job, type, index)},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", ReplicaSelector(job, type, index)},
            {"ports",
             {{{"name", kPortName}, {"port", port}, {"targetPort", port}, {"protocol", "TCP"}}}}}}};
}

nlohmann::json BuildJobService(const api::DistributedTraining& job) {
  const api::ChildLabels& l = job.kind->labels;
  std::set<int> ports;
  for (const auto& [type, spec] : job.spec.replica_specs) {
    if (spec.replicas > 0) ports.insert(ReplicaPort(spec));
  }
  nlohmann::json port_list = nlohmann::json::array();
  for (int port : ports) {
    port_list.push_back(
        {{"name", ports.size() == 1 ? std::string(kPortName) : absl::StrCat(kPortName, "-", port)},
         {"port", port},
         {"targetPort", port},
         {"protocol", "TCP"}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", job.metadata.name},
            {"namespace", job.metadata.namespace_name},
            {"labels", {{l.job_name, job.metadata.name}, {l.owner_key, l.owner_value}}},
            {"ownerReferences", nlohmann::json::array({OwnerReference(job)})}}},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", {{l.job_name, job.metadata.name}, {l.owner_key, l.owner_value}}},
            {"ports", std::move(port_list)}}}};
}

}  // namespace disttrain::policy
