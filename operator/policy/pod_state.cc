#include "operator/policy/pod_state.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_members.h"
#include "operator/api/job_kind.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::policy {

using nlohmann::json;

std::optional<PodState> ReadPodState(const json& pod) {
  const json& meta = ObjectMember(pod, "metadata");
  const json& labels = ObjectMember(meta, "labels");
  PodState s;
  // Either kind's labels: a pod is matched to its job by its controller reference.
  const api::ChildLabels* scheme = nullptr;
  for (const api::JobKind* kind : api::kJobKinds) {
    if (labels.contains(kind->labels.replica_type)) scheme = &kind->labels;
  }
  if (scheme == nullptr) return std::nullopt;
  std::string role = labels.value(scheme->replica_type, "");
  std::optional<api::ReplicaType> type = api::ParseRoleName(role);
  if (type) s.type = *type;
  if (!type || !absl::SimpleAtoi(labels.value(scheme->replica_index, ""), &s.index))
    return std::nullopt;
  s.name = meta.value("name", "");
  s.uid = meta.value("uid", "");
  s.terminating = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();

  const json& status = ObjectMember(pod, "status");
  const std::string phase = status.value("phase", "Pending");
  s.phase = phase == "Running"     ? PodPhase::kRunning
            : phase == "Succeeded" ? PodPhase::kSucceeded
            : phase == "Failed"    ? PodPhase::kFailed
            : phase == "Pending"   ? PodPhase::kPending
                                   : PodPhase::kUnknown;
  s.reason = status.value("reason", "");
  s.ip = status.value("podIP", "");
  for (const json& c : ArrayMember(status, "conditions")) {
    const std::string type = c.value("type", "");
    if (type == "Ready") s.ready = c.value("status", "") == "True";
    if (type == kDisruptionTarget && c.value("status", "") == "True" &&
        c.value("reason", "") == kDeletionByTaintManager)
      s.evicted_from_lost_node = true;
    if (type == kPodScheduled && c.value("status", "") == "False") {
      s.unscheduled_reason = c.value("reason", "");
      s.unscheduled_message = c.value("message", "");
    }
  }

  std::string main_name;
  if (int main = MainContainerIndex(pod); main >= 0) {
    main_name = pod["spec"]["containers"][main].value("name", "");
  }
  const json& statuses = ArrayMember(status, "containerStatuses");
  std::optional<int> main_exit, any_failed_exit;
  std::string main_reason, any_reason;
  for (const json& cs : statuses) {
    s.restart_count += cs.value("restartCount", 0);
    if (const json& waiting = ObjectMember(ObjectMember(cs, "state"), "waiting");
        !waiting.empty() && s.container_waiting_reason.empty()) {
      s.container_waiting_reason = waiting.value("reason", "");
      s.container_waiting_message = waiting.value("message", "");
    }
    const json* term = nullptr;
    if (cs.contains("state") && cs["state"].contains("terminated")) {
      term = &cs["state"]["terminated"];
      auto message = term->find("message");
      if (cs.value("name", "") == main_name && message != term->end() && message->is_string())
        s.termination_message = message->get<std::string>();
    } else if (cs.contains("lastState") && cs["lastState"].contains("terminated")) {
      term = &cs["lastState"]["terminated"];
    }
    if (term == nullptr) continue;
    int code = term->value("exitCode", 0);
    if (cs.value("name", "") == main_name) {
      main_exit = code;
      main_reason = term->value("reason", "");
    } else if (code != 0 && !any_failed_exit) {
      any_failed_exit = code;
      any_reason = term->value("reason", "");
    }
  }
  s.exit_code = main_exit ? main_exit : any_failed_exit;
  if (s.reason.empty()) s.reason = main_exit ? main_reason : any_reason;
  return s;
}

std::string DescribeExit(const PodState& pod) {
  std::string out = absl::StrCat("pod ", pod.name);
  if (pod.exit_code) {
    absl::StrAppend(&out, " exited with code ", *pod.exit_code);
  } else {
    absl::StrAppend(&out, " failed");
  }
  if (!pod.reason.empty()) absl::StrAppend(&out, " (", pod.reason, ")");
  return out;
}

}  // namespace disttrain::policy
