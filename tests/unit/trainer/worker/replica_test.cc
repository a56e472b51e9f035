// The training loop of the chief and the workers (RunReplica, replica.cc) against real parameter
// servers on loopback, on the toy problem: its closed form gives the variables every step must
// reach, so a step skipped, repeated or started from the wrong variables shows.
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <utility>

#include "absl/synchronization/notification.h"
#include "common/flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/trainer/worker/replica_fixture.h"
#include "trainer/roles.h"

namespace disttrain::trainer {
namespace {

using testing::Await;
using ::testing::ElementsAre;
using testing::ExpectValues;
using testing::kToyRate;
using testing::ToyAfter;

// A server rule that tells `applied` the global step each push it applied reached.
class Watched : public UpdateRule {
 public:
  Watched(std::unique_ptr<UpdateRule> rule, std::function<void(int64_t)> applied)
      : rule_(std::move(rule)), applied_(std::move(applied)) {}

  PushResult Apply(int64_t step, const Push& gradient, ShardStore* store) override {
    PushResult r = rule_->Apply(step, gradient, store);
    applied_(store->global_step());
    return r;
  }
  bool consistent_pulls() const override { return rule_->consistent_pulls(); }
  void SetLiveReplicas(int live, ShardStore* store) override {
    rule_->SetLiveReplicas(live, store);
  }
  int quorum() const override { return rule_->quorum(); }

 private:
  const std::unique_ptr<UpdateRule> rule_;
  const std::function<void(int64_t)> applied_;
};

std::unique_ptr<UpdateRule> Sync(int replicas) { return MakeSyncSgd(kToyRate, replicas); }

class ReplicaTest : public testing::ReplicaFixture {
 protected:
  // Runs the chief to options_.steps while the one server restarts (without variables) once it
  // reached `restart_at`, each step before it taking at least `step_time`; `replacement` makes the
  // new server's rule. The chief's exit code.
  int RunThroughARestart(int64_t restart_at, absl::Duration step_time,
                         const std::function<std::unique_ptr<UpdateRule>()>& replacement) {
    absl::Notification reached, restarting;
    servers_.Start(1, [&] {
      return std::make_unique<Watched>(Sync(1), [&](int64_t step) {
        if (step < restart_at) {
          absl::SleepFor(step_time);
          return;
        }
        if (step != restart_at || reached.HasBeenNotified()) return;
        reached.Notify();
        restarting.WaitForNotificationWithTimeout(absl::Seconds(30));
      });
    });
    std::atomic<bool> stop = false;
    const ClusterSpec spec = Spec("chief");
    std::future<int> chief =
        std::async(std::launch::async, [&] { return RunReplica(spec, options_, stop); });
    if (!reached.WaitForNotificationWithTimeout(absl::Seconds(30))) {
      ADD_FAILURE() << "the server never reached step " << restart_at;
    }
    restarting.Notify();
    servers_.Restart(0, replacement);
    return Await(chief, stop);
  }
};

TEST_F(ReplicaTest, TheChiefTrainsToTheLastStepAndLeavesTheResultForKubernetes) {
  servers_.Start(1, [] { return Sync(1); });
  const std::atomic<bool> stop = false;
  EXPECT_EQ(RunReplica(Spec("chief"), options_, stop), kExitOk);
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step, 6) << "the final checkpoint";
  ExpectValues(last->values, ToyAfter(6));
  const nlohmann::json result = Result();
  ASSERT_TRUE(result.is_object()) << "no termination message";
  EXPECT_EQ(result["globalStep"], 6);
  const double residual = 2.0 * ToyAfter(6)[0][0] - 100;  // loss: two elements of r^2 / 2
  EXPECT_NEAR(result["loss"].get<double>(), residual * residual, 1e-3);
}

TEST_F(ReplicaTest, TrainingTimeComesFromTheInjectedClock) {
  servers_.Start(1, [] { return Sync(1); });
  const std::atomic<bool> stop = false;
  FakeClock clock;  // never moves: six steps take no time at all
  EXPECT_EQ(RunReplica(Spec("chief"), options_, stop, &clock), kExitOk);
  EXPECT_EQ(Result()["trainSeconds"], 0.0);
}

TEST_F(ReplicaTest, TheChiefRestoresTheNewestCheckpointAndTrainsOnFromItsStep) {
  ASSERT_TRUE(
      WriteCheckpoint(options_.model_dir, 3, {{"a", 2}, {"b", 2}}, ToyAfter(0, 40), 5).ok());
  servers_.Start(1, [] { return Sync(1); });
  const std::atomic<bool> stop = false;
  EXPECT_EQ(RunReplica(Spec("chief"), options_, stop), kExitOk);
  EXPECT_THAT(CheckpointSteps(options_.model_dir), ElementsAre(6, 3)) << "nothing from step 0";
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  ExpectValues(last->values, ToyAfter(3, 40));
}

TEST_F(ReplicaTest, ACheckpointOfAnotherModelIsAUsageError) {
  ASSERT_TRUE(WriteCheckpoint(options_.model_dir, 3, {{"w", 3}}, {{1, 2, 3}}, 5).ok());
  servers_.Start(1, [] { return Sync(1); });
  const std::atomic<bool> stop = false;
  EXPECT_EQ(RunReplica(Spec("chief"), options_, stop), kExitUsage);
  EXPECT_EQ(servers_.service(0).store(0), nullptr) << "the servers were left uninitialised";
  EXPECT_TRUE(Result().is_null());
}

TEST_F(ReplicaTest, AStoppedChiefSavesWhatTheServersHoldAndExitsAsSigtermDoes) {
  std::atomic<bool> stop = false;  // SIGTERM once the servers reached step 3
  servers_.Start(1, [&stop] {
    return std::make_unique<Watched>(Sync(1), [&stop](int64_t step) {
      if (step == 3) stop = true;
    });
  });
  options_.steps = 1000;
  EXPECT_EQ(RunReplica(Spec("chief"), options_, stop), 143);
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step, 3);
  ExpectValues(last->values, ToyAfter(3));
  EXPECT_TRUE(Result().is_null()) << "a stopped job has no result";
}

