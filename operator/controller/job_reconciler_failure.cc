// JobReconciler's failure steps (see job_reconciler.h): it applies to the pass what the failure
// and elastic policies decide: restarts, set-aside workers, pods to replace, a failed job.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/conditions.h"
#include "operator/policy/elastic_policy.h"
#include "operator/policy/failure_policy.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/restart_policy.h"

namespace disttrain::controller {

using ::disttrain::policy::BackoffLimit;
using ::disttrain::policy::CountRestarts;
using ::disttrain::policy::DecideFailures;
using ::disttrain::policy::FailureDecision;
using ::disttrain::policy::IsBeingReplaced;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::PodState;
using ::disttrain::policy::RestartedInPlaceSince;
using ::disttrain::policy::RestartTally;
using ::disttrain::policy::SetCondition;
using ::disttrain::policy::WithinBackoffLimit;

using api::ReplicaType;

bool JobReconciler::HandleFailures(Pass& p) {
  const FailureDecision d = DecideFailures(
      p.job, p.status, p.pods, [&](const std::string& uid) { return Deleted(uid); }, p.now);
  for (const auto& [type, index] : d.succeeded) p.Role(type).succeeded_indexes.push_back(index);
  for (const FailureDecision::Restart& r : d.restarts) {
    p.Role(r.type).past_restarts += r.counted;
    p.status.restarting_pods.push_back(r.uid);
    SetCondition(&p.status, kRestarting, true, "PodRestarting", r.message, p.now);
    SetCondition(&p.status, kRunning, false, "PodRestarting", r.message, p.now);
    p.Warn("Restarting", r.message);
  }
  for (const api::SetAsideReplica& e : d.set_aside) SetWorkerAside(p, e);
  for (const policy::MemoryGrowth& g : d.grown) {
    // Listed as being replaced without a restart counted: its restarts count nowhere.
    p.status.restarting_pods.push_back(g.entry.pod_uid);
    std::vector<api::ResizedReplica>& list = p.Role(g.type).resized;
    std::erase_if(list, [&](const api::ResizedReplica& e) { return e.index == g.entry.index; });
    list.push_back(g.entry);
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    SetCondition(&p.status, kRestarting, true, "MemoryIncreased", g.message, p.now);
    SetCondition(&p.status, kRunning, false, "PodRestarting", g.message, p.now);
    p.Warn("MemoryIncreased", g.message);
  }
  p.replace.insert(p.replace.end(), d.replace.begin(), d.replace.end());
  if (d.fail) {
    Finish(p, false, d.fail->reason, d.fail->message);
    return false;
  }
  return true;
}

bool JobReconciler::CheckInPlaceRestarts(Pass& p) {
  const RestartTally tally = CountRestarts(p.status, p.PodList());
  if (!RestartedInPlaceSince(p.original, tally)) return true;
  std::vector<std::string> restarted;
  for (const auto& [id, pod] : p.pods) {
    if (pod.restart_count > 0 && !IsBeingReplaced(p.status, pod)) {
      restarted.push_back(absl::StrCat(pod.name, " (", pod.restart_count,
                                       " restarts, last exit code ", pod.exit_code.value_or(-1),
                                       ")"));
    }
  }
  const std::string which = absl::StrJoin(restarted, ", ");
  if (!WithinBackoffLimit(p.job, tally)) {
    // An elastic job sets aside the workers that restarted most, when that is enough.
    const std::vector<PodState> aside = policy::SetAsideToFitBackoff(
        p.job, p.status, p.pods, tally.total() - BackoffLimit(p.job), p.now);
    for (size_t i = 0; i < aside.size(); ++i) {
      const PodState& pod = aside[i];
      SetWorkerAside(
          p, policy::SetAside(
                 p.job, p.status, pod,
                 absl::StrCat(
                     pod.name, " restarted in place ", pod.restart_count, " times",
                     pod.exit_code ? absl::StrCat(" (last exit code ", *pod.exit_code, ")") : "",
                     " and the job's restarts exceed backoffLimit ", BackoffLimit(p.job)),
                 /*also=*/static_cast<int>(i), p.now));
      p.replace.push_back(pod);
    }
    if (!aside.empty()) return true;

    Finish(p, false, "BackoffLimitExceeded",
           absl::StrCat("containers restarted in place ", tally.total(),
                        " times, more than backoffLimit ", BackoffLimit(p.job), ": ", which));
    return false;
  }
  const std::string message = absl::StrCat("restarted in place: ", which);
  SetCondition(&p.status, kRestarting, true, "PodRestartedInPlace", message, p.now);
  p.Warn("RestartedInPlace", message);
  return true;
}

void JobReconciler::SetWorkerAside(Pass& p, const api::SetAsideReplica& entry) {
  std::vector<api::SetAsideReplica>& list = p.Role(ReplicaType::kWorker).set_aside;
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const api::SetAsideReplica& e) { return e.index == entry.index; });
  if (it == list.end()) {
    list.push_back(entry);
  } else {
    *it = entry;
  }
  std::sort(list.begin(), list.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  p.Warn("WorkerSetAside", entry.message);
}

void JobReconciler::ReplaceFailedPods(Pass& p) {
  for (const PodState& pod : p.replace) {
    if (absl::Status s = DeletePod(p, pod, /*with_service=*/false); !s.ok())
      p.Error("FailedDeletePod", s);
  }
}

}  // namespace disttrain::controller
