// FindWaitingReason (waiting_reason.h): one reason for a job that is not running, in order.
#include "operator/policy/waiting_reason.h"

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "operator/policy/conditions.h"
#include "tests/unit/testing/job_builder.h"
#include "tests/unit/testing/pod_states.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using testing::JobBuilder;
using testing::PodWithRestarts;

PodState Pending(const std::string& name) {
  return PodWithRestarts(name, 0, PodPhase::kPending, false);
}

PodState Unschedulable(const std::string& name) {
  PodState p = Pending(name);
  p.unscheduled_reason = "Unschedulable";
  p.unscheduled_message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";
  return p;
}

PodState PullFails(const std::string& name) {
  PodState p = Pending(name);
  p.container_waiting_reason = "ImagePullBackOff";
  p.container_waiting_message = "Back-off pulling image \"registry.invalid/none:1\"";
  return p;
}

std::optional<WaitingReason> Find(const api::DistributedTraining& job, const api::JobStatus& status,
                                  const PodsByReplica& pods) {
  return FindWaitingReason(job, status, pods,
                           CountReadiness(job, pods, [](ReplicaType, int) { return false; }));
}

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(WaitingReasonTest, NothingHoldsAJobWhosePodsRunOrStart) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(2).Build();
  PodState creating = Pending("j-worker-1");
  creating.container_waiting_reason = "ContainerCreating";
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, PodWithRestarts("j-chief-0", 0)},
                        {{ReplicaType::kWorker, 0}, Pending("j-worker-0")},
                        {{ReplicaType::kWorker, 1}, creating}};
  EXPECT_EQ(Find(job, {}, pods), std::nullopt);
  EXPECT_EQ(Find(job, {}, {}), std::nullopt) << "no pod yet: being created";
}

TEST(WaitingReasonTest, TheSchedulersMessageForTheFirstPodItCannotPlace) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(2).Build();
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, PodWithRestarts("j-chief-0", 0)},
                        {{ReplicaType::kWorker, 0}, Unschedulable("j-worker-0")}};
  EXPECT_EQ(Find(job, {}, pods),
            (WaitingReason{"Unschedulable",
                           "pod j-worker-0: 0/3 nodes are available: 3 Insufficient "
                           "nvidia.com/gpu."}));
  pods[{ReplicaType::kWorker, 1}] = Unschedulable("j-worker-1");
  EXPECT_EQ(Find(job, {}, pods)->message,
            "2 pods (j-worker-0, j-worker-1); j-worker-0: 0/3 nodes are available: 3 "
            "Insufficient nvidia.com/gpu.");
  PodState gated = Pending("j-worker-1");
  gated.unscheduled_reason = "SchedulingGated";
  pods = {{{ReplicaType::kWorker, 1}, gated}};
  EXPECT_EQ(Find(job, {}, pods),
            (WaitingReason{"SchedulingGated", "pod j-worker-1: SchedulingGated"}));
  pods[{ReplicaType::kWorker, 1}].terminating = true;
  EXPECT_EQ(Find(job, {}, pods), std::nullopt) << "a pod on its way out holds nothing";
}

TEST(WaitingReasonTest, AContainerThatCannotStartSaysTheKubeletsReason) {
  api::DistributedTraining job = JobBuilder("j").Chief().Build();
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, PullFails("j-chief-0")}};
  EXPECT_EQ(Find(job, {}, pods),
            (WaitingReason{"ImagePullBackOff",
                           "pod j-chief-0: Back-off pulling image \"registry.invalid/none:1\""}));
}

TEST(WaitingReasonTest, KueueThenTheApiServerThenTheSchedulerThenTheKubelet) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(1).Build();
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, PullFails("j-chief-0")},
                        {{ReplicaType::kWorker, 0}, Unschedulable("j-worker-0")}};
  api::JobStatus status;
  EXPECT_EQ(Find(job, status, pods)->reason, "Unschedulable");
  SetCondition(&status, kReplicaFailure, true, "FailedCreate",
               "pods \"j-worker-1\" is forbidden: exceeded quota: q", kNow);
  EXPECT_EQ(Find(job, status, pods),
            (WaitingReason{"FailedCreate", "pods \"j-worker-1\" is forbidden: exceeded quota: q"}));
  SetCondition(&status, kQueued, true, "Pending",
               "couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu",
               kNow);
  EXPECT_EQ(Find(job, status, pods),
            (WaitingReason{"Queued",
                           "couldn't assign flavors to pod set worker: insufficient quota for "
                           "nvidia.com/gpu"}));
  SetCondition(&status, kQueued, false, "Admitted", "", kNow);
  SetCondition(&status, kReplicaFailure, false, "PodsCreated", "", kNow);
  EXPECT_EQ(Find(job, status, pods)->reason, "Unschedulable") << "a cause gone is not told";
}

TEST(WaitingReasonTest, AnElasticJobWaitsForItsMinimumWorkersWhenTheyAreSetAside) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(3).Build();
  job.spec.elastic_policy = api::ElasticPolicy{.min_replicas = 2, .max_replicas = 3};
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, PodWithRestarts("j-chief-0", 0)},
                        {{ReplicaType::kWorker, 0}, PodWithRestarts("j-worker-0", 0)}};
  EXPECT_EQ(Find(job, {}, pods),
            (WaitingReason{"WaitingForMinWorkers",
                           "1 of the 2 workers elasticPolicy.minReplicas asks for run"}));
  pods[{ReplicaType::kWorker, 1}] = Pending("j-worker-1");
  EXPECT_EQ(Find(job, {}, pods), std::nullopt) << "the second one is starting";
  job.spec.elastic_policy.reset();
  pods.erase({ReplicaType::kWorker, 1});
  EXPECT_EQ(Find(job, {}, pods), std::nullopt) << "without an elasticPolicy: being created";
}

}  // namespace
}  // namespace disttrain::policy
