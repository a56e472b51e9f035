// Job conditions (conditions.h): when a condition is added, when its transition time moves, and
// which one is the job's state.
#include "operator/policy/conditions.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace disttrain::policy {
namespace {

TEST(ConditionsTest, AnOutcomeIsAddedFalseTooWhereAStateIsNot) {
  api::JobStatus s;
  const absl::Time t = absl::FromUnixSeconds(100);
  SetCondition(&s, kRestarting, false, "x", "y", t);
  EXPECT_EQ(FindCondition(s, kRestarting), nullptr);
  AddCondition(&s, kEvaluated, false, "EvaluationTimedOut", "late", t);
  ASSERT_NE(FindCondition(s, kEvaluated), nullptr);
  EXPECT_FALSE(FindCondition(s, kEvaluated)->status);
  EXPECT_EQ(FindCondition(s, kEvaluated)->reason, "EvaluationTimedOut");
}

TEST(ConditionsTest, TransitionTimeMovesOnlyWhenStatusFlips) {
  api::JobStatus s;
  const absl::Time t0 = absl::FromUnixSeconds(100), t1 = absl::FromUnixSeconds(200);
  SetCondition(&s, kRestarting, false, "x", "y", t0);
  EXPECT_TRUE(s.conditions.empty()) << "a False condition that never held is not added";
  SetCondition(&s, kCreated, true, "JobCreated", "m", t0);
  SetCondition(&s, kRunning, true, "PodsRunning", "all running", t0);
  SetCondition(&s, kRunning, true, "PodsRunning", "still running", t1);
  EXPECT_EQ(FindCondition(s, kRunning)->last_transition_time, t0);
  EXPECT_EQ(FindCondition(s, kRunning)->message, "still running");
  SetCondition(&s, kRunning, false, "PodRestarting", "pod x exited", t1);
  EXPECT_EQ(FindCondition(s, kRunning)->last_transition_time, t1);
  EXPECT_EQ(CurrentState(s), "Created");
}

TEST(ConditionsTest, StateIsTheCurrentOneByPrecedence) {
  api::JobStatus s;
  const absl::Time t = absl::FromUnixSeconds(1);
  EXPECT_EQ(CurrentState(s), "");
  SetCondition(&s, kCreated, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Created");
  SetCondition(&s, kRunning, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Running");
  SetCondition(&s, kRestarting, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Restarting");
  SetCondition(&s, kSuspended, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Suspended");
  SetCondition(&s, kSucceeded, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Succeeded");
  EXPECT_TRUE(IsFinished(s));
  SetCondition(&s, kFailed, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Failed");
}

}  // namespace
}  // namespace disttrain::policy
