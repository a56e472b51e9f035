// BuildPodGroup (pod_group_builder.h): the gang scheduler's PodGroup, its size and resources.
#include "operator/policy/pod_group_builder.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using testing::JobBuilder;

json ResourcesTemplate(const char* requests, const char* limits) {
  return {{"spec",
           {{"containers",
             {{{"name", "tensorflow"},
               {"image", "t"},
               {"resources",
                {{"requests", json::parse(requests)}, {"limits", json::parse(limits)}}}}}}}}};
}

TEST(PodGroupBuilderTest, NoSchedulingPolicyMeansNoPodGroup) {
  auto group = BuildPodGroup(JobBuilder("d").Workers(2).Build(), BuildOptions{});
  ASSERT_TRUE(group.ok());
  EXPECT_FALSE(group->has_value());
}

TEST(PodGroupBuilderTest, VolcanoGroupSumsRequestsIncludingGpus) {
  api::SchedulingPolicy policy;
  policy.queue = "research";
  policy.priority_class = "high";
  auto job =
      JobBuilder("d")
          .Chief()
          .Ps(2)
          .Workers(4)
          .Template(ReplicaType::kChief,
                    ResourcesTemplate(R"({"cpu":"500m","memory":"1Gi"})", "{}"))
          .Template(ReplicaType::kPS, ResourcesTemplate(R"({"cpu":"1","memory":"2Gi"})", "{}"))
          .Template(ReplicaType::kWorker,
                    ResourcesTemplate(R"({"cpu":"2"})", R"({"nvidia.com/gpu":1,"cpu":"4"})"))
          .Scheduling(policy)
          .Build();
  auto group = BuildPodGroup(job, BuildOptions{});
  ASSERT_TRUE(group.ok()) << group.status();
  ASSERT_TRUE(group->has_value());
  const json& g = **group;
  EXPECT_EQ(g["apiVersion"], "scheduling.volcano.sh/v1beta1");
  EXPECT_EQ(g["kind"], "PodGroup");
  EXPECT_EQ(g["metadata"]["name"], "d");
  EXPECT_EQ(g["spec"]["minMember"], 7);
  EXPECT_EQ(g["spec"]["queue"], "research");
  EXPECT_EQ(g["spec"]["priorityClassName"], "high");
  // cpu: 0.5 + 2*1 + 4*2 (requests win over limits) = 10.5; memory: 1Gi + 2*2Gi; gpu: 4*1.
  EXPECT_EQ(g["spec"]["minResources"],
            json::parse(R"({"cpu":"10500m","memory":"5Gi","nvidia.com/gpu":"4"})"));
}

TEST(PodGroupBuilderTest, AnElasticJobsGangNeedsOnlyMinReplicasOfItsWorkers) {
  auto job = JobBuilder("d")
                 .Ps(1)
                 .Workers(4)
                 .Evaluator()
                 .Template(ReplicaType::kPS, ResourcesTemplate(R"({"cpu":"1"})", "{}"))
                 .Template(ReplicaType::kWorker, ResourcesTemplate(R"({"cpu":"3"})", "{}"))
                 .Template(ReplicaType::kEvaluator, ResourcesTemplate(R"({"cpu":"5"})", "{}"))
                 .Scheduling(api::SchedulingPolicy{})
                 .Build();
  job.spec.elastic_policy = api::ElasticPolicy{2, 6};
  auto group = BuildPodGroup(job, BuildOptions{});
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ((**group)["spec"]["minMember"], 4) << "ps, 2 of the 4 workers, the evaluator";
  EXPECT_EQ((**group)["spec"]["minResources"]["cpu"], "12") << "1 + 2 x 3 + 5";
}

