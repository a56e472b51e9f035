// The reconciler on a fake API server: what a pass reports beside the lifecycle (why a job
// waits, its progress, its final evaluation, its series on /metrics).
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/waiting_reason.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kEvaluated;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::JobJson;

json JobWithEvaluator(int64_t grace_seconds) {
  json job = JobJson({{"finalEvaluationGracePeriodSeconds", grace_seconds}});
  job["spec"]["replicaSpecs"]["Evaluator"] = testing::Role(1, "OnFailure");
  return job;
}

// Answers every GET with `page`, at once; remembers the URLs.
class PageFetcher : public progress::MetricsFetcher {
 public:
  void Fetch(const std::string& url,
             std::function<void(absl::StatusOr<std::string>)> done) override {
    urls.push_back(url);
    done(page);
  }
  std::string page;
  std::vector<std::string> urls;
};

TEST(JobReconcilerTest, WritesTheProgressItsChiefReportsWhileItTrainsThenItsFinalStep) {
  Harness h;
  PageFetcher fetcher;
  progress::ProgressTracker tracker(&fetcher, &h.clock, {.interval = absl::Seconds(30)}, nullptr);
  std::vector<std::string> told;
  tracker.SetNotify([&](const std::string& key) { told.push_back(key); });
  h.UseProgress(&tracker);
  ASSERT_TRUE(h.Pass().ok());
  tracker.Tick();
  EXPECT_TRUE(fetcher.urls.empty()) << "nothing to read before the chief runs";
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.State(), kRunning);
  EXPECT_FALSE(h.Status().progress.has_value());

  fetcher.page = "disttrain_trainer_global_step 100\ndisttrain_trainer_target_steps 1000\n";
  tracker.Tick();
  ASSERT_EQ(fetcher.urls,
            std::vector<std::string>{"http://" + h.PodIp("dist-chief-0") + ":9095/metrics"});
  EXPECT_EQ(told, std::vector<std::string>{"default/dist"}) << "a pass is asked for";
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.Status().progress.has_value());
  EXPECT_EQ(h.Status().progress->global_step, 100);
  const int writes = h.Requests("patch", "distributedtrainings");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), writes) << "read back equal: no write";

  h.clock.Advance(absl::Seconds(30));
  fetcher.page = "disttrain_trainer_global_step 400\ndisttrain_trainer_target_steps 1000\n";
  tracker.Tick();
  ASSERT_TRUE(h.Pass().ok());
  api::JobProgress p = *h.Status().progress;
  EXPECT_EQ(p.Percent(), 40);
  EXPECT_DOUBLE_EQ(*p.steps_per_second, 10);
  EXPECT_EQ(*p.estimated_completion_time, h.clock.Now() + absl::Seconds(60));

  h.SetPod("dist-chief-0", "Succeeded");
  h.SetTerminationMessage("dist-chief-0", R"({"globalStep":1000,"loss":0.5})");
  h.Converge();
  ASSERT_EQ(h.State(), kSucceeded);
  p = *h.Status().progress;
  EXPECT_EQ(p.global_step, 1000);
  EXPECT_EQ(p.Percent(), 100);
  EXPECT_FALSE(p.estimated_completion_time.has_value());
  EXPECT_FALSE(p.steps_per_second.has_value());
  h.clock.Advance(absl::Minutes(5));
  tracker.Tick();
  EXPECT_EQ(fetcher.urls.size(), 2u) << "an ended job is not read";
}

