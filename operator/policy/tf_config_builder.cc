#include "operator/policy/tf_config_builder.h"

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
  const std::string ps_role(api::ReplicaTypeRole(api::ReplicaType::kPS));
  const std::string worker_role(api::ReplicaTypeRole(api::ReplicaType::kWorker));
  std::vector<std::string> all_ps = dense->cluster[ps_role];
  nlohmann::ordered_json workers = nlohmann::ordered_json::object();
  nlohmann::ordered_json ps = nlohmann::ordered_json::array();
  if (type == api::ReplicaType::kWorker) {
    workers[absl::StrCat(index)] = dense->cluster[worker_role].at(index);
    for (const std::string& host : all_ps) ps.push_back(host);
  } else if (type == api::ReplicaType::kPS) {
    ps.push_back(all_ps.at(index));
  }
  nlohmann::ordered_json config = {
      {"cluster", {{"worker", std::move(workers)}, {"ps", std::move(ps)}}},
      {"task", {{"type", dense->task_type}, {"index", index}}}};
  return config.dump();
}

}  // namespace disttrain::policy
