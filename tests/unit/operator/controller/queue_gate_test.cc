// NoQueueGate and Unqueued (queue_gate.h): without a queue every job is admitted at once, its
// pods as built, and nothing is held for a job once it is gone.
#include "operator/controller/queue_gate.h"

#include "gtest/gtest.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::controller {
namespace {

TEST(NoQueueGateTest, AdmitsAtOnceAndLeavesPodsAsBuilt) {
  NoQueueGate gate;
  ReconcilePass p;
  p.job = disttrain::testing::JobBuilder("j").Workers(1).Build();
  std::unique_ptr<QueuePass> pass = gate.Enter(p);
  ASSERT_NE(pass, nullptr);
  EXPECT_TRUE(pass->Admit(p));
  EXPECT_TRUE(pass->Suspend(p));
  nlohmann::json pod = {{"spec", {{"nodeSelector", {{"a", "b"}}}}}};
  const nlohmann::json before = pod;
  EXPECT_TRUE(pass->ShapePod(api::ReplicaType::kWorker, &pod).ok());
  EXPECT_EQ(pod, before);
  pass->AfterWrite(p);
  pass->Forward(p);
  EXPECT_EQ(p.status, api::JobStatus{}) << "no condition, no count: the pass decides those";
  EXPECT_TRUE(p.events.empty());
  EXPECT_TRUE(p.errors.empty());
}

TEST(NoQueueGateTest, ServesNoJobOfAnotherControllerAndHoldsNothingForAGoneJob) {
  NoQueueGate gate;
  api::DistributedTraining job = disttrain::testing::JobBuilder("j").Workers(1).Build();
  job.spec.managed_by = "kueue.x-k8s.io/multikueue";
  EXPECT_FALSE(gate.Serves(job));
  EXPECT_EQ(gate.JobGone("ns/j"), std::nullopt);
}

}  // namespace
}  // namespace disttrain::controller
