#include "operator/progress/scrape_target.h"

#include "gtest/gtest.h"

namespace disttrain::progress {
namespace {

using api::ReplicaType;

api::ReplicaSpec Spec(int port = 0) {
  api::ReplicaSpec s;
  s.replicas = 1;
  nlohmann::json container = {{"name", "tensorflow"}, {"image", "trainer:1"}};
  if (port > 0) container["ports"] = {{{"name", "metrics"}, {"containerPort", port}}};
  s.pod_template = {{"spec", {{"containers", {container}}}}};
  return s;
}

policy::PodState Pod(ReplicaType type, std::string ip,
                     policy::PodPhase phase = policy::PodPhase::kRunning) {
  policy::PodState s;
  s.name = "p";
  s.uid = "uid-1";
  s.type = type;
  s.index = 0;
  s.phase = phase;
  s.ip = std::move(ip);
  return s;
}

TEST(ScrapeTargetTest, TheChiefsMetricsPortOrTheTrainersDefault) {
  api::DistributedTraining job;
  job.spec.replica_specs[ReplicaType::kChief] = Spec(9200);
  job.spec.replica_specs[ReplicaType::kWorker] = Spec();
  policy::PodsByReplica pods = {{{ReplicaType::kChief, 0}, Pod(ReplicaType::kChief, "10.1.2.3")},
                                {{ReplicaType::kWorker, 0}, Pod(ReplicaType::kWorker, "10.1.2.4")}};
  EXPECT_EQ(ChooseScrapeTarget(job, pods), (ScrapeTarget{"uid-1", "http://10.1.2.3:9200/metrics"}));
  job.spec.replica_specs.erase(ReplicaType::kChief);
  EXPECT_EQ(ChooseScrapeTarget(job, pods)->url, "http://10.1.2.4:9095/metrics")
      << "worker 0 stops the training without a chief";
}

TEST(ScrapeTargetTest, IPv6InBrackets) {
  api::DistributedTraining job;
  job.spec.replica_specs[ReplicaType::kWorker] = Spec();
  policy::PodsByReplica pods = {{{ReplicaType::kWorker, 0}, Pod(ReplicaType::kWorker, "fd00::5")}};
  EXPECT_EQ(ChooseScrapeTarget(job, pods)->url, "http://[fd00::5]:9095/metrics");
}

TEST(ScrapeTargetTest, NothingToReadBeforeThePodRunsWithAnIp) {
  api::DistributedTraining job;
  job.spec.replica_specs[ReplicaType::kWorker] = Spec();
  EXPECT_FALSE(ChooseScrapeTarget(job, {}).has_value());
  EXPECT_FALSE(ChooseScrapeTarget(job, {{{ReplicaType::kWorker, 0}, Pod(ReplicaType::kWorker, "")}})
                   .has_value());
  EXPECT_FALSE(
      ChooseScrapeTarget(job, {{{ReplicaType::kWorker, 0},
                                Pod(ReplicaType::kWorker, "10.0.0.1", policy::PodPhase::kPending)}})
          .has_value());
  policy::PodState terminating = Pod(ReplicaType::kWorker, "10.0.0.1");
  terminating.terminating = true;
  EXPECT_FALSE(ChooseScrapeTarget(job, {{{ReplicaType::kWorker, 0}, terminating}}).has_value());
}

}  // namespace
}  // namespace disttrain::progress
