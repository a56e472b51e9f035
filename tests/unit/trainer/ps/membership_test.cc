#include "trainer/ps/membership.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1000);
absl::Time At(int seconds) { return kT0 + absl::Seconds(seconds); }

TEST(MembershipTest, TfConfigReplicasCountFromTheStart) {
  Membership m({"chief-0", "worker-0", "worker-1"}, absl::Seconds(30));
  EXPECT_EQ(m.live(), 3);
  EXPECT_FALSE(m.Seen("worker-0", /*push=*/true)) << "a known replica changes nothing";
  EXPECT_EQ(m.live(), 3);
}

TEST(MembershipTest, AReplicaJoinsWithItsFirstPushNotWithAPull) {
  Membership m({"chief-0"}, absl::Seconds(30));
  EXPECT_FALSE(m.Seen("evaluator-0", /*push=*/false));
  EXPECT_FALSE(m.Seen("worker-3", /*push=*/false)) << "a new worker's first pull";
  EXPECT_EQ(m.live(), 1);
  EXPECT_TRUE(m.Seen("worker-3", /*push=*/true));
  EXPECT_EQ(m.live(), 2);
}

TEST(MembershipTest, LeavingCountsOnceAndAPushJoinsAgain) {
  Membership m({"chief-0", "worker-0"}, absl::Seconds(30));
  EXPECT_TRUE(m.Leave("worker-0"));
  EXPECT_FALSE(m.Leave("worker-0"));
  EXPECT_FALSE(m.Leave("worker-9")) << "never a member";
  EXPECT_EQ(m.live(), 1);
  EXPECT_FALSE(m.Seen("worker-0", /*push=*/false)) << "its last pull does not rejoin it";
  EXPECT_TRUE(m.Seen("worker-0", /*push=*/true)) << "a replaced pod's first push";
  EXPECT_EQ(m.live(), 2);
}

TEST(MembershipTest, AReplicaSilentWhileOthersCallIsGoneAfterTheTimeout) {
  Membership m({"chief-0", "worker-0", "worker-1"}, absl::Seconds(30));
  m.Expire(At(0));
  // Every 10 s the chief and worker-0 call (pushes or the pulls of a synchronous wait);
  // worker-1 never comes.
  for (int t = 10; t <= 30; t += 10) {
    m.Seen("chief-0", /*push=*/t == 10);
    m.Seen("worker-0", /*push=*/false);
    EXPECT_THAT(m.Expire(At(t)), IsEmpty()) << "30 s is not past the timeout";
  }
  m.Seen("chief-0", /*push=*/false);
  EXPECT_THAT(m.Expire(At(40)), ElementsAre("worker-1"));
  EXPECT_EQ(m.live(), 2);
}

TEST(MembershipTest, NobodysSilenceGrowsWhileTheWholeJobPauses) {
  Membership m({"chief-0", "worker-0"}, absl::Seconds(30));
  m.Expire(At(0));
  EXPECT_THAT(m.Expire(At(1000)), IsEmpty()) << "nobody called yet: an image pull costs nothing";
  m.Seen("chief-0", /*push=*/true);
  m.Seen("worker-0", /*push=*/true);
  m.Expire(At(1001));
  // Both wait for a restarted server (or the chief's connections stall): no call for 5 minutes.
  EXPECT_THAT(m.Expire(At(1301)), IsEmpty());
  // The chief resumes first; worker-0 has the whole timeout from now to be heard.
  m.Seen("chief-0", /*push=*/false);
  EXPECT_THAT(m.Expire(At(1311)), IsEmpty());
  m.Seen("worker-0", /*push=*/false);
  m.Seen("chief-0", /*push=*/false);
  EXPECT_THAT(m.Expire(At(1341)), IsEmpty()) << "worker-0 was heard";
  EXPECT_EQ(m.live(), 2);
}

TEST(MembershipTest, AnInfiniteTimeoutKeepsMembersUntilTheyLeave) {
  Membership m({"chief-0", "worker-0"}, absl::InfiniteDuration());
  m.Expire(At(0));
  for (int t = 1; t < 100; ++t) {
    m.Seen("chief-0", /*push=*/true);
    EXPECT_THAT(m.Expire(At(t * 1000)), IsEmpty());
  }
  EXPECT_EQ(m.live(), 2);
}

TEST(QuorumTest, FollowsTheLiveReplicasUpToTheConfiguredCount) {
  struct Case {
    int live, configured;
    bool every;
    int want;
  };
  for (const Case& c : std::vector<Case>{
           {3, 3, true, 3},   // as started
           {5, 3, true, 5},   // scaled up: every live replica aggregated
           {1, 3, true, 1},   // scaled down
           {5, 2, false, 2},  // --replicas-to-aggregate 2: the rest are backups
           {1, 2, false, 1},  // fewer live than configured
           {0, 2, false, 1},  // never below one
           {0, 3, true, 1},
       }) {
    EXPECT_EQ(Quorum(c.live, c.configured, c.every), c.want)
        << c.live << " live, " << c.configured << " configured, every " << c.every;
  }
}

}  // namespace
}  // namespace disttrain::trainer
