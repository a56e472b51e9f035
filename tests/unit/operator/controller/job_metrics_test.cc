// Tests operator/controller/job_metrics.cc: the series the alerts of
// deploy/prometheus/disttrain-alerts.yaml read.
#include "operator/controller/job_metrics.h"

#include <string>

#include "gtest/gtest.h"
#include "operator/policy/conditions.h"
#include "operator/policy/waiting_reason.h"

namespace disttrain::controller {
namespace {

using api::ReplicaType;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

api::DistributedTraining Job() {
  api::DistributedTraining job;
  job.metadata.namespace_name = "team";
  job.metadata.name = "ctr";
  job.spec.replica_specs[ReplicaType::kChief].replicas = 1;
  job.spec.replica_specs[ReplicaType::kPS].replicas = 2;
  job.spec.replica_specs[ReplicaType::kWorker].replicas = 2;
  return job;
}

policy::PodState Pod(ReplicaType type, int index, policy::PodPhase phase) {
  policy::PodState pod;
  pod.type = type;
  pod.index = index;
  pod.phase = phase;
  pod.name = "ctr-" + std::to_string(index);
  return pod;
}

class JobMetricsTest : public ::testing::Test {
 protected:
  std::string Render() { return registry_.Render("disttrain_job_"); }
  MetricsRegistry registry_;
  JobMetrics metrics_{&registry_};
};

TEST_F(JobMetricsTest, AWaitingJobSaysSinceWhenAndWhyAndTheSeriesGoesWithTheCause) {
  api::JobStatus status;
  policy::SetCondition(&status, policy::kWaiting, true, "Unschedulable", "0/3 nodes",
                       kNow - absl::Seconds(90));
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, {}, kNow);
  MetricFamily* f = registry_.Gauge(kJobWaitingSince, "");
  EXPECT_DOUBLE_EQ(f->Value({"team", "ctr", "DistributedTraining", "Unschedulable"}),
                   1'800'000'000 - 90);
  // Still waiting, for another reason: one series, the start of the wait kept.
  policy::SetCondition(&status, policy::kWaiting, true, "ImagePullBackOff", "pull", kNow);
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, {}, kNow);
  EXPECT_NE(Render().find("reason=\"ImagePullBackOff\"} 1799999910"), std::string::npos)
      << Render();
  EXPECT_EQ(Render().find("Unschedulable"), std::string::npos) << Render();
  policy::SetCondition(&status, policy::kWaiting, false, "NothingHoldsIt", "", kNow);
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, {}, kNow);
  EXPECT_EQ(Render().find("disttrain_job_waiting_since_timestamp_seconds{"), std::string::npos)
      << Render();
}

TEST_F(JobMetricsTest, RestartsAreCountedForEveryRoleOfTheSpecZeroIncluded) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].restarts = 3;
  metrics_.Record("TFJob", "team", "ctr", Job(), status, {}, kNow);
  MetricFamily* f = registry_.Counter(kJobRestarts, "");
  EXPECT_DOUBLE_EQ(f->Value({"team", "ctr", "TFJob", "worker"}), 3);
  EXPECT_NE(Render().find("disttrain_job_restarts_total{job_namespace=\"team\",job_name=\"ctr\","
                          "kind=\"TFJob\",role=\"ps\"} 0"),
            std::string::npos)
      << Render();
  EXPECT_NE(Render().find("role=\"chief\"} 0"), std::string::npos) << Render();
}

TEST_F(JobMetricsTest, AnEndedJobsPodsThatStillHoldResourcesAreCountedByRole) {
  api::JobStatus status;
  policy::PodsByReplica pods;
  pods[{ReplicaType::kChief, 0}] = Pod(ReplicaType::kChief, 0, policy::PodPhase::kSucceeded);
  pods[{ReplicaType::kPS, 0}] = Pod(ReplicaType::kPS, 0, policy::PodPhase::kRunning);
  pods[{ReplicaType::kPS, 1}] = Pod(ReplicaType::kPS, 1, policy::PodPhase::kRunning);
  pods[{ReplicaType::kWorker, 0}] = Pod(ReplicaType::kWorker, 0, policy::PodPhase::kPending);
  pods[{ReplicaType::kWorker, 1}] = Pod(ReplicaType::kWorker, 1, policy::PodPhase::kFailed);
  // Running: nothing counts.
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, pods, kNow);
  EXPECT_EQ(Render().find("disttrain_job_pods_after_end{"), std::string::npos) << Render();
  policy::SetCondition(&status, policy::kSucceeded, true, "JobSucceeded", "", kNow);
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, pods, kNow);
  MetricFamily* f = registry_.Gauge(kJobPodsAfterEnd, "");
  EXPECT_DOUBLE_EQ(f->Value({"team", "ctr", "DistributedTraining", "ps"}), 2);
  EXPECT_DOUBLE_EQ(f->Value({"team", "ctr", "DistributedTraining", "worker"}), 1);
  EXPECT_EQ(Render().find("role=\"chief\"} 1"), std::string::npos) << Render();
  // Kept on purpose: cleanPodPolicy None counts none.
  api::DistributedTraining kept = Job();
  kept.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  metrics_.Record("DistributedTraining", "team", "ctr", kept, status, pods, kNow);
  EXPECT_EQ(Render().find("disttrain_job_pods_after_end{"), std::string::npos) << Render();
  // Removed: nothing left to count.
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, {}, kNow);
  EXPECT_EQ(Render().find("disttrain_job_pods_after_end{"), std::string::npos) << Render();
}

TEST_F(JobMetricsTest, AJobThatGoesTakesItsSeriesButNoOtherJobs) {
  api::JobStatus status;
  policy::SetCondition(&status, policy::kWaiting, true, "Queued", "q", kNow);
  metrics_.Record("DistributedTraining", "team", "ctr", Job(), status, {}, kNow);
  metrics_.Record("DistributedTraining", "team", "ctr2", Job(), status, {}, kNow);
  metrics_.Record("TFJob", "team", "ctr", Job(), status, {}, kNow);
  metrics_.Forget("DistributedTraining", "team", "ctr");
  const std::string text = Render();
  EXPECT_EQ(text.find("job_name=\"ctr\",kind=\"DistributedTraining\""), std::string::npos) << text;
  EXPECT_NE(text.find("job_name=\"ctr2\",kind=\"DistributedTraining\",reason=\"Queued\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("job_name=\"ctr\",kind=\"TFJob\",role=\"ps\""), std::string::npos) << text;
}

}  // namespace
}  // namespace disttrain::controller
