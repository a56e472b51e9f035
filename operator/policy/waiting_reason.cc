#include "operator/policy/waiting_reason.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "operator/policy/conditions.h"

namespace disttrain::policy {
namespace {

// Waiting reasons of a container that only say it is on its way.
bool Starting(absl::string_view reason) {
  return reason.empty() || reason == "ContainerCreating" || reason == "PodInitializing";
}

// "pod a: why" for one pod, "3 pods (a, b, ...): why of a" for more.
std::string AboutPods(const std::vector<const PodState*>& pods, absl::string_view why) {
  if (pods.size() == 1) return absl::StrCat("pod ", pods.front()->name, ": ", why);
  std::string names;
  for (size_t i = 0; i < pods.size() && i < 3; ++i) {
    absl::StrAppend(&names, i > 0 ? ", " : "", pods[i]->name);
  }
  if (pods.size() > 3) absl::StrAppend(&names, ", ...");
  return absl::StrCat(pods.size(), " pods (", names, "); ", pods.front()->name, ": ", why);
}

}  // namespace

std::optional<WaitingReason> FindWaitingReason(const api::DistributedTraining& job,
                                               const api::JobStatus& status,
                                               const PodsByReplica& pods,
                                               const Readiness& readiness) {
  if (const api::Condition* queued = FindCondition(status, kQueued);
      queued != nullptr && queued->status) {
    return WaitingReason{"Queued",
                         queued->message.empty()
                             ? absl::StrCat("waiting for Kueue to admit it (", queued->reason, ")")
                             : queued->message};
  }
  if (const api::Condition* refused = FindCondition(status, kReplicaFailure);
      refused != nullptr && refused->status) {
    return WaitingReason{"FailedCreate", refused->message};
  }
  std::vector<const PodState*> unscheduled, stuck;
  for (const auto& [key, pod] : pods) {
    if (pod.terminating || pod.phase != PodPhase::kPending) continue;
    if (!pod.unscheduled_reason.empty()) unscheduled.push_back(&pod);
    if (!Starting(pod.container_waiting_reason)) stuck.push_back(&pod);
  }
  if (!unscheduled.empty()) {
    const PodState& first = *unscheduled.front();
    return WaitingReason{
        first.unscheduled_reason,
        AboutPods(unscheduled, first.unscheduled_message.empty() ? first.unscheduled_reason
                                                                 : first.unscheduled_message)};
  }
  if (!stuck.empty()) {
    const PodState& first = *stuck.front();
    return WaitingReason{first.container_waiting_reason,
                         AboutPods(stuck, first.container_waiting_message.empty()
                                              ? first.container_waiting_reason
                                              : first.container_waiting_message)};
  }
  // Workers missing, not starting: set aside after failures until their retry time.
  int workers = 0;
  for (const auto& [key, pod] : pods) {
    if (key.first == api::ReplicaType::kWorker && !pod.terminating &&
        (pod.phase == PodPhase::kPending || pod.phase == PodPhase::kRunning))
      ++workers;
  }
  if (job.spec.elastic_policy && !IsTrue(status, kRunning) && !readiness.EnoughRunning() &&
      workers < readiness.workers_enough) {
    return WaitingReason{
        "WaitingForMinWorkers",
        absl::StrCat(readiness.workers_running, " of the ", readiness.workers_enough,
                     " workers elasticPolicy.minReplicas asks for run")};
  }
  return std::nullopt;
}

}  // namespace disttrain::policy
