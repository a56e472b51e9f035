#include "operator/policy/oom_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "operator/api/names.h"
#include "operator/api/quantity.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

constexpr int64_t kMiB = int64_t{1} << 20;

const api::ResizedReplica* FindResized(const api::JobStatus& status, api::ReplicaType type,
                                       int index) {
  auto role = status.replica_statuses.find(type);
  if (role == status.replica_statuses.end()) return nullptr;
  for (const api::ResizedReplica& e : role->second.resized) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

std::optional<int64_t> Memory(const json& resources, const char* which) {
  auto group = resources.find(which);
  if (group == resources.end() || !group->is_object()) return std::nullopt;
  auto memory = group->find("memory");
  if (memory == group->end()) return std::nullopt;
  const std::string text = memory->is_string()
                               ? memory->get<std::string>()
                               : (memory->is_number() ? memory->dump() : std::string());
  absl::StatusOr<int64_t> milli = api::ParseMilliQuantity(text);
  if (!milli.ok()) return std::nullopt;
  return *milli;
}

// The main container's resources in a pod or template, or nullptr.
json* MainResources(json* pod, bool create) {
  const int main = MainContainerIndex(*pod);
  if (main < 0) return nullptr;
  json& container = (*pod)["spec"]["containers"][main];
  if (!container.contains("resources")) {
    if (!create) return nullptr;
    container["resources"] = json::object();
  }
  return &container["resources"];
}

}  // namespace

std::optional<int64_t> TemplateMemory(const api::ReplicaSpec& spec) {
  json copy = spec.pod_template;
  const json* resources = MainResources(&copy, /*create=*/false);
  if (resources == nullptr || !resources->is_object()) return std::nullopt;
  if (std::optional<int64_t> limit = Memory(*resources, "limits")) return limit;
  return Memory(*resources, "requests");
}

std::optional<int64_t> ReplicaMemory(const api::DistributedTraining& job,
                                     const api::JobStatus& status, api::ReplicaType type,
                                     int index) {
  if (const api::ResizedReplica* e = FindResized(status, type, index)) {
    if (absl::StatusOr<int64_t> milli = api::ParseMilliQuantity(e->memory); milli.ok())
      return *milli;
  }
  auto spec = job.spec.replica_specs.find(type);
  if (spec == job.spec.replica_specs.end()) return std::nullopt;
  return TemplateMemory(spec->second);
}

std::optional<MemoryGrowth> GrowAfterOomKill(const api::DistributedTraining& job,
                                             const api::JobStatus& status, api::ReplicaType type,
                                             int index, const PodState& pod) {
  const std::optional<api::OomPolicy>& oom = job.spec.run_policy.oom_policy;
  if (!oom || pod.reason != "OOMKilled") return std::nullopt;
  const std::optional<int64_t> now = ReplicaMemory(job, status, type, index);
  if (!now || *now >= oom->max_memory_milli) return std::nullopt;
  // In bytes, rounded up to a whole MiB, at most the ceiling.
  const double grown_bytes = std::ceil(static_cast<double>(*now) / 1000 * oom->memory_factor);
  const int64_t rounded =
      (static_cast<int64_t>(std::min(grown_bytes, 9.0e15)) + kMiB - 1) / kMiB * kMiB;
  const int64_t next = std::min(rounded * 1000, oom->max_memory_milli);
  MemoryGrowth g;
  g.type = type;
  if (const api::ResizedReplica* e = FindResized(status, type, index)) g.entry = *e;
  g.entry.index = index;
  g.entry.memory = api::FormatMilliQuantity(next);
  g.entry.oom_kills += 1;
  g.entry.pod_uid = pod.uid;
  g.message = absl::StrCat("pod ", pod.name, " was OOMKilled with ", api::FormatMilliQuantity(*now),
                           " of memory; recreating it with ", g.entry.memory,
                           " (runPolicy.oomPolicy: memoryFactor ", oom->memory_factor,
                           ", maxMemory ", oom->max_memory, ")");
  return g;
}

absl::Status ApplyResizedMemory(const api::JobStatus& status, api::ReplicaType type, int index,
                                json* pod) {
  const api::ResizedReplica* e = FindResized(status, type, index);
  if (e == nullptr) return absl::OkStatus();
  absl::StatusOr<int64_t> memory = api::ParseMilliQuantity(e->memory);
  if (!memory.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("status.replicaStatuses.",
                                                   api::ReplicaTypeKey(type),
                                                   ".resized: ", memory.status().message()));
  }
  json* resources = MainResources(pod, /*create=*/true);
  if (resources == nullptr) return absl::OkStatus();
  const std::optional<int64_t> limit = Memory(*resources, "limits");
  const std::optional<int64_t> request = Memory(*resources, "requests");
  const std::optional<int64_t> base = limit ? limit : request;
  (*resources)["limits"]["memory"] = e->memory;
  if (request) {
    // The request keeps its share of the limit.
    const double scaled = static_cast<double>(*request) * static_cast<double>(*memory) /
                          static_cast<double>(std::max<int64_t>(*base, 1));
    const int64_t bytes = static_cast<int64_t>(std::ceil(scaled / 1000));
    const int64_t rounded = (bytes + kMiB - 1) / kMiB * kMiB * 1000;
    (*resources)["requests"]["memory"] = api::FormatMilliQuantity(std::min(rounded, *memory));
  }
  return absl::OkStatus();
}

}  // namespace disttrain::policy
