#include "operator/policy/conditions.h"

namespace disttrain::policy {

const api::Condition* FindCondition(const api::JobStatus& status, absl::string_view type) {
  for (const api::Condition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const api::JobStatus& status, absl::string_view type) {
  const api::Condition* c = FindCondition(status, type);
  return c != nullptr && c->status;
}

bool IsFinished(const api::JobStatus& status) {
  return IsTrue(status, kSucceeded) || IsTrue(status, kFailed);
}

void SetCondition(api::JobStatus* status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now) {
  for (api::Condition& c : status->conditions) {
    if (c.type != type) continue;
    if (c.status != value) c.last_transition_time = now;
    c.status = value;
    c.reason = std::string(reason);
    c.message = std::string(message);
    return;
  }
  if (!value) return;
  status->conditions.push_back(
      {std::string(type), true, std::string(reason), std::string(message), now});
}

void AddCondition(api::JobStatus* status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now) {
  if (FindCondition(*status, type) == nullptr) {
    status->conditions.push_back(
        {std::string(type), value, std::string(reason), std::string(message), now});
    return;
  }
  SetCondition(status, type, value, reason, message, now);
}

std::string CurrentState(const api::JobStatus& status) {
  for (const char* type :
       {kFailed, kSucceeded, kSuspended, kQueued, kRestarting, kRunning, kCreated}) {
    if (IsTrue(status, type)) return type;
  }
  return "";
}

}  // namespace disttrain::policy
