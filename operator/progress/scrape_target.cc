#include "operator/progress/scrape_target.h"

#include "absl/strings/str_cat.h"
#include "operator/policy/network_policy_builder.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::progress {

std::optional<ScrapeTarget> ChooseScrapeTarget(const api::DistributedTraining& job,
                                               const policy::PodsByReplica& pods) {
  const api::ReplicaType role = job.spec.replica_specs.contains(api::ReplicaType::kChief)
                                    ? api::ReplicaType::kChief
                                    : api::ReplicaType::kWorker;
  auto spec = job.spec.replica_specs.find(role);
  auto pod = pods.find({role, 0});
  if (spec == job.spec.replica_specs.end() || pod == pods.end()) return std::nullopt;
  const policy::PodState& s = pod->second;
  if (s.phase != policy::PodPhase::kRunning || s.terminating || s.ip.empty()) return std::nullopt;
  const int port = policy::MainContainerPort(spec->second, "metrics", policy::kDefaultMetricsPort);
  // An IPv6 address goes in brackets.
  const std::string host =
      s.ip.find(':') == std::string::npos ? s.ip : absl::StrCat("[", s.ip, "]");
  return ScrapeTarget{s.uid, absl::StrCat("http://", host, ":", port, "/metrics")};
}

}  // namespace disttrain::progress
