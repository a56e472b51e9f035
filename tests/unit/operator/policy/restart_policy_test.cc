// CountRestarts, WithinBackoffLimit, RestartedInPlaceSince and the role sums (restart_policy.h):
// restarts counted once and checked against the backoff limit.
#include "operator/policy/restart_policy.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "operator/policy/pod_state.h"
#include "tests/unit/testing/job_builder.h"
#include "tests/unit/testing/pod_states.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using testing::JobBuilder;
using testing::PodWithRestarts;

api::JobStatus StatusWith(int32_t past, int32_t recorded_restarts,
                          std::vector<std::string> restarting = {}) {
  api::JobStatus s;
  s.replica_statuses[ReplicaType::kWorker].past_restarts = past;
  s.replica_statuses[ReplicaType::kWorker].restarts = recorded_restarts;
  s.restarting_pods = std::move(restarting);
  return s;
}

struct RestartCase {
  std::string name;
  api::JobStatus status;
  std::vector<PodState> pods;
  int32_t backoff_limit;
  int32_t more;
  int32_t want_total;
  bool want_within;
  bool want_new_in_place;
};

class RestartPolicyTest : public ::testing::TestWithParam<RestartCase> {};

TEST_P(RestartPolicyTest, CountsRestartsOnceAndChecksBackoffLimit) {
  const RestartCase& c = GetParam();
  api::DistributedTraining job = JobBuilder("j").Workers(2).Build();
  job.spec.run_policy.backoff_limit = c.backoff_limit;
  RestartTally tally = CountRestarts(c.status, c.pods);
  EXPECT_EQ(tally.total(), c.want_total);
  EXPECT_EQ(WithinBackoffLimit(job, tally, c.more), c.want_within);
  EXPECT_EQ(RestartedInPlaceSince(c.status, tally), c.want_new_in_place);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RestartPolicyTest,
    ::testing::Values(
        RestartCase{"NoRestarts",
                    StatusWith(0, 0),
                    {PodWithRestarts("a", 0), PodWithRestarts("b", 0)},
                    0,
                    0,
                    0,
                    true,
                    false},
        RestartCase{"BackoffLimitZeroAllowsNoRecreation",
                    StatusWith(0, 0),
                    {PodWithRestarts("a", 0)},
                    0,
                    1,
                    0,
                    false,
                    false},
        RestartCase{"InPlaceRestartsCount",
                    StatusWith(0, 0),
                    {PodWithRestarts("a", 2), PodWithRestarts("b", 1)},
                    3,
                    0,
                    3,
                    true,
                    true},
        RestartCase{"InPlaceRestartsOverTheLimit",
                    StatusWith(0, 0),
                    {PodWithRestarts("a", 4)},
                    3,
                    0,
                    4,
                    false,
                    true},
        RestartCase{"AlreadyRecordedInPlaceRestartsAreNotNew",
                    StatusWith(0, 2),
                    {PodWithRestarts("a", 2)},
                    6,
                    0,
                    2,
                    true,
                    false},
        RestartCase{
            "PastPlusInPlace", StatusWith(2, 3), {PodWithRestarts("a", 1)}, 6, 0, 3, true, false},
        RestartCase{"ARecreationAtTheLimitFits",
                    StatusWith(2, 2),
                    {PodWithRestarts("a", 0)},
                    3,
                    1,
                    2,
                    true,
                    false},
        RestartCase{"ARecreationPastTheLimitDoesNot",
                    StatusWith(3, 3),
                    {PodWithRestarts("a", 0)},
                    3,
                    1,
                    3,
                    false,
                    false},
        // A pod being replaced: its 2 in-place restarts moved into pastRestarts (1 + 2).
        RestartCase{"APodBeingReplacedCountsOnlyInPast",
                    StatusWith(3, 3, {"a"}),
                    {PodWithRestarts("a", 2, PodPhase::kFailed)},
                    6,
                    0,
                    3,
                    true,
                    false}),
    [](const auto& info) { return info.param.name; });

TEST(RoleRestartsTest, SumsPastLiveAndSetAsideAndRecordedLiveIsItsInverse) {
  api::ReplicaStatus role;
  role.past_restarts = 3;
  role.set_aside.push_back({.index = 1, .restarts = 4});
  role.set_aside.push_back({.index = 2, .restarts = 1});
  role.restarts = RoleRestarts(role, 2);
  EXPECT_EQ(role.restarts, 3 + 2 + 4 + 1);
  EXPECT_EQ(RecordedLiveRestarts(role), 2);
}

TEST(RoleRestartsTest, APodBeingReplacedOrSetAsideHasNoLiveRestarts) {
  api::JobStatus status;
  status.restarting_pods = {"a"};
  PodState a = PodWithRestarts("a", 2, PodPhase::kFailed);
  PodState b = PodWithRestarts("b", 3);
  b.type = ReplicaType::kWorker;
  b.index = 1;
  EXPECT_EQ(LiveRestarts(status, a), 0);
  EXPECT_EQ(LiveRestarts(status, b), 3);
  status.replica_statuses[ReplicaType::kWorker].set_aside.push_back(
      {.index = 1, .pod_uid = "b", .restarts = 3});
  EXPECT_EQ(LiveRestarts(status, b), 0);
  // Replacing a pod counts the replacement and what it restarted in place.
  EXPECT_EQ(ReplacementRestarts(b), 4);
}

}  // namespace
}  // namespace disttrain::policy
