// The parameter server's membership (FollowReplicas, Leave, Describe): synchronous steps follow
// the training replicas that join, leave or fall silent. One PushPull call is
// push_pull_reactor_test.cc's, the evaluator's snapshots snapshot_test.cc's.
#include "trainer/ps/parameter_server.h"

#include <thread>

#include "gtest/gtest.h"
#include "tests/unit/trainer/ps/parameter_server_fixture.h"

namespace disttrain::trainer {
namespace {

using testing::Eventually;
using testing::kAsIs;
using testing::ParameterServerTest;

TEST_F(ParameterServerTest, SyncStepsFollowTheReplicasThatJoinAndLeave) {  // #37
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::InfiniteDuration());
  v1::PushPullStatus waited;  // chief-0 pushes, then waits for step 1 as a sync replica does
  std::thread chief([&] { EXPECT_TRUE(Push("chief-0", 0, kAsIs, 0, &waited, 1, 20'000).ok()); });
  ASSERT_TRUE(Eventually([&] { return service_->store(0)->waiting_pulls() == 1; }));
  ASSERT_TRUE(Push("worker-1", 0, kAsIs).ok()) << "a worker scaled in";
  EXPECT_EQ(service_->live_replicas(), 3);
  grpc::ClientContext ctx;
  v1::LeaveRequest leave;
  leave.set_worker("worker-0");
  v1::LeaveResponse left;
  ASSERT_TRUE(stub_->Leave(&ctx, leave, &left).ok());
  EXPECT_EQ(left.live_replicas(), 2);
  chief.join();
  EXPECT_EQ(waited.global_step(), 1) << "the leave completed the step the chief waited for";
  EXPECT_EQ(waited.live_replicas(), 2);
  EXPECT_EQ(Pull().first["w/0"][9], big_[9] - 0.5f) << "chief-0's and worker-1's average";
}

TEST_F(ParameterServerTest, AReplicaSilentWhileAnotherCallsStopsCountingAfterTheTimeout) {
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::Milliseconds(300));
  ASSERT_TRUE(Push("chief-0", 0, kAsIs).ok());
  // chief-0 keeps calling (Describe, as a replica waiting for the servers); worker-0 never does.
  EXPECT_TRUE(Eventually([&] {
    grpc::ClientContext ctx;
    v1::DescribeRequest req;
    req.set_worker("chief-0");
    v1::DescribeResponse resp;
    EXPECT_TRUE(stub_->Describe(&ctx, req, &resp).ok());
    return service_->store(0)->global_step() == 1;
  })) << "worker-0's silence passed the timeout: the step went on without it";
  EXPECT_EQ(service_->live_replicas(), 1);
}

TEST_F(ParameterServerTest, TheDefaultMinuteOfSilenceIsTimedOnTheInjectedClock) {
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true), 1, &fake_clock_);
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::Seconds(60));  // the flag's default
  ASSERT_TRUE(Push("chief-0", 0, kAsIs).ok());
  // Each second of the fake clock: chief-0 calls (the job is active), the server checks the
  // silences once; worker-0 never calls. No real minute passes.
  int seconds = 0;
  for (; seconds < 70 && service_->live_replicas() == 2; ++seconds) {
    fake_clock_.Advance(absl::Seconds(1));
    grpc::ClientContext ctx;
    v1::DescribeRequest req;
    req.set_worker("chief-0");
    v1::DescribeResponse resp;
    ASSERT_TRUE(stub_->Describe(&ctx, req, &resp).ok());
    const int64_t since = service_->silence_checks();
    ASSERT_TRUE(Eventually([&] { return service_->silence_checks() > since; }));
  }
  EXPECT_GE(seconds, 60) << "worker-0 was dropped before a minute of silence";
  EXPECT_LE(seconds, 62) << "worker-0 was still counted after a minute of silence";
  EXPECT_EQ(service_->live_replicas(), 1);
  EXPECT_TRUE(Eventually([&] { return service_->store(0)->global_step() == 1; }))
      << "the step went on without worker-0";
}

TEST_F(ParameterServerTest, NobodyStopsCountingWhileEveryReplicaIsSilent) {
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::Milliseconds(300));
  ASSERT_TRUE(Push("chief-0", 0, kAsIs).ok());
  const int64_t since = service_->silence_checks();  // then all pause, 15 checks (5x the timeout)
  ASSERT_TRUE(Eventually([&] { return service_->silence_checks() >= since + 15; }));
  EXPECT_EQ(service_->live_replicas(), 2);
  EXPECT_EQ(service_->store(0)->global_step(), 0) << "the step still waits for worker-0";
}

}  // namespace
}  // namespace disttrain::trainer
