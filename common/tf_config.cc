#include "common/tf_config.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace disttrain {
namespace {

constexpr std::array<absl::string_view, 4> kRoles = {"chief", "evaluator", "ps", "worker"};

bool KnownRole(absl::string_view role) {
  return std::find(kRoles.begin(), kRoles.end(), role) != kRoles.end();
}

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("TF_CONFIG: ", message));
}

// "host:port" with a host and a port from 1 to 65535 ("[::1]:2222" for IPv6). gRPC reads a port
// out of that range modulo 65536 and would listen on some other port.
bool IsHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  const absl::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

}  // namespace

std::string SerializeTfConfig(const TfConfig& config) {
  // ordered_json keeps insertion order; std::map gives the sorted cluster keys.
  nlohmann::ordered_json cluster = nlohmann::ordered_json::object();
  for (const auto& [role, hosts] : config.cluster) cluster[role] = hosts;
  nlohmann::ordered_json out;
  out["cluster"] = std::move(cluster);
  out["task"] = {{"type", config.task_type}, {"index", config.task_index}};
  out["environment"] = config.environment;
  return out.dump();
}

absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view text) {
  if (text.empty()) return Invalid("is empty");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid("is not valid JSON");
  if (!j.is_object()) return Invalid("must be a JSON object");

  TfConfig config;
  auto cluster = j.find("cluster");
  if (cluster == j.end() || !cluster->is_object()) return Invalid("\"cluster\" must be an object");
  for (const auto& [role_in, hosts] : cluster->items()) {
    std::string role = role_in == "master" ? "chief" : role_in;
    if (!KnownRole(role)) {
      return Invalid(absl::StrCat("cluster has unknown role \"", role_in,
                                  "\" (want chief, evaluator, ps or worker)"));
    }
    if (!hosts.is_array()) return Invalid(absl::StrCat("cluster.", role_in, " must be a list"));
    std::vector<std::string>& out = config.cluster[role];
    for (const auto& h : hosts) {
      if (!h.is_string() || h.get<std::string>().empty()) {
        return Invalid(absl::StrCat("cluster.", role_in, " must hold \"host:port\" strings"));
      }
      if (!IsHostPort(h.get<std::string>())) {
        return Invalid(absl::StrCat("cluster.", role_in, "[", out.size(), "] \"",
                                    h.get<std::string>(),
                                    "\" is not host:port with a port from 1 to 65535"));
      }
      out.push_back(h.get<std::string>());
    }
  }

  auto task = j.find("task");
  if (task == j.end() || !task->is_object()) return Invalid("\"task\" must be an object");
  auto type = task->find("type");
  if (type == task->end() || !type->is_string()) return Invalid("task.type must be a string");
  config.task_type = type->get<std::string>() == "master" ? "chief" : type->get<std::string>();
  if (!KnownRole(config.task_type)) {
    return Invalid(absl::StrCat("task.type \"", type->get<std::string>(),
                                "\" is not a role (want chief, evaluator, ps or worker)"));
  }
  auto index = task->find("index");
  if (index == task->end() || !index->is_number_integer()) {
    return Invalid("task.index must be an integer");
  }
  config.task_index = index->get<int>();
  if (config.task_index < 0) return Invalid("task.index must not be negative");

  auto it = config.cluster.find(config.task_type);
  if (it == config.cluster.end()) {
    // The Estimator convention keeps the evaluator out of the cluster.
    if (config.task_type != "evaluator") {
      return Invalid(
          absl::StrCat("this task's role \"", config.task_type, "\" is missing from cluster"));
    }
  } else if (config.task_index >= static_cast<int>(it->second.size())) {
    return Invalid(absl::StrCat("task.index ", config.task_index, " is out of range: cluster.",
                                config.task_type, " has ", it->second.size(), " task(s)"));
  }

  if (auto env = j.find("environment"); env != j.end()) {
    if (!env->is_string()) return Invalid("environment must be a string");
    config.environment = env->get<std::string>();
  }
  return config;
}

}  // namespace disttrain
