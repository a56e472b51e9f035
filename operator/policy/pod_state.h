// What the reconciler needs to know about one existing pod, read from its status.
// Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_POD_STATE_H_
#define DISTTRAIN_OPERATOR_POLICY_POD_STATE_H_

#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::policy {

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

// The pod condition Kubernetes sets before it deletes a pod for a disruption, and its reason when
// the taint manager does (a NoExecute taint the pod no longer tolerates).
inline constexpr char kDisruptionTarget[] = "DisruptionTarget";
inline constexpr char kDeletionByTaintManager[] = "DeletionByTaintManager";
// The pod condition the scheduler sets False (reason Unschedulable, SchedulingGated) with its
// message while it cannot place the pod.
inline constexpr char kPodScheduled[] = "PodScheduled";

struct PodState {
  std::string name;
  std::string uid;
  PodPhase phase = PodPhase::kPending;
  bool terminating = false;  // deletionTimestamp set
  bool ready = false;        // the pod's Ready condition
  // The taint manager evicted it from a node that was unreachable or not ready for longer than
  // it tolerates (condition DisruptionTarget, reason DeletionByTaintManager): no kubelet will
  // confirm its deletion.
  bool evicted_from_lost_node = false;
  // Exit code of the main container once terminated (the last termination when restarted in
  // place), else of the first failed container; nullopt when none terminated.
  std::optional<int> exit_code;
  // Why it ended: pod status.reason ("Evicted", "UnexpectedAdmissionError") or the container's
  // terminated reason ("OOMKilled", "Error", "Completed").
  std::string reason;
  // The main container's termination message, once it terminated (its current state only).
  std::string termination_message;
  // Restarts in place by the kubelet, summed over containers.
  int restart_count = 0;
  std::string ip;  // status.podIP, once it has one
  // Why it is not placed yet: PodScheduled False's reason and message (the scheduler's).
  std::string unscheduled_reason;
  std::string unscheduled_message;
  // Why a container does not start: the first waiting container's reason (ErrImagePull,
  // ImagePullBackOff, CreateContainerConfigError, ...) and the kubelet's message.
  std::string container_waiting_reason;
  std::string container_waiting_message;
  api::ReplicaType type = api::ReplicaType::kWorker;
  int index = -1;
};

// Reads a pod created by the operator; nullopt when its labels do not name a replica.
std::optional<PodState> ReadPodState(const nlohmann::json& pod);

// "pod dist-worker-1 exited with code 137 (OOMKilled)".
std::string DescribeExit(const PodState& pod);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_POD_STATE_H_
