#include "operator/queueing/queue_reason.h"

namespace disttrain::queueing {

namespace {

struct ReasonInfo {
  std::string_view name;
  bool warning;
};

ReasonInfo Info(QueueReason r) {
  switch (r) {
    case QueueReason::kWaitingForAdmission:
      return {"WaitingForAdmission", false};
    case QueueReason::kWaitingForAdmissionChecks:
      return {"WaitingForAdmissionChecks", false};
    case QueueReason::kKueueSays:
      return {"", false};
    case QueueReason::kInadmissible:
      return {"Inadmissible", true};
    case QueueReason::kPreempted:
      return {"Preempted", true};
    case QueueReason::kEvicted:
      return {"Evicted", true};
    case QueueReason::kWorkloadReplaced:
      return {"WorkloadReplaced", false};
    case QueueReason::kWorkloadPriorityClassNotFound:
      return {"WorkloadPriorityClassNotFound", true};
    case QueueReason::kAdmissionUnusable:
      return {"AdmissionUnusable", true};
    case QueueReason::kFailedCreateWorkload:  // the failed request has its own Warning
      return {"FailedCreateWorkload", false};
    case QueueReason::kWaitingForWorkload:
      return {"WaitingForWorkload", false};
    case QueueReason::kWorkloadNotAdoptable:
      return {"WorkloadNotAdoptable", false};
  }
  return {"", false};
}

}  // namespace

std::string_view ReasonName(QueueReason r) { return Info(r).name; }

bool IsWarning(QueueReason r) { return Info(r).warning; }

std::string Waiting::Reason() const {
  return reason == QueueReason::kKueueSays ? kueue_reason : std::string(ReasonName(reason));
}

}  // namespace disttrain::queueing
