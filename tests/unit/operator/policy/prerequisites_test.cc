// BuildPrerequisites (prerequisites.h): which objects a job's pods wait for, in creation order.
#include "operator/policy/prerequisites.h"

#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using testing::JobBuilder;

std::vector<PrerequisiteKind> Kinds(const std::vector<Prerequisite>& list) {
  std::vector<PrerequisiteKind> out;
  for (const Prerequisite& p : list) out.push_back(p.kind);
  return out;
}

BuildOptions NoNetworkPolicy() {
  BuildOptions o;
  o.network_policy = false;
  return o;
}

TEST(PrerequisitesTest, NoneForAPlainJobWithoutNetworkPolicy) {
  const api::DistributedTraining job = JobBuilder("j").Ps(1).Workers(2).Build();
  EXPECT_TRUE(BuildPrerequisites(job, NoNetworkPolicy(), absl::Now()).empty());
}

TEST(PrerequisitesTest, PodGroupThenNetworkPolicyThenTlsSecret) {
  api::DistributedTraining job =
      JobBuilder("j").Chief().Ps(1).Workers(2).Scheduling(api::SchedulingPolicy{}).Build();
  job.metadata.uid = "u1";
  job.spec.tls.enabled = true;
  const std::vector<Prerequisite> list = BuildPrerequisites(job, BuildOptions{}, absl::Now());
  EXPECT_EQ(Kinds(list), (std::vector<PrerequisiteKind>{PrerequisiteKind::kPodGroup,
                                                        PrerequisiteKind::kNetworkPolicy,
                                                        PrerequisiteKind::kTlsSecret}));
  ASSERT_EQ(list.size(), 3u);
  for (const Prerequisite& p : list) ASSERT_TRUE(p.object.ok()) << p.object.status();
  EXPECT_EQ(list[0].object->value("kind", ""), "PodGroup");
  EXPECT_EQ(list[0].object->at("metadata").value("name", ""), "j");
  EXPECT_EQ(list[1].object->value("kind", ""), "NetworkPolicy");
  EXPECT_EQ(list[2].object->value("kind", ""), "Secret");
}

TEST(PrerequisitesTest, EachFollowsItsOwnSwitch) {
  api::DistributedTraining job = JobBuilder("j").Ps(1).Workers(1).Build();
  EXPECT_EQ(Kinds(BuildPrerequisites(job, BuildOptions{}, absl::Now())),
            (std::vector<PrerequisiteKind>{PrerequisiteKind::kNetworkPolicy}));
  job.spec.network_policy.enabled = false;
  job.spec.tls.enabled = true;
  EXPECT_EQ(Kinds(BuildPrerequisites(job, BuildOptions{}, absl::Now())),
            (std::vector<PrerequisiteKind>{PrerequisiteKind::kTlsSecret}));
}

TEST(PrerequisitesTest, APodGroupWhoseQuantitiesDoNotParseIsLeftOut) {
  const nlohmann::json lots = {{"spec",
                                {{"containers",
                                  {{{"name", "tensorflow"},
                                    {"image", "t"},
                                    {"resources", {{"requests", {{"cpu", "lots"}}}}}}}}}}};
  const api::DistributedTraining job = JobBuilder("j")
                                           .Workers(1)
                                           .Template(api::ReplicaType::kWorker, lots)
                                           .Scheduling(api::SchedulingPolicy{})
                                           .Build();
  EXPECT_TRUE(BuildPrerequisites(job, NoNetworkPolicy(), absl::Now()).empty());
}

TEST(PrerequisitesTest, AKubernetesGangsWorkloadComesBeforeItsPodGroup) {
  BuildOptions options = NoNetworkPolicy();
  options.gang_scheduler = GangScheduler::kKubernetes;
  const api::DistributedTraining job =
      JobBuilder("j").Ps(1).Workers(2).Scheduling(api::SchedulingPolicy{}).Build();
  const std::vector<Prerequisite> list = BuildPrerequisites(job, options, absl::Now());
  EXPECT_EQ(Kinds(list), (std::vector<PrerequisiteKind>{PrerequisiteKind::kGangWorkload,
                                                        PrerequisiteKind::kPodGroup}));
}

}  // namespace
}  // namespace disttrain::policy
