#include "operator/policy/failure_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "operator/api/names.h"
#include "operator/policy/child_meta.h"
#include "operator/policy/elastic_policy.h"
#include "operator/policy/restart_policy.h"

namespace disttrain::policy {

bool IsRetryable(const PodState& pod) {
  if (pod.reason == "Evicted" || pod.reason == "OOMKilled" ||
      pod.reason == "UnexpectedAdmissionError" || pod.reason == "Preempting" ||
      pod.reason == "Shutdown" || pod.reason == "Terminated") {
    return true;
  }
  return pod.exit_code && *pod.exit_code >= 128;
}

FailureAction OnPodFailed(api::ReplicaType type, api::RestartPolicy policy, const PodState& pod) {
  using api::RestartPolicy;
  if (type == api::ReplicaType::kPS) return FailureAction::kRecreate;
  const bool retry = policy == RestartPolicy::kOnFailure || policy == RestartPolicy::kAlways ||
                     (policy == RestartPolicy::kExitCode && IsRetryable(pod));
  if (retry) return FailureAction::kRecreate;
  if (type == api::ReplicaType::kEvaluator) return FailureAction::kLeaveFailed;
  return FailureAction::kFailJob;
}

FailureDecision DecideFailures(const api::DistributedTraining& job, const api::JobStatus& status,
                               const PodsByReplica& pods,
                               absl::FunctionRef<bool(const std::string& uid)> deleting,
                               absl::Time now) {
  FailureDecision d;
  const RestartTally tally = CountRestarts(status, [&] {
    std::vector<PodState> list;
    for (const auto& [id, pod] : pods) list.push_back(pod);
    return list;
  }());
  const int32_t limit = BackoffLimit(job);
  int32_t replacing = 0;  // restarts this pass adds
  for (const auto& [id, pod] : pods) {
    if (pod.terminating) continue;
    // Scaled away: removed without counting, whatever it does meanwhile.
    if (IsSurplusReplica(job, id.first, id.second)) continue;
    if (IsBeingReplaced(status, pod) || IsSetAside(status, pod)) {
      // Counted by an earlier pass whose delete failed or is not yet seen: delete again only.
      if (!deleting(pod.uid)) d.replace.push_back(pod);
      continue;
    }
    if (deleting(pod.uid)) continue;
    const auto [type, index] = id;
    if (pod.phase == PodPhase::kSucceeded) {
      auto role = status.replica_statuses.find(type);
      const bool known = role != status.replica_statuses.end() &&
                         std::count(role->second.succeeded_indexes.begin(),
                                    role->second.succeeded_indexes.end(), index) > 0;
      if (!known) d.succeeded.push_back({type, index});
      continue;
    }
    // Killed for memory, failed or restarted in place: back with more memory when it may grow.
    const bool restarted = pod.restart_count > 0 &&
                           (pod.phase == PodPhase::kRunning || pod.phase == PodPhase::kPending);
    if (pod.phase == PodPhase::kFailed || restarted) {
      if (std::optional<MemoryGrowth> g = GrowAfterOomKill(job, status, type, index, pod)) {
        d.replace.push_back(pod);
        d.grown.push_back(*std::move(g));
        continue;
      }
    }
    if (pod.phase != PodPhase::kFailed) continue;
    const api::ReplicaSpec& spec = job.spec.replica_specs.at(type);
    const std::string what = DescribeExit(pod);
    // A failure that would end the job: an elastic job's worker is set aside when it may be.
    // (Named copies: a lambda may not capture structured bindings before C++20's clang 16.)
    const api::ReplicaType role = type;
    const int replica = index;
    const PodState& failed = pod;
    auto set_aside = [&](const std::string& why) {
      if (role != api::ReplicaType::kWorker ||
          !MaySetAside(job, status, replica, static_cast<int>(d.set_aside.size()), now)) {
        return false;
      }
      d.set_aside.push_back(
          SetAside(job, status, failed, why, static_cast<int>(d.set_aside.size()), now));
      d.replace.push_back(failed);
      return true;
    };
    switch (OnPodFailed(type, spec.restart_policy, pod)) {
      case FailureAction::kLeaveFailed:
        continue;
      case FailureAction::kFailJob: {
        const std::string why =
            absl::StrCat(what, "; restartPolicy ", api::RestartPolicyName(spec.restart_policy),
                         IsRetryable(pod) ? "" : " and the failure is permanent");
        if (set_aside(why)) continue;
        d.fail = FailureDecision::Failure{absl::StrCat(api::KeyName(job.spec, type), "Failed"),
                                          absl::StrCat(why, WhyNotSetAside(job, type, index))};
        return d;
      }
      case FailureAction::kRecreate:
        break;
    }
    if (!WithinBackoffLimit(job, tally, replacing + 1)) {
      const std::string why =
          absl::StrCat(what, "; the job has used all ", limit, " restarts of its backoffLimit");
      if (set_aside(why)) continue;
      d.fail = FailureDecision::Failure{"BackoffLimitExceeded",
                                        absl::StrCat(why, WhyNotSetAside(job, type, index))};
      return d;
    }
    ++replacing;
    d.replace.push_back(pod);
    d.restarts.push_back({type, pod.uid, ReplacementRestarts(pod),
                          absl::StrCat(what, "; restarting it (restart ", tally.total() + replacing,
                                       " of ", limit, ")")});
  }
  return d;
}

}  // namespace disttrain::policy
