#include "trainer/cluster_spec.h"

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

const char* RoleName(Role role) {
  switch (role) {
    case Role::kPs:
      return "ps";
    case Role::kChief:
      return "chief";
    case Role::kWorker:
      return "worker";
    case Role::kEvaluator:
      return "evaluator";
  }
  return "";
}

std::string ClusterSpec::TaskName() const {
  return absl::StrCat(role == Role::kChief && !has_chief_task ? "worker" : RoleName(role), "-",
                      task_index);
}

std::vector<std::string> ClusterSpec::ReplicaNames() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_replicas(); ++i) {
    names.push_back(has_chief_task && i == 0
                        ? std::string("chief-0")
                        : absl::StrCat("worker-", i - (has_chief_task ? 1 : 0)));
  }
  return names;
}

absl::StatusOr<ClusterSpec> MakeClusterSpec(const TfConfig& config) {
  ClusterSpec spec;
  auto role_hosts = [&](const char* r) -> std::vector<std::string> {
    auto it = config.cluster.find(r);
    return it == config.cluster.end() ? std::vector<std::string>{} : it->second;
  };
  spec.ps = role_hosts("ps");
  std::vector<std::string> chief = role_hosts("chief");
  std::vector<std::string> workers = role_hosts("worker");
  spec.has_chief_task = !chief.empty();
  spec.has_evaluator_task = !role_hosts("evaluator").empty();
  spec.replicas = chief;
  spec.replicas.insert(spec.replicas.end(), workers.begin(), workers.end());
  if (spec.ps.empty()) {
    return absl::InvalidArgumentError(
        "TF_CONFIG: the cluster has no \"ps\" task; disttrain-trainer needs a parameter server");
  }
  if (spec.replicas.empty()) {
    return absl::InvalidArgumentError("TF_CONFIG: the cluster has no \"chief\" or \"worker\" task");
  }
  spec.task_index = config.task_index;
  const std::string& type = config.task_type;
  if (type == "ps") {
    spec.role = Role::kPs;
    spec.own_address = spec.ps[config.task_index];
  } else if (type == "evaluator") {
    spec.role = Role::kEvaluator;
    auto ev = role_hosts("evaluator");
    if (config.task_index < static_cast<int>(ev.size())) spec.own_address = ev[config.task_index];
  } else if (type == "chief") {
    spec.role = Role::kChief;
    spec.replica_rank = 0;
    spec.own_address = chief[config.task_index];
  } else {
    spec.replica_rank = static_cast<int>(chief.size()) + config.task_index;
    spec.role = (chief.empty() && config.task_index == 0) ? Role::kChief : Role::kWorker;
    spec.own_address = workers[config.task_index];
  }
  return spec;
}

}  // namespace disttrain::trainer
