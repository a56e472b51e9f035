#include "operator/policy/tf_config_builder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "operator/api/names.h"

namespace disttrain::policy {

int MainContainerIndex(const nlohmann::json& pod_template) {
  const nlohmann::json* containers = nullptr;
  if (auto spec = pod_template.find("spec"); spec != pod_template.end() && spec->is_object()) {
    if (auto c = spec->find("containers"); c != spec->end() && c->is_array()) containers = &*c;
  }
  if (containers == nullptr || containers->empty()) return -1;
  for (size_t i = 0; i < containers->size(); ++i) {
    const nlohmann::json& c = (*containers)[i];
    std::string name = c.value("name", "");
    if (name == "tensorflow" || name == "trainer") return static_cast<int>(i);
  }
  return 0;
}

int MainContainerPort(const api::ReplicaSpec& spec, std::string_view name, int fallback) {
  int main = MainContainerIndex(spec.pod_template);
  if (main < 0) return fallback;
  const nlohmann::json& container = spec.pod_template["spec"]["containers"][main];
  auto ports = container.find("ports");
  if (ports == container.end() || !ports->is_array()) return fallback;
  for (const nlohmann::json& p : *ports) {
    if (p.value("name", "") == name && p.contains("containerPort") &&
        p["containerPort"].is_number_integer()) {
      return p["containerPort"].get<int>();
    }
  }
  return fallback;
}

int ReplicaPort(const api::ReplicaSpec& spec) {
  return MainContainerPort(spec, kPortName, kDefaultPort);
}

std::optional<TfConfig> BuildTfConfig(const api::DistributedTraining& job, api::ReplicaType type,
                                      int index, const BuildOptions& options) {
  int total = 0;
  for (const auto& [t, spec] : job.spec.replica_specs) total += spec.replicas;
  if (total == 1) return std::nullopt;

  TfConfig config;
  for (const auto& [t, spec] : job.spec.replica_specs) {
    if (t == api::ReplicaType::kEvaluator && !job.spec.tf_config.evaluator_in_cluster) continue;
    // TensorFlow counts a role written as an empty list as present: "chief":[] leaves the job
    // with no chief at all and collective leaders that name missing tasks. Leave it out.
    if (spec.replicas == 0) continue;
    std::vector<std::string>& hosts = config.cluster[std::string(api::RoleName(job.spec, t))];
    const int port = ReplicaPort(spec);
    for (int i = 0; i < spec.replicas; ++i) {
      std::string host = absl::StrCat(api::ReplicaHost(job, t, i), ".svc");
      if (!options.cluster_domain.empty()) absl::StrAppend(&host, ".", options.cluster_domain);
      hosts.push_back(absl::StrCat(host, ":", port));
    }
  }
  config.task_type = std::string(api::RoleName(job.spec, type));
  config.task_index = index;
  return config;
}

std::optional<std::string> TfConfigText(const api::DistributedTraining& job, api::ReplicaType type,
                                        int index, const BuildOptions& options) {
  std::optional<TfConfig> dense = BuildTfConfig(job, type, index, options);
  if (!dense || !job.spec.tf_config.sparse_workers) {
    return dense ? std::optional<std::string>(SerializeTfConfig(*dense)) : std::nullopt;
  }
  if (type == api::ReplicaType::kPS) {
    // A parameter server receives the training replicas' tensors (TensorFlow's receiver asks
    // the sender), so it must know each one that may come: the chief and every worker up to
    // elasticPolicy.maxReplicas. The evaluator never sends it anything.
    api::DistributedTraining widest = job;
    widest.spec.replica_specs.erase(api::ReplicaType::kEvaluator);
    auto workers = widest.spec.replica_specs.find(api::ReplicaType::kWorker);
    if (workers != widest.spec.replica_specs.end() && job.spec.elastic_policy) {
      workers->second.replicas =
          std::max(workers->second.replicas, job.spec.elastic_policy->max_replicas);
    }
    std::optional<TfConfig> wide = BuildTfConfig(widest, type, index, options);
    return wide ? std::optional<std::string>(SerializeTfConfig(*wide)) : std::nullopt;
  }
  const std::string ps_role(api::ReplicaTypeRole(api::ReplicaType::kPS));
  const std::string own_role(api::RoleName(job.spec, type));
  nlohmann::ordered_json ps = nlohmann::ordered_json::array();
  for (const std::string& host : dense->cluster[ps_role]) ps.push_back(host);
  nlohmann::ordered_json cluster;
  if (type == api::ReplicaType::kWorker) {
    cluster["worker"] = {{absl::StrCat(index), dense->cluster[own_role].at(index)}};
    cluster["ps"] = std::move(ps);
  } else if (type == api::ReplicaType::kChief) {
    cluster[own_role] = {dense->cluster[own_role].at(index)};
    cluster["ps"] = std::move(ps);
  } else {  // the evaluator: nobody (it reads checkpoints)
    cluster["worker"] = nlohmann::ordered_json::object();
    cluster["ps"] = nlohmann::ordered_json::array();
  }
  nlohmann::ordered_json config = {{"cluster", std::move(cluster)},
                                   {"task", {{"type", dense->task_type}, {"index", index}}}};
  return config.dump();
}

}  // namespace disttrain::policy
