// Tests trainer/worker/step_tracker.cc: what a replica sends and how it reads each reply, as a
// sequence of calls and replies per case (no server).
#include "trainer/worker/step_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace disttrain::trainer {
namespace {

using Incarnations = std::vector<std::string>;
const Incarnations kFirst = {"ps0-a", "ps1-a"};
const Incarnations kPs1Restarted = {"ps0-a", "ps1-b"};

TEST(StepTrackerTest, TheFirstCallPushesNothingAndTrainsAtTheServersStep) {
  for (bool sync : {false, true}) {
    StepTracker t(sync);
    const StepTracker::Call call = t.Begin();
    EXPECT_FALSE(call.push);
    EXPECT_EQ(call.min_step, 0);
    const StepTracker::Verdict v = t.Reply(7, false, kFirst);
    EXPECT_TRUE(v.train);
    EXPECT_EQ(v.step, 7);
    EXPECT_TRUE(v.new_incarnations) << "the scheme starts from the servers' values";
    EXPECT_FALSE(v.restarted) << "nothing restarted: this is the first reply";
  }
}

TEST(StepTrackerTest, SyncWaitsForTheAggregateOfItsOwnPush) {
  StepTracker t(/*sync=*/true);
  t.Begin();
  t.Reply(0, false, kFirst);
  t.Computed(0);
  StepTracker::Call call = t.Begin();
  EXPECT_TRUE(call.push);
  EXPECT_EQ(call.step, 0);
  EXPECT_EQ(call.min_step, 1);
  StepTracker::Verdict v = t.Reply(0, false, kFirst);  // the others' gradients are missing
  EXPECT_FALSE(v.train);
  call = t.Begin();
  EXPECT_FALSE(call.push) << "a gradient is pushed once";
  EXPECT_EQ(call.min_step, 1);
  v = t.Reply(1, false, kFirst);
  EXPECT_TRUE(v.train);
  EXPECT_EQ(v.step, 1);
  EXPECT_FALSE(v.new_incarnations);
}

TEST(StepTrackerTest, SyncTrainsAtTheServersStepWhenItsPushWasDroppedAsStale) {
  StepTracker t(/*sync=*/true);
  t.Begin();
  t.Reply(3, false, kFirst);
  t.Computed(3);
  t.Begin();
  // Backup workers: the step closed without this gradient and moved on to 5.
  const StepTracker::Verdict v = t.Reply(5, /*dropped=*/true, kFirst);
  EXPECT_TRUE(v.train);
  EXPECT_EQ(v.step, 5);
  t.Computed(5);
  EXPECT_EQ(t.Begin().min_step, 6);
}

TEST(StepTrackerTest, ARestartedServerResumesTrainingAtTheRestoredStep) {
  StepTracker t(/*sync=*/true);
  t.Begin();
  t.Reply(40, false, kFirst);
  t.Computed(40);
  t.Begin();
  // ps-1 restarted and the chief restored every server from the checkpoint at step 30: waiting
  // for step 41 would wait for gradients nobody computes any more.
  const StepTracker::Verdict v = t.Reply(30, false, kPs1Restarted);
  EXPECT_TRUE(v.train);
  EXPECT_EQ(v.step, 30);
  EXPECT_TRUE(v.new_incarnations);
  EXPECT_TRUE(v.restarted);
}

TEST(StepTrackerTest, AsyncNeverWaitsForAStep) {
  StepTracker t(/*sync=*/false);
  t.Begin();
  t.Reply(10, false, kFirst);
  t.Computed(10);
  const StepTracker::Call call = t.Begin();
  EXPECT_TRUE(call.push);
  EXPECT_EQ(call.step, 10);
  EXPECT_EQ(call.min_step, 0);
  const StepTracker::Verdict v = t.Reply(10, false, kFirst);  // pulled before the push landed
  EXPECT_TRUE(v.train);
  EXPECT_EQ(v.step, 10);
}

TEST(StepTrackerTest, AfterAReconnectNothingIsPushedAndIncarnationsAreTakenAnew) {
  StepTracker t(/*sync=*/true);
  t.Begin();
  t.Reply(8, false, kFirst);
  t.Computed(8);
  t.Begin();  // this call failed: the gradient may or may not have been applied
  t.Reconnected();
  const StepTracker::Call call = t.Begin();
  EXPECT_FALSE(call.push) << "never pushed twice";
  const StepTracker::Verdict v = t.Reply(9, false, kFirst);
  EXPECT_TRUE(v.train);
  EXPECT_EQ(v.step, 9);
  EXPECT_TRUE(v.new_incarnations);
  EXPECT_FALSE(v.restarted) << "the same servers, seen again after the reconnect";
}

}  // namespace
}  // namespace disttrain::trainer