TEST_F(ReplicaTest, ServersUnreachablePastTheRetryBudgetAreATransientFailure) {
  TfConfig c;
  c.cluster = {{"ps", {"127.0.0.1:1"}}, {"chief", {"127.0.0.1:2"}}};  // nothing listens there
  c.task_type = "chief";
  absl::StatusOr<ClusterSpec> spec = MakeClusterSpec(c);
  ASSERT_TRUE(spec.ok()) << spec.status();
  options_.retry_seconds = 0;
  const std::atomic<bool> stop = false;
  EXPECT_EQ(RunReplica(*spec, options_, stop), kExitTransient);
}

TEST_F(ReplicaTest, SynchronousReplicasMeetAtEveryStep) {
  // Each step averages the chief's gradient at rate 0.1 and the worker's at 0.3 (the toy problem
  // has no data: their gradients are the same), so the variables move at 0.2 per step only if
  // every step has one gradient of each, computed at that step's variables.
  options_.worker_learning_rates = "0.1,0.3";
  servers_.Start(1, [] { return Sync(2); });
  std::atomic<bool> stop = false;
  const ClusterSpec chief = Spec("chief", 0, 1), worker = Spec("worker", 0, 1);
  std::future<int> w =
      std::async(std::launch::async, [&] { return RunReplica(worker, options_, stop); });
  std::future<int> c =
      std::async(std::launch::async, [&] { return RunReplica(chief, options_, stop); });
  EXPECT_EQ(Await(c, stop), kExitOk);
  EXPECT_EQ(Await(w, stop), kExitOk);
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step, 6);
  ExpectValues(last->values, ToyAfter(6, 0, (0.1f + 0.3f) / 2), 1e-3f);
}

TEST_F(ReplicaTest, ResumesAtTheRestoredStepWhenAParameterServerRestarts) {
  // The server restarts (without variables) once it reached step 5; the chief restores the
  // checkpoint of step 4 into it and must train on from step 4, not wait for the step after
  // its last push, which nobody computes any more.
  options_.steps = 30;
  options_.checkpoint_steps = 2;
  options_.ps_copy_seconds = 0;  // the checkpoint's restore
  EXPECT_EQ(RunThroughARestart(5, absl::ZeroDuration(), [] { return Sync(1); }), kExitOk);
  ASSERT_NE(servers_.service(0).store(0), nullptr) << "the new server was never initialised";
  EXPECT_EQ(servers_.service(0).store(0)->global_step(), 30);
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step, 30);
  ExpectValues(last->values, ToyAfter(30));
}

TEST_F(ReplicaTest, ARestartedServerIsRestoredFromTheChiefsCopyNotFromAnOlderCheckpoint) {
  // The only checkpoint is step 0's (checkpoint_steps 1000). The chief copies the servers every
  // 5 ms while each step takes at least 10 ms; the server restarts at step 20. Restored from the
  // copy, the new server's first push lands past step 10; restored from the checkpoint (no copy:
  // the code before --ps-copy-seconds) it would be step 1's. The values at the end are the toy's
  // closed form at step 30 either way: a copy whose values and step disagreed would show there.
  options_.steps = 30;
  options_.ps_copy_seconds = 0.005;
  std::atomic<int64_t> first_step = -1;
  EXPECT_EQ(RunThroughARestart(20, absl::Milliseconds(10),
                               [&] {
                                 return std::make_unique<Watched>(Sync(1), [&](int64_t step) {
                                   int64_t none = -1;
                                   first_step.compare_exchange_strong(none, step);
                                 });
                               }),
            kExitOk);
  EXPECT_GT(first_step.load(), 10) << "restored from the checkpoint of step 0, not the copy";
  EXPECT_LE(first_step.load(), 21);
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step, 30);
  ExpectValues(last->values, ToyAfter(30));
}

}  // namespace
}  // namespace disttrain::trainer
