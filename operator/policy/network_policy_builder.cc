#include "operator/policy/network_policy_builder.h"

#include <set>

#include "operator/policy/child_meta.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

json TcpPorts(const std::set<int>& ports) {
  json out = json::array();
  for (int port : ports) out.push_back({{"protocol", "TCP"}, {"port", port}});
  return out;
}

}  // namespace

bool WantsNetworkPolicy(const api::DistributedTraining& job, const BuildOptions& options) {
  return job.spec.network_policy.enabled.value_or(options.network_policy);
}

std::optional<json> BuildNetworkPolicy(const api::DistributedTraining& job,
                                       const BuildOptions& options) {
  if (!WantsNetworkPolicy(job, options)) return std::nullopt;
  const api::ChildLabels& l = job.kind->labels;
  const json job_pods = {{"matchLabels", {{l.job_name, job.metadata.name}}}};
  std::set<int> job_ports, metrics_ports;
  for (const auto& [type, spec] : job.spec.replica_specs) {
    if (spec.replicas == 0) continue;
    job_ports.insert(ReplicaPort(spec));
    metrics_ports.insert(MainContainerPort(spec, "metrics", kDefaultMetricsPort));
  }
  json from_job = {{"from", json::array({{{"podSelector", job_pods}}})}};
  if (job.spec.network_policy.job_ports == api::JobPorts::kTfConfig)
    from_job["ports"] = TcpPorts(job_ports);
  json ingress = json::array({from_job});
  if (!job.spec.network_policy.metrics_from.empty()) {
    ingress.push_back(
        {{"from", job.spec.network_policy.metrics_from}, {"ports", TcpPorts(metrics_ports)}});
  }
  if (!options.progress_reader_namespace.empty()) {
    const json reader = {
        {"namespaceSelector",
         {{"matchLabels", {{"kubernetes.io/metadata.name", options.progress_reader_namespace}}}}}};
    ingress.push_back({{"from", json::array({reader})}, {"ports", TcpPorts(metrics_ports)}});
  }
  return json{{"apiVersion", "networking.k8s.io/v1"},
              {"kind", "NetworkPolicy"},
              {"metadata",
               {{"name", job.metadata.name},
                {"namespace", job.metadata.namespace_name},
                {"labels", {{l.job_name, job.metadata.name}, {l.owner_key, l.owner_value}}},
                {"ownerReferences", json::array({OwnerReference(job)})}}},
              {"spec",
               {{"podSelector", job_pods},
                {"policyTypes", json::array({"Ingress"})},
                {"ingress", std::move(ingress)}}}};
}

}  // namespace disttrain::policy
