// The reconciler on a fake API server: an elastic job's workers set aside instead of failing the
// job, created again at their retry time, and dropped from the list when scaled away.
#include <string>

#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kRunning;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::JobJson;

// Chief + 1 PS + 3 workers (restartPolicy `policy`), elasticPolicy 2..3, backoffLimit `limit`.
json ElasticJob(const std::string& policy, int limit) {
  json job = JobJson({{"backoffLimit", limit}});
  job["spec"]["replicaSpecs"]["Worker"] = testing::Role(3, policy);
  job["spec"]["elasticPolicy"] = {{"minReplicas", 2}, {"maxReplicas", 3}};
  return job;
}

void Start(Harness& h) {
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.State(), kRunning);
}

const api::SetAsideReplica* Entry(const api::JobStatus& status, int index) {
  auto it = status.replica_statuses.find(api::ReplicaType::kWorker);
  if (it == status.replica_statuses.end()) return nullptr;
  for (const api::SetAsideReplica& e : it->second.set_aside) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

TEST(JobReconcilerElasticTest, AFailedWorkerIsSetAsideAndCreatedAgainAtItsRetryTime) {
  Harness h(ElasticJob("Never", 3));
  Start(h);
  const std::string old_uid = h.Uid("dist-worker-2");
  h.SetPod("dist-worker-2", "Failed", 1);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning) << FindCondition(h.Status(), kFailed)->message;
  const api::JobStatus status = h.Status();
  const api::SetAsideReplica* e = Entry(status, 2);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->pod_uid, old_uid);
  EXPECT_EQ(e->times, 1);
  EXPECT_EQ(e->retry_time, h.clock.Now() + absl::Seconds(30));
  EXPECT_EQ(h.events.Count("WorkerSetAside"), 1);
  EXPECT_FALSE(h.HasPod("dist-worker-2"));
  EXPECT_EQ(h.Restarts(), 0);
  // Until its retry time, no pod comes back and the job looks again then.
  h.clock.Advance(absl::Seconds(10));
  absl::StatusOr<runtime::ReconcileResult> waiting = h.Pass();
  ASSERT_TRUE(waiting.ok());
  EXPECT_FALSE(h.HasPod("dist-worker-2"));
  ASSERT_TRUE(waiting->requeue_after.has_value());
  EXPECT_LE(*waiting->requeue_after, absl::Seconds(20));
  EXPECT_EQ(h.events.Count("WorkerSetAside"), 1);
  h.clock.Advance(absl::Seconds(20));
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.HasPod("dist-worker-2"));
  EXPECT_NE(h.Uid("dist-worker-2"), old_uid);
  EXPECT_EQ(h.events.Count("WorkerBack"), 1);
  // Failing again, it waits twice as long.
  h.SetPod("dist-worker-2", "Failed", 1);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  ASSERT_NE(Entry(h.Status(), 2), nullptr);
  EXPECT_EQ(Entry(h.Status(), 2)->times, 2);
  EXPECT_EQ(Entry(h.Status(), 2)->retry_time, h.clock.Now() + absl::Seconds(60));
}

TEST(JobReconcilerElasticTest, BelowMinReplicasTheFailureFailsTheJob) {
  Harness h(ElasticJob("Never", 3));
  Start(h);
  h.SetPod("dist-worker-2", "Failed", 1);
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-worker-1", "Failed", 1);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kFailed);
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "WorkerFailed");
}

TEST(JobReconcilerElasticTest, AWorkerRestartingInPlacePastBackoffLimitIsSetAside) {
  Harness h(ElasticJob("OnFailure", 1));
  Start(h);
  h.SetPod("dist-worker-1", "Running", 0, /*restarts=*/2, /*ready=*/false);  // 2 > limit 1
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_NE(h.State(), kFailed);
  const api::JobStatus status = h.Status();
  const api::SetAsideReplica* e = Entry(status, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->restarts, 2);
  EXPECT_FALSE(h.HasPod("dist-worker-1"));
  EXPECT_EQ(h.Restarts(), 2) << "shown, though kept out of backoffLimit";
  // The chief's first restart in place still fits backoffLimit 1.
  h.SetPod("dist-chief-0", "Running", 0, /*restarts=*/1);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_NE(h.State(), kFailed);
  EXPECT_EQ(h.Restarts(), 3);
}

TEST(JobReconcilerElasticTest, ScalingAWorkerSetAsideAwayDropsItFromTheStatus) {
  Harness h(ElasticJob("Never", 3));
  Start(h);
  h.SetPod("dist-worker-2", "Failed", 1);
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_NE(Entry(h.Status(), 2), nullptr);
  absl::StatusOr<json> job = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(job.ok());
  (*job)["spec"]["replicaSpecs"]["Worker"]["replicas"] = 2;
  (*job)["metadata"]["generation"] = 2;
  h.client.Put(kube::kDistributedTrainings, *job);
  ASSERT_TRUE(h.Pass().ok());
  absl::StatusOr<json> after = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE((*after)["status"]["replicaStatuses"]["Worker"].contains("setAside"))
      << (*after)["status"].dump();
  h.clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-worker-2"));
}

}  // namespace
}  // namespace disttrain::controller
