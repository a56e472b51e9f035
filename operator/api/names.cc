#include "operator/api/names.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace disttrain::api {

std::string ReplicaName(absl::string_view job, ReplicaType type, int index) {
  return absl::StrCat(job, "-", ReplicaTypeRole(type), "-", index);
}

std::string ReplicaName(const DistributedTraining& job, ReplicaType type, int index) {
  return absl::StrCat(job.metadata.name, "-", RoleName(job.spec, type), "-", index);
}

bool UsesJobService(const DistributedTraining& job) {
  return job.addressing == Addressing::kJobService;
}

bool NeedsJobService(const DistributedTraining& job) {
  if (!UsesJobService(job)) return false;
  int tasks = 0;
  for (const auto& [type, replica] : job.spec.replica_specs) tasks += std::max(0, replica.replicas);
  return tasks > 1;
}

std::string ReplicaHost(const DistributedTraining& job, ReplicaType type, int index) {
  if (UsesJobService(job)) {
    return absl::StrCat(ReplicaName(job, type, index), ".", job.metadata.name, ".",
                        job.metadata.namespace_name);
  }
  return absl::StrCat(ReplicaName(job, type, index), ".", job.metadata.namespace_name);
}

int MaxJobNameLength(const JobSpec& spec) {
  int longest_suffix = 0;
  for (const auto& [type, replica] : spec.replica_specs) {
    if (replica.replicas <= 0) continue;
    int suffix = static_cast<int>(RoleName(spec, type).size()) + 2 +
                 static_cast<int>(absl::StrCat(replica.replicas - 1).size());
    longest_suffix = std::max(longest_suffix, suffix);
  }
  return kMaxDnsLabel - longest_suffix;
}

}  // namespace disttrain::api
