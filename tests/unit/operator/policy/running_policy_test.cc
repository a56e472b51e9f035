// CountReadiness (running_policy.h): which replicas are wanted and which run, with and without
// an elasticPolicy.
#include "operator/policy/running_policy.h"

#include <algorithm>
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

struct ReadinessCase {
  std::string name;
  std::vector<std::pair<int, PodState>> workers;  // index -> pod
  std::vector<int> succeeded;
  int want_wanted, want_running;
};

class RunningPolicyTest : public ::testing::TestWithParam<ReadinessCase> {};

TEST_P(RunningPolicyTest, CountsWantedAndRunningReplicas) {
  const ReadinessCase& c = GetParam();
  api::DistributedTraining job = JobBuilder("j").Workers(3).Build();
  PodsByReplica pods;
  for (const auto& [i, pod] : c.workers) pods[{ReplicaType::kWorker, i}] = pod;
  auto succeeded = [&](ReplicaType, int i) {
    return std::find(c.succeeded.begin(), c.succeeded.end(), i) != c.succeeded.end();
  };
  Readiness r = CountReadiness(job, pods, succeeded);
  EXPECT_EQ(r.wanted, c.want_wanted);
  EXPECT_EQ(r.running, c.want_running);
  EXPECT_EQ(r.EnoughRunning(), r.AllRunning()) << "without an elasticPolicy they agree";
}

TEST(RunningPolicyTest, WithAnElasticPolicyMinReplicasOfTheWorkersAreEnough) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(3).Build();
  PodsByReplica pods = {
      {{ReplicaType::kChief, 0}, PodWithRestarts("c", 0)},
      {{ReplicaType::kWorker, 0}, PodWithRestarts("a", 0)},
      {{ReplicaType::kWorker, 1}, PodWithRestarts("b", 0)}};  // worker 2: unschedulable
  auto none = [](ReplicaType, int) { return false; };
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "no elasticPolicy: all three";
  job.spec.elastic_policy = api::ElasticPolicy{2, 4};
  Readiness r = CountReadiness(job, pods, none);
  EXPECT_TRUE(r.EnoughRunning()) << r.workers_running << " of " << r.workers_enough;
  EXPECT_FALSE(r.AllRunning()) << "a restarted or pending worker still is not running";
  EXPECT_EQ(r.workers_running, 2);
  EXPECT_EQ(r.workers_wanted, 3);
  pods[{ReplicaType::kWorker, 2}] = PodWithRestarts("d", 0);
  EXPECT_TRUE(CountReadiness(job, pods, none).AllRunning());
  pods.erase({ReplicaType::kWorker, 1});
  pods.erase({ReplicaType::kWorker, 2});
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "one worker: below minReplicas";
  pods.erase({ReplicaType::kChief, 0});
  pods[{ReplicaType::kWorker, 1}] = PodWithRestarts("b", 0);
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "the chief is never optional";
}

PodState Terminating() {
  PodState p = PodWithRestarts("t", 0);
  p.terminating = true;
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Table, RunningPolicyTest,
    ::testing::Values(ReadinessCase{"NoPods", {}, {}, 3, 0},
                      ReadinessCase{"AllRunningAndReady",
                                    {{0, PodWithRestarts("a", 0)},
                                     {1, PodWithRestarts("b", 0)},
                                     {2, PodWithRestarts("c", 0)}},
                                    {},
                                    3,
                                    3},
                      ReadinessCase{"RunningButNotReady",
                                    {{0, PodWithRestarts("a", 0, PodPhase::kRunning, false)}},
                                    {},
                                    3,
                                    0},
                      ReadinessCase{
                          "SucceededAreNotWanted", {{0, PodWithRestarts("a", 0)}}, {1, 2}, 1, 1},
                      ReadinessCase{"TerminatingDoesNotRun", {{0, Terminating()}}, {1, 2}, 1, 0}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::policy
