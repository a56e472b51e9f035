// GrowAfterOomKill and ApplyResizedMemory (oom_policy.h): how much memory an OOM-killed replica
// comes back with, and how its pods get it.
#include "operator/policy/oom_policy.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using testing::JobBuilder;

json Template(const json& resources) {
  return {{"spec",
           {{"containers", json::array({{{"name", "sidecar"}},
                                        {{"name", "tensorflow"}, {"resources", resources}}})}}}};
}

api::DistributedTraining Job(const json& resources, double factor = 2,
                             const std::string& max = "1Gi", int64_t max_milli = 1LL << 30) {
  api::DistributedTraining job =
      JobBuilder("dist").Workers(2).Template(ReplicaType::kWorker, Template(resources)).Build();
  job.spec.run_policy.oom_policy = api::OomPolicy{
      .memory_factor = factor, .max_memory = max, .max_memory_milli = max_milli * 1000};
  return job;
}

PodState OomKilled(const std::string& uid) {
  PodState p;
  p.name = "dist-worker-1";
  p.uid = uid;
  p.phase = PodPhase::kFailed;
  p.exit_code = 137;
  p.reason = "OOMKilled";
  return p;
}

TEST(OomPolicyTest, AnOomKillGrowsTheReplicaByTheFactorUpToTheCeiling) {
  api::DistributedTraining job = Job({{"limits", {{"memory", "300Mi"}}}});
  api::JobStatus status;
  std::optional<MemoryGrowth> g =
      GrowAfterOomKill(job, status, ReplicaType::kWorker, 1, OomKilled("a"));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->entry,
            (api::ResizedReplica{.index = 1, .memory = "600Mi", .oom_kills = 1, .pod_uid = "a"}));
  EXPECT_EQ(g->message,
            "pod dist-worker-1 was OOMKilled with 300Mi of memory; recreating it with 600Mi "
            "(runPolicy.oomPolicy: memoryFactor 2, maxMemory 1Gi)");

  status.replica_statuses[ReplicaType::kWorker].resized.push_back(g->entry);
  g = GrowAfterOomKill(job, status, ReplicaType::kWorker, 1, OomKilled("b"));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->entry.memory, "1Gi") << "1200Mi capped at maxMemory";
  EXPECT_EQ(g->entry.oom_kills, 2);
  status.replica_statuses[ReplicaType::kWorker].resized[0] = g->entry;
  EXPECT_FALSE(GrowAfterOomKill(job, status, ReplicaType::kWorker, 1, OomKilled("c")))
      << "at the ceiling: a failure as any other";
  EXPECT_EQ(*ReplicaMemory(job, status, ReplicaType::kWorker, 0), (300LL << 20) * 1000)
      << "worker 0 keeps the template's";
}

TEST(OomPolicyTest, RoundsUpToAWholeMebibyte) {
  api::DistributedTraining job = Job({{"requests", {{"memory", "100M"}}}}, 1.5);
  std::optional<MemoryGrowth> g =
      GrowAfterOomKill(job, {}, ReplicaType::kWorker, 1, OomKilled("a"));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->entry.memory, "144Mi") << "150,000,000 bytes is 143.05Mi";
}

TEST(OomPolicyTest, NothingGrowsWithoutThePolicyAMemorySizeOrAnOomKill) {
  api::DistributedTraining job = Job({{"limits", {{"cpu", "1"}}}});
  EXPECT_FALSE(GrowAfterOomKill(job, {}, ReplicaType::kWorker, 1, OomKilled("a")))
      << "no memory in the template";
  job = Job({{"limits", {{"memory", "300Mi"}}}});
  PodState crashed = OomKilled("a");
  crashed.reason = "Error";
  EXPECT_FALSE(GrowAfterOomKill(job, {}, ReplicaType::kWorker, 1, crashed));
  job.spec.run_policy.oom_policy.reset();
  EXPECT_FALSE(GrowAfterOomKill(job, {}, ReplicaType::kWorker, 1, OomKilled("a")));
}

TEST(OomPolicyTest, APodOfAResizedReplicaGetsItsMemoryAndItsRequestInProportion) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].resized.push_back(
      {.index = 1, .memory = "600Mi", .oom_kills = 1, .pod_uid = "a"});
  json pod = Template(
      {{"limits", {{"memory", "300Mi"}, {"cpu", "1"}}}, {"requests", {{"memory", "150Mi"}}}});
  json other = pod;
  ASSERT_TRUE(ApplyResizedMemory(status, ReplicaType::kWorker, 1, &pod).ok());
  const json& resources = pod["spec"]["containers"][1]["resources"];
  EXPECT_EQ(resources["limits"], json({{"memory", "600Mi"}, {"cpu", "1"}}));
  EXPECT_EQ(resources["requests"], json({{"memory", "300Mi"}}));
  EXPECT_EQ(pod["spec"]["containers"][0], json({{"name", "sidecar"}})) << "the main one only";
  ASSERT_TRUE(ApplyResizedMemory(status, ReplicaType::kWorker, 0, &other).ok());
  EXPECT_EQ(other["spec"]["containers"][1]["resources"]["limits"]["memory"], "300Mi");

  status.replica_statuses[ReplicaType::kWorker].resized[0].memory = "lots";
  EXPECT_FALSE(ApplyResizedMemory(status, ReplicaType::kWorker, 1, &other).ok());
}

}  // namespace
}  // namespace disttrain::policy
