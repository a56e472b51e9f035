#include "operator/controller/expectations.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace disttrain::controller {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(ExpectationsTest, RemembersPodsBeingDeletedUntilTheyAreSeenGone) {
  Expectations e;
  e.Deleting("p1");
  EXPECT_TRUE(e.IsDeleting("p1"));
  EXPECT_FALSE(e.IsDeleting("p2"));
  e.PodGone("p1");
  EXPECT_FALSE(e.IsDeleting("p1"));
  EXPECT_EQ(e.pods(), 0u);
}

TEST(ExpectationsTest, RemembersObjectsBeingCreatedUntilSeenOrTheLimitPasses) {
  Expectations e;
  const absl::Duration limit = absl::Seconds(30);
  e.Creating("pods/ns/a-chief-0", kT0);
  e.Creating("services/ns/a-chief-0", kT0);
  EXPECT_TRUE(e.IsCreating("pods/ns/a-chief-0", kT0 + absl::Seconds(29), limit));
  EXPECT_FALSE(e.IsCreating("pods/ns/a-ps-0", kT0, limit));
  e.Seen("pods/ns/a-chief-0");
  EXPECT_FALSE(e.IsCreating("pods/ns/a-chief-0", kT0, limit));
  EXPECT_FALSE(e.IsCreating("services/ns/a-chief-0", kT0 + limit, limit)) << "never seen";
  EXPECT_EQ(e.creating(), 0u) << "an entry past the limit goes";
}

TEST(ExpectationsTest, CountsCreateFailuresInARowPerJobAndStartsAgainForANewJobOfTheName) {
  Expectations e;
  EXPECT_EQ(e.CreateFailed("ns/a", "u1"), 1);
  EXPECT_EQ(e.CreateFailed("ns/a", "u1"), 2);
  EXPECT_EQ(e.CreateFailed("ns/b", "u2"), 1);
  EXPECT_EQ(e.CreateFailed("ns/a", "u3"), 1) << "ns/a was deleted and created again";
  e.CreatedAll("ns/a");
  EXPECT_EQ(e.CreateFailed("ns/a", "u3"), 1);
  e.CreatedAll("ns/a");
  e.CreatedAll("ns/b");
  EXPECT_EQ(e.jobs(), 0u) << "nothing left to remember";
}

TEST(ExpectationsTest, AJobIsBehindItsOwnWriteUntilTheCacheMovesOrTheLimitPasses) {
  Expectations e;
  const absl::Duration limit = absl::Seconds(10);
  EXPECT_FALSE(e.BehindOwnWrite("ns/a", "5", kT0, limit));
  e.WroteStatus("ns/a", "u1", "5", kT0);
  EXPECT_TRUE(e.BehindOwnWrite("ns/a", "5", kT0 + absl::Seconds(1), limit));
  EXPECT_FALSE(e.BehindOwnWrite("ns/a", "6", kT0 + absl::Seconds(2), limit)) << "caught up";
  EXPECT_FALSE(e.BehindOwnWrite("ns/a", "5", kT0 + absl::Seconds(3), limit)) << "forgotten";
  e.WroteStatus("ns/a", "u1", "7", kT0);
  EXPECT_FALSE(e.BehindOwnWrite("ns/a", "7", kT0 + limit, limit)) << "waited long enough";
  EXPECT_EQ(e.jobs(), 0u);
}

TEST(ExpectationsTest, AWaitingFirstWriteKeepsTheFirstPassTimeOfThatJobOnly) {
  Expectations e;
  const absl::Time now = kT0 + absl::Seconds(5);
  EXPECT_EQ(e.FirstPassTime("ns/a", "u1", now), now);
  e.FirstWriteWaits("ns/a", "u1", kT0);
  EXPECT_EQ(e.FirstPassTime("ns/a", "u1", now), kT0);
  EXPECT_EQ(e.FirstPassTime("ns/a", "u2", now), now) << "another job of the same name";
  e.FirstWriteDone("ns/a");
  EXPECT_EQ(e.FirstPassTime("ns/a", "u1", now), now);
  EXPECT_EQ(e.jobs(), 0u);
}

TEST(ExpectationsTest, APodGroupBehindItsJobIsRememberedUntilItCatchesUp) {
  Expectations e;
  e.PodGroupBehind("ns/a", "u1", false);
  EXPECT_EQ(e.jobs(), 0u) << "nothing to remember";
  e.PodGroupBehind("ns/a", "u1", true);
  EXPECT_TRUE(e.IsPodGroupBehind("ns/a", "u1"));
  EXPECT_FALSE(e.IsPodGroupBehind("ns/a", "u2")) << "a new job of the same name has its own";
  e.PodGroupBehind("ns/a", "u1", false);
  EXPECT_FALSE(e.IsPodGroupBehind("ns/a", "u1"));
  EXPECT_EQ(e.jobs(), 0u);
}

TEST(ExpectationsTest, APodGroupIsDeletedOncePerJob) {
  Expectations e;
  EXPECT_FALSE(e.IsPodGroupDeleted("ns/a", "u1"));
  e.PodGroupDeleted("ns/a", "u1");
  EXPECT_TRUE(e.IsPodGroupDeleted("ns/a", "u1"));
  EXPECT_FALSE(e.IsPodGroupDeleted("ns/a", "u2")) << "a new job of the same name has its own";
}

TEST(ExpectationsTest, AFinishedWorkloadIsReleasedOnce) {
  Expectations e;
  EXPECT_FALSE(e.IsWorkloadReleased("ns/a", "u1", "w1"));
  e.WorkloadReleased("ns/a", "u1", "w1");
  EXPECT_TRUE(e.IsWorkloadReleased("ns/a", "u1", "w1"));
  EXPECT_FALSE(e.IsWorkloadReleased("ns/a", "u1", "w2")) << "the job's next Workload";
  EXPECT_FALSE(e.IsWorkloadReleased("ns/a", "u2", "w1")) << "a new job of the same name";
  e.JobGone("ns/a");
  EXPECT_EQ(e.jobs(), 0u);
}

TEST(ExpectationsTest, ADeletedJobLeavesNothingBehind) {
  Expectations e;
  e.CreateFailed("ns/a", "u1");
  e.WroteStatus("ns/a", "u1", "5", kT0);
  e.FirstWriteWaits("ns/a", "u1", kT0);
  e.PodGroupDeleted("ns/a", "u1");
  e.CreateFailed("ns/b", "u2");
  EXPECT_EQ(e.jobs(), 2u);
  e.JobGone("ns/a");
  EXPECT_EQ(e.jobs(), 1u);
  EXPECT_FALSE(e.IsPodGroupDeleted("ns/a", "u1"));
  EXPECT_FALSE(e.BehindOwnWrite("ns/a", "5", kT0, absl::Seconds(10)));
  e.JobGone("ns/b");
  EXPECT_EQ(e.jobs(), 0u);
}

}  // namespace
}  // namespace disttrain::controller
