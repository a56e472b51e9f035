// Why a job sent to a queue does not run: the reason its Queued condition gives, and how loud
// the news of it is (a Warning event, or a Normal "Queued" one). One enum, so a new reason
// states its severity where it is declared, never by matching strings. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_QUEUEING_QUEUE_REASON_H_
#define DISTTRAIN_OPERATOR_QUEUEING_QUEUE_REASON_H_

#include <string>
#include <string_view>

namespace disttrain::queueing {

enum class QueueReason {
  kWaitingForAdmission,        // no word from Kueue yet
  kWaitingForAdmissionChecks,  // quota reserved, admission checks pending
  kKueueSays,                  // Kueue's own QuotaReserved/Admitted=False reason, e.g. Pending
  kInadmissible,               // Kueue's reason Inadmissible (e.g. the LocalQueue is missing)
  kPreempted,                  // evicted by Kueue to make room for another workload
  kEvicted,                    // evicted by Kueue for another reason
  kWorkloadReplaced,           // the job changed: its Workload is replaced, admitted again
  kWorkloadPriorityClassNotFound,
  kAdmissionUnusable,     // the admission names a ResourceFlavor not cached (yet)
  kFailedCreateWorkload,  // the Workload's create failed; retried with backoff
  kWaitingForWorkload,    // MultiKueue's copy: its prebuilt Workload does not exist yet
  kWorkloadNotAdoptable,  // MultiKueue's copy: its prebuilt Workload cannot be adopted
};

// The Queued condition's reason for `r` (kKueueSays has none of its own: Waiting::Reason).
std::string_view ReasonName(QueueReason r);

// Whether news of `r` is a Warning event (the user must act, or lost something) rather than a
// Normal one.
bool IsWarning(QueueReason r);

// Why a job waits, for its Queued condition and event.
struct Waiting {
  QueueReason reason = QueueReason::kWaitingForAdmission;
  std::string message;
  std::string kueue_reason;  // kKueueSays: the reason Kueue gave, said as is

  // The condition's reason: ReasonName, or Kueue's own for kKueueSays.
  std::string Reason() const;
  bool operator==(const Waiting&) const = default;
};

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_QUEUE_REASON_H_
