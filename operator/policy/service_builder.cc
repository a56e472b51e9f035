#include "operator/policy/service_builder.h"

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

}  // namespace disttrain::policy