TEST(JobReconcilerTest, SaysWhyItWaitsUntilTheCauseIsGone) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Running");
  h.SetUnschedulable("dist-worker-1", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  ASSERT_TRUE(h.Pass().ok());
  api::JobStatus status = h.Status();
  const api::Condition* waiting = policy::FindCondition(status, policy::kWaiting);
  ASSERT_NE(waiting, nullptr);
  EXPECT_TRUE(waiting->status);
  EXPECT_EQ(waiting->reason, "Unschedulable");
  EXPECT_EQ(waiting->message,
            "pod dist-worker-1: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(h.State(), kCreated);

  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  status = h.Status();
  waiting = policy::FindCondition(status, policy::kWaiting);
  ASSERT_NE(waiting, nullptr);
  EXPECT_FALSE(waiting->status);
  EXPECT_EQ(waiting->reason, "NothingHoldsIt");
}

TEST(JobReconcilerTest, KeepsTheEvaluatorUntilItEvaluatedTheFinalCheckpoint) {
  Harness h(JobWithEvaluator(60));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  h.SetTerminationMessage("dist-chief-0", R"({"globalStep":400,"loss":0.5})");
  absl::StatusOr<runtime::ReconcileResult> done = h.Pass();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(h.HasPod("dist-ps-0")) << "parameter servers go at once";
  EXPECT_TRUE(h.HasPod("dist-evaluator-0")) << "it evaluates the final checkpoint";
  EXPECT_EQ(done->requeue_after, absl::Seconds(60));
  EXPECT_EQ(h.Status().replica_statuses[api::ReplicaType::kEvaluator].active, 1);
  h.clock.Advance(absl::Seconds(5));
  h.SetPod("dist-evaluator-0", "Succeeded");
  h.SetTerminationMessage("dist-evaluator-0", R"({"globalStep":400,"accuracy":0.85,"loss":0.4})");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().result->evaluated_step, 400);
  EXPECT_EQ(h.Status().result->accuracy, 0.85);
  const api::JobStatus status = h.Status();
  const api::Condition* evaluated = FindCondition(status, kEvaluated);
  ASSERT_NE(evaluated, nullptr);
  EXPECT_TRUE(evaluated->status);
  EXPECT_EQ(evaluated->reason, "FinalCheckpointEvaluated");
  EXPECT_EQ(h.events.Count("FinalCheckpointEvaluated"), 1);
  EXPECT_TRUE(h.HasPod("dist-evaluator-0")) << "finished pods stay for their logs";
}

TEST(JobReconcilerTest, DeletesAnEvaluatorThatOutlivesItsGraceAndSaysSo) {
  Harness h(JobWithEvaluator(30));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.HasPod("dist-evaluator-0"));
  h.clock.Advance(absl::Seconds(29));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-evaluator-0"));
  EXPECT_EQ(FindCondition(h.Status(), kEvaluated), nullptr);
  h.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-evaluator-0"));
  const api::JobStatus status = h.Status();
  const api::Condition* evaluated = FindCondition(status, kEvaluated);
  ASSERT_NE(evaluated, nullptr);
  EXPECT_FALSE(evaluated->status);
  EXPECT_EQ(evaluated->reason, "EvaluationTimedOut");
  EXPECT_EQ(h.State(), kSucceeded) << "the training itself succeeded";
}

TEST(JobReconcilerTest, ExportsAJobsRestartsAndItsPodsLeftAfterItEndsUntilItGoes) {
  Harness h;
  MetricsRegistry registry;
  JobMetrics metrics(&registry);
  h.UseJobMetrics(&metrics);
  MetricFamily* restarts = registry.Counter(kJobRestarts, "");
  MetricFamily* after_end = registry.Gauge(kJobPodsAfterEnd, "");
  const LabelValues worker = {"default", "dist", "DistributedTraining", "worker"};
  const LabelValues ps = {"default", "dist", "DistributedTraining", "ps"};
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-1", "Failed", 137);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_DOUBLE_EQ(restarts->Value(worker), 1);
  // The chief ends; the parameter server's delete fails, so it still holds its node.
  h.client.FailNext("delete", "pods", absl::UnavailableError("etcd"), 8);
  h.SetPod("dist-chief-0", "Succeeded");
  (void)h.Pass();
  ASSERT_EQ(h.State(), kSucceeded);
  EXPECT_DOUBLE_EQ(after_end->Value(ps), 1) << registry.Render();
  h.Converge();
  ASSERT_FALSE(h.HasPod("dist-ps-0"));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(registry.Render().find("disttrain_job_pods_after_end{"), std::string::npos)
      << registry.Render();
  ASSERT_TRUE(h.client.Delete(kube::kDistributedTrainings, "default", "dist", {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(registry.Render().find("job_name=\"dist\""), std::string::npos) << registry.Render();
}

}  // namespace
}  // namespace disttrain::controller
