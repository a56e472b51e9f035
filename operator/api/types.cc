#include "operator/api/types.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace disttrain::api {

std::optional<int> JobProgress::Percent() const {
  if (!target_steps || *target_steps <= 0) return std::nullopt;
  const int64_t done = std::clamp<int64_t>(global_step, 0, *target_steps);
  return static_cast<int>(done * 100 / *target_steps);
}

absl::string_view ReplicaTypeKey(ReplicaType type) {
  switch (type) {
    case ReplicaType::kChief:
      return "Chief";
    case ReplicaType::kPS:
      return "PS";
    case ReplicaType::kWorker:
      return "Worker";
    case ReplicaType::kEvaluator:
      return "Evaluator";
  }
  return "";
}

absl::string_view ReplicaTypeRole(ReplicaType type) {
  switch (type) {
    case ReplicaType::kChief:
      return "chief";
    case ReplicaType::kPS:
      return "ps";
    case ReplicaType::kWorker:
      return "worker";
    case ReplicaType::kEvaluator:
      return "evaluator";
  }
  return "";
}

absl::string_view RoleName(const JobSpec& spec, ReplicaType type) {
  return spec.chief_is_master && type == ReplicaType::kChief ? "master" : ReplicaTypeRole(type);
}

absl::string_view KeyName(const JobSpec& spec, ReplicaType type) {
  return spec.chief_is_master && type == ReplicaType::kChief ? "Master" : ReplicaTypeKey(type);
}

std::optional<ReplicaType> ParseRoleName(absl::string_view role) {
  if (role == "master") return ReplicaType::kChief;
  for (ReplicaType t : kReplicaTypes) {
    if (ReplicaTypeRole(t) == role) return t;
  }
  return std::nullopt;
}

absl::StatusOr<ReplicaType> ParseReplicaTypeKey(absl::string_view key) {
  for (ReplicaType t : kReplicaTypes) {
    if (key == ReplicaTypeKey(t)) return t;
  }
  std::string hint = key == "Master" ? " (Master is TFJob's legacy name: use Chief)" : "";
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role \"", key,
                   "\": replicaSpecs keys must be Chief, PS, Worker or Evaluator", hint));
}

absl::string_view RestartPolicyName(RestartPolicy policy) {
  switch (policy) {
    case RestartPolicy::kNever:
      return "Never";
    case RestartPolicy::kOnFailure:
      return "OnFailure";
    case RestartPolicy::kAlways:
      return "Always";
    case RestartPolicy::kExitCode:
      return "ExitCode";
  }
  return "";
}

absl::string_view CleanPodPolicyName(CleanPodPolicy policy) {
  switch (policy) {
    case CleanPodPolicy::kRunning:
      return "Running";
    case CleanPodPolicy::kAll:
      return "All";
    case CleanPodPolicy::kNone:
      return "None";
  }
  return "";
}

absl::string_view SuccessPolicyName(SuccessPolicy policy) {
  switch (policy) {
    case SuccessPolicy::kDefault:
      return "";
    case SuccessPolicy::kAllWorkers:
      return "AllWorkers";
  }
  return "";
}

}  // namespace disttrain::api
