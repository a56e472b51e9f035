#include "plugin/usage.h"

#include "absl/strings/str_cat.h"

namespace disttrain::plugin {
namespace {

std::optional<uint64_t> Unsigned(const nlohmann::json& j, const char* object, const char* key) {
  if (!j.contains(object) || !j[object].is_object()) return std::nullopt;
  const nlohmann::json& o = j[object];
  if (!o.contains(key) || !o[key].is_number_unsigned()) return std::nullopt;
  return o[key].get<uint64_t>();
}

}  // namespace

std::map<std::string, PodUsage> ReadSummary(const nlohmann::json& summary) {
  std::map<std::string, PodUsage> out;
  if (!summary.contains("pods") || !summary["pods"].is_array()) return out;
  for (const nlohmann::json& pod : summary["pods"]) {
    const std::string uid = pod.value("/podRef/uid"_json_pointer, "");
    if (uid.empty()) continue;
    // The sum of the containers' figures, as metrics-server (and so `kubectl top pod`) reports
    // a pod: the kubelet's pod-level figures read 0 where it has no stats for the pod's own
    // cgroup (seen with the cgroupfs driver) while every container has its own. The pod-level
    // figure only where no container reports one.
    PodUsage usage;
    if (pod.contains("containers") && pod["containers"].is_array()) {
      for (const nlohmann::json& c : pod["containers"]) {
        if (std::optional<uint64_t> v = Unsigned(c, "cpu", "usageNanoCores"))
          usage.nano_cores = usage.nano_cores.value_or(0) + *v;
        if (std::optional<uint64_t> v = Unsigned(c, "memory", "workingSetBytes"))
          usage.working_set_bytes = usage.working_set_bytes.value_or(0) + *v;
      }
    }
    if (!usage.nano_cores) usage.nano_cores = Unsigned(pod, "cpu", "usageNanoCores");
    if (!usage.working_set_bytes)
      usage.working_set_bytes = Unsigned(pod, "memory", "workingSetBytes");
    out[uid] = usage;
  }
  return out;
}

std::string FormatTop(const std::vector<PodRow>& pods, const std::map<std::string, PodUsage>& usage,
                      const std::map<std::string, std::string>& node_errors) {
  std::vector<std::vector<std::string>> table = {
      {"POD", "ROLE", "CPU(cores)", "MEMORY(bytes)", "NODE"}};
  uint64_t total_nano = 0, total_bytes = 0;
  for (const PodRow& p : pods) {
    std::string cpu = "-", memory = "-";
    if (auto it = usage.find(p.uid); it != usage.end()) {
      if (it->second.nano_cores) {
        cpu = absl::StrCat((*it->second.nano_cores + 500000) / 1000000, "m");
        total_nano += *it->second.nano_cores;
      }
      if (it->second.working_set_bytes) {
        memory = absl::StrCat((*it->second.working_set_bytes + (1 << 19)) >> 20, "Mi");
        total_bytes += *it->second.working_set_bytes;
      }
    } else if (auto e = node_errors.find(p.node); e != node_errors.end()) {
      cpu = memory = "<unknown>";
    } else if (p.node.empty()) {
      cpu = memory = "<not scheduled>";
    }
    table.push_back({p.name, p.index >= 0 ? absl::StrCat(p.role, " ", p.index) : p.role, cpu,
                     memory, p.node.empty() ? "<none>" : p.node});
  }
  table.push_back({"TOTAL", "", absl::StrCat((total_nano + 500000) / 1000000, "m"),
                   absl::StrCat((total_bytes + (1 << 19)) >> 20, "Mi"), ""});
  std::string out = FormatTable(table);
  for (const auto& [node, error] : node_errors)
    absl::StrAppend(&out, "node ", node, ": ", error, "\n");
  return out;
}

}  // namespace disttrain::plugin