TEST(PodGroupBuilderTest, MinAvailableCountsReplicasInRoleOrder) {
  api::SchedulingPolicy policy;
  policy.min_available = 3;
  policy.schedule_timeout_seconds = 60;
  auto job = JobBuilder("d")
                 .Ps(2)
                 .Workers(4)
                 .Template(ReplicaType::kPS, ResourcesTemplate(R"({"cpu":"1"})", "{}"))
                 .Template(ReplicaType::kWorker, ResourcesTemplate(R"({"cpu":"3"})", "{}"))
                 .Scheduling(policy)
                 .Build();
  BuildOptions options;
  options.gang_scheduler = GangScheduler::kSchedulerPlugins;
  auto group = BuildPodGroup(job, options);
  ASSERT_TRUE(group.ok()) << group.status();
  const json& g = **group;
  EXPECT_EQ(g["apiVersion"], "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(g["spec"]["minMember"], 3);
  EXPECT_EQ(g["spec"]["scheduleTimeoutSeconds"], 60);
  EXPECT_EQ(g["spec"]["minResources"]["cpu"], "5");  // 2 PS * 1 + 1 worker * 3
}

TEST(PodGroupBuilderTest, BadQuantityNamesTheField) {
  auto job = JobBuilder("d")
                 .Workers(1)
                 .Template(ReplicaType::kWorker, ResourcesTemplate(R"({"cpu":"lots"})", "{}"))
                 .Scheduling({})
                 .Build();
  auto group = BuildPodGroup(job, BuildOptions{});
  ASSERT_FALSE(group.ok());
  EXPECT_THAT(
      std::string(group.status().message()),
      ::testing::HasSubstr(
          "spec.replicaSpecs.Worker.template: container \"tensorflow\" resources.requests.cpu"));
}

TEST(PodGroupBuilderTest, KubernetesGangsAreAWorkloadAndItsPodGroup) {
  BuildOptions options;
  options.gang_scheduler = GangScheduler::kKubernetes;
  api::SchedulingPolicy policy;
  policy.min_available = 3;
  api::DistributedTraining job = JobBuilder("d").Ps(1).Workers(4).Scheduling(policy).Build();
  job.metadata.namespace_name = "team";
  auto group = BuildPodGroup(job, options);
  ASSERT_TRUE(group.ok() && group->has_value());
  EXPECT_EQ((**group)["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ((**group)["spec"], json::parse(R"({"schedulingPolicy": {"gang": {"minCount": 3}},
                            "podGroupTemplateRef": {"workload": {"workloadName": "d",
                                                                 "podGroupTemplateName": "gang"}}})"));
  std::optional<json> workload = BuildGangWorkload(job, options);
  ASSERT_TRUE(workload.has_value());
  EXPECT_EQ((*workload)["kind"], "Workload");
  EXPECT_EQ((*workload)["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ((*workload)["metadata"]["name"], "d");
  EXPECT_EQ((*workload)["metadata"]["namespace"], "team");
  EXPECT_EQ((*workload)["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining");
  EXPECT_EQ((*workload)["spec"]["controllerRef"],
            json::parse(R"({"apiGroup": "disttrain.io", "kind": "DistributedTraining",
                            "name": "d"})"));
  EXPECT_EQ((*workload)["spec"]["podGroupTemplates"],
            json::parse(R"([{"name": "gang", "schedulingPolicy": {"gang": {"minCount": 3}}}])"));
  EXPECT_FALSE(BuildGangWorkload(job, BuildOptions{}).has_value()) << "Volcano's has none";
  EXPECT_FALSE(BuildGangWorkload(JobBuilder("d").Workers(2).Build(), options).has_value());
}

TEST(PodGroupBuilderTest, AnElasticKubernetesGangCountsMinReplicasWorkers) {
  BuildOptions options;
  options.gang_scheduler = GangScheduler::kKubernetes;
  api::DistributedTraining job =
      JobBuilder("d").Chief().Ps(2).Workers(6).Scheduling(api::SchedulingPolicy{}).Build();
  job.spec.elastic_policy = api::ElasticPolicy{2, 8};
  auto group = BuildPodGroup(job, options);
  ASSERT_TRUE(group.ok() && group->has_value());
  EXPECT_EQ((**group)["spec"]["schedulingPolicy"]["gang"]["minCount"], 5);  // 1 + 2 + 2
}

}  // namespace
}  // namespace disttrain::policy
