// CPU and memory per pod from the kubelet's Summary API (/stats/summary, read through the API
// server's node proxy), and the `kubectl dtr top` table. Pure functions; thread-safe.
#ifndef DISTTRAIN_PLUGIN_USAGE_H_
#define DISTTRAIN_PLUGIN_USAGE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "plugin/job_view.h"

namespace disttrain::plugin {

struct PodUsage {
  std::optional<uint64_t> nano_cores;         // cpu.usageNanoCores
  std::optional<uint64_t> working_set_bytes;  // memory.workingSetBytes, what kubectl top shows
};

// By pod UID, from one node's summary: the sum over the pod's containers, as metrics-server
// reports a pod, or the pod-level figure where no container has one.
std::map<std::string, PodUsage> ReadSummary(const nlohmann::json& summary);

// One row per pod: CPU in millicores, memory in MiB, "-" where the node did not say; a pod whose
// node could not be read shows the reason from `node_errors` (by node).
std::string FormatTop(const std::vector<PodRow>& pods, const std::map<std::string, PodUsage>& usage,
                      const std::map<std::string, std::string>& node_errors);

}  // namespace disttrain::plugin

#endif  // DISTTRAIN_PLUGIN_USAGE_H_
