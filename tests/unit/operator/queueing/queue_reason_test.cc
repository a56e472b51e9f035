// QueueReason (queue_reason.h): every reason's condition name and severity.
#include "operator/queueing/queue_reason.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace disttrain::queueing {
namespace {

struct ReasonCase {
  QueueReason reason;
  std::string name;
  bool warning;
};

TEST(QueueReasonTest, NamesAndSeverities) {
  const ReasonCase cases[] = {
      {QueueReason::kWaitingForAdmission, "WaitingForAdmission", false},
      {QueueReason::kWaitingForAdmissionChecks, "WaitingForAdmissionChecks", false},
      {QueueReason::kInadmissible, "Inadmissible", true},
      {QueueReason::kPreempted, "Preempted", true},
      {QueueReason::kEvicted, "Evicted", true},
      {QueueReason::kWorkloadReplaced, "WorkloadReplaced", false},
      {QueueReason::kWorkloadPriorityClassNotFound, "WorkloadPriorityClassNotFound", true},
      {QueueReason::kAdmissionUnusable, "AdmissionUnusable", true},
      {QueueReason::kFailedCreateWorkload, "FailedCreateWorkload", false},
      {QueueReason::kWaitingForWorkload, "WaitingForWorkload", false},
      {QueueReason::kWorkloadNotAdoptable, "WorkloadNotAdoptable", false},
  };
  std::set<std::string> names;
  for (const ReasonCase& c : cases) {
    EXPECT_EQ(ReasonName(c.reason), c.name);
    EXPECT_EQ(IsWarning(c.reason), c.warning) << c.name;
    EXPECT_EQ((Waiting{c.reason, "m"}).Reason(), c.name);
    names.insert(c.name);
  }
  EXPECT_EQ(names.size(), std::size(cases)) << "two reasons share a name";
}

TEST(QueueReasonTest, KueuesOwnReasonIsSaidAsIs) {
  const Waiting w{QueueReason::kKueueSays, "couldn't assign flavors", "Pending"};
  EXPECT_EQ(w.Reason(), "Pending");
  EXPECT_FALSE(IsWarning(w.reason));
}

}  // namespace
}  // namespace disttrain::queueing
