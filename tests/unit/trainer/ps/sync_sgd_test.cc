// The synchronous rule (sync, sagn): a fixed count of gradients per step, and replicas joining and
// leaving a running job (issue #37).
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using testing::Grad;
using testing::Values;

float Value(const ShardStore& store) { return store.Read(0)->values.get()[0]; }

TEST(UpdateRuleTest, SyncAveragesReplicasToAggregateAndDropsStaleGradients) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 2);
  EXPECT_FALSE(rule->Apply(0, DensePush(Grad(2)), &store).dropped);
  EXPECT_EQ(store.global_step(), 0) << "waits for the second gradient";
  EXPECT_FALSE(rule->Apply(0, DensePush(Grad(4)), &store).dropped);
  EXPECT_EQ(store.global_step(), 1);
  EXPECT_EQ(Values(store), (std::vector<float>{-0.5f, -0.5f}));  // 1 - 0.5 * (2 + 4) / 2
  EXPECT_TRUE(rule->Apply(0, DensePush(Grad(100)), &store).dropped)
      << "a backup worker's late gradient";
  EXPECT_EQ(Values(store), (std::vector<float>{-0.5f, -0.5f}));
}

TEST(UpdateRuleTest, SyncForgetsPartialAggregatesOfAReplacedStore) {
  auto rule = MakeSyncSgd(0.5f, 2);
  ShardStore old_store({{"w/0", {1, 1}}}, 0, 1);
  rule->Apply(0, DensePush(Grad(2)), &old_store);
  ShardStore restored({{"w/0", {1, 1}}}, 0, 1);  // e.g. restored from a checkpoint
  rule->Apply(0, DensePush(Grad(4)), &restored);
  EXPECT_EQ(restored.global_step(), 0) << "the gradient pushed to the old store does not count";
  rule->Apply(0, DensePush(Grad(4)), &restored);
  EXPECT_EQ(Values(restored), (std::vector<float>{-1, -1}));
}

TEST(SyncSgdTest, AReplicaLeavingAppliesAStepThatHasTheGradientsOfTheOthers) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 3, /*every_replica=*/true);
  rule->SetLiveReplicas(3, &store);
  rule->Apply(0, DensePush(Grad(2)), &store);
  rule->Apply(0, DensePush(Grad(4)), &store);
  EXPECT_EQ(store.global_step(), 0) << "waits for the third replica";
  rule->SetLiveReplicas(2, &store);
  EXPECT_EQ(store.global_step(), 1) << "the third left: the two gradients make the step";
  EXPECT_FLOAT_EQ(Value(store), 1 - 0.5f * (2 + 4) / 2);
  EXPECT_EQ(rule->quorum(), 2);
  rule->Apply(1, DensePush(Grad(1)), &store);
  EXPECT_EQ(store.global_step(), 1);
  rule->Apply(1, DensePush(Grad(1)), &store);
  EXPECT_EQ(store.global_step(), 2) << "two gradients per step from now on";
}

TEST(SyncSgdTest, AReplicaJoiningMakesTheStepWaitForItsGradient) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 1, /*every_replica=*/true);
  rule->SetLiveReplicas(1, &store);
  rule->Apply(0, DensePush(Grad(2)), &store);
  EXPECT_EQ(store.global_step(), 1);
  rule->SetLiveReplicas(3, &store);
  EXPECT_EQ(rule->quorum(), 3);
  rule->Apply(1, DensePush(Grad(2)), &store);
  rule->Apply(1, DensePush(Grad(4)), &store);
  EXPECT_EQ(store.global_step(), 1);
  rule->Apply(1, DensePush(Grad(6)), &store);
  EXPECT_EQ(store.global_step(), 2);
  EXPECT_FLOAT_EQ(Value(store), 1 - 0.5f * 2 - 0.5f * (2 + 4 + 6) / 3);
}

TEST(SyncSgdTest, AConfiguredCountKeepsTheExtraReplicasBackups) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 2, /*every_replica=*/false);
  rule->SetLiveReplicas(4, &store);
  EXPECT_EQ(rule->quorum(), 2) << "--replicas-to-aggregate 2 with 4 replicas";
  rule->SetLiveReplicas(1, &store);
  EXPECT_EQ(rule->quorum(), 1) << "but never waits for replicas that are gone";
  rule->Apply(0, DensePush(Grad(2)), &store);
  EXPECT_EQ(store.global_step(), 1);
}

TEST(SyncSgdTest, AChangeBeforeAnyGradientOrForAnotherStoreAppliesNothing) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 2, /*every_replica=*/true);
  rule->SetLiveReplicas(1, &store);
  EXPECT_EQ(store.global_step(), 0) << "no gradient yet: nothing to apply";
  rule->SetLiveReplicas(2, nullptr);
  rule->Apply(0, DensePush(Grad(2)), &store);
  ShardStore other({{"w/0", {1, 1}}}, 0, 1);
  rule->SetLiveReplicas(1, &other);
  EXPECT_EQ(other.global_step(), 0) << "the gradient was pushed to another store";
  EXPECT_EQ(store.global_step(), 0) << "and it is not the store it was told of";
}

TEST(SyncSgdTest, AGradientOfALaterStepClosesTheStepThisServerStillCollects) {
  // Two servers counted their replicas differently for a moment: the other one applied step 0
  // with two gradients, this one waits for a third that never comes. The next gradient (of step
  // 1) closes step 0 here with the two it has, and counts for step 1.
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 3, /*every_replica=*/true);
  rule->SetLiveReplicas(3, &store);
  rule->Apply(0, DensePush(Grad(2)), &store);
  rule->Apply(0, DensePush(Grad(4)), &store);
  EXPECT_FALSE(rule->Apply(1, DensePush(Grad(8)), &store).dropped);
  EXPECT_EQ(store.global_step(), 1);
  EXPECT_FLOAT_EQ(Value(store), 1 - 0.5f * (2 + 4) / 2);
  rule->Apply(1, DensePush(Grad(8)), &store);
  rule->Apply(1, DensePush(Grad(8)), &store);
  EXPECT_EQ(store.global_step(), 2);
  EXPECT_FLOAT_EQ(Value(store), 1 - 0.5f * 3 - 0.5f * 8);
  EXPECT_TRUE(rule->Apply(500, DensePush(Grad(1)), &store).dropped) << "far beyond any server";
  EXPECT_EQ(store.global_step(), 2);
}

}  // namespace
}  // namespace disttrain::trainer
