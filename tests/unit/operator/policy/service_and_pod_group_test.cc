#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/policy/desired_objects.h"
#include "operator/policy/pod_group_builder.h"
#include "operator/policy/service_builder.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using testing::JobBuilder;

TEST(ServiceBuilderTest, IsHeadlessPublishesNotReadyAddressesAndSelectsExactlyItsPod) {
  json svc = BuildService(JobBuilder("dist").Ps(2).Workers(3).Build(), ReplicaType::kWorker, 2);
  EXPECT_EQ(svc["metadata"]["name"], "dist-worker-2");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["selector"],
            json::parse(R"({"disttrain.io/job-name":"dist","disttrain.io/replica-type":"worker",
                            "disttrain.io/replica-index":"2"})"));
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 2222);
  EXPECT_EQ(svc["spec"]["ports"][0]["name"], "tfjob-port");
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["name"], "dist");
}

TEST(ServiceBuilderTest, TheJobsServiceIsHeadlessAndSelectsEveryPodOfTheJob) {
  json svc = BuildJobService(JobBuilder("dist", "ml").Chief().Ps(2).Workers(3).Build());
  EXPECT_EQ(svc["metadata"]["name"], "dist");
  EXPECT_EQ(svc["metadata"]["namespace"], "ml");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["selector"], json::parse(R"({"disttrain.io/job-name":"dist",
                            "app.kubernetes.io/managed-by":"disttrain-operator"})"));
  EXPECT_EQ(svc["metadata"]["labels"], svc["spec"]["selector"]);
  EXPECT_EQ(
      svc["spec"]["ports"],
      json::parse(R"([{"name":"tfjob-port","port":2222,"targetPort":2222,"protocol":"TCP"}])"));
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["uid"], "uid-1234");
}

TEST(ServiceBuilderTest, TheJobsServiceNamesEachPortWhenRolesUseSeveral) {
  api::DistributedTraining job = JobBuilder("dist").Ps(1).Workers(1).Build();
  job.spec.replica_specs[ReplicaType::kPS].pod_template["spec"]["containers"][0]["ports"] = {
      {{"name", "tfjob-port"}, {"containerPort", 3000}}};
  json svc = BuildJobService(job);
  ASSERT_EQ(svc["spec"]["ports"].size(), 2u);
  EXPECT_EQ(svc["spec"]["ports"][0]["name"], "tfjob-port-2222");
  EXPECT_EQ(svc["spec"]["ports"][1]["name"], "tfjob-port-3000");
  EXPECT_EQ(svc["spec"]["ports"][1]["port"], 3000);
}

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

TEST(DesiredObjectsTest, OneServiceForTheJobAndOnePodPerReplicaInRoleOrder) {
  auto objects = BuildDesiredObjects(JobBuilder("d").Evaluator().Workers(2).Ps(1).Chief().Build(),
                                     BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_TRUE(objects->job_service.has_value());
  EXPECT_EQ((*objects->job_service)["metadata"]["name"], "d");
  std::vector<std::string> names;
  for (const auto& r : objects->replicas) {
    EXPECT_TRUE(r.service.is_null());
    // <pod>.<job>.<ns>.svc resolves: hostname is the pod's name, subdomain the Service's.
    EXPECT_EQ(r.pod["spec"]["hostname"], r.pod["metadata"]["name"]);
    EXPECT_EQ(r.pod["spec"]["subdomain"], "d");
    names.push_back(r.pod["metadata"]["name"]);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("d-chief-0", "d-ps-0", "d-worker-0", "d-worker-1",
                                            "d-evaluator-0"));
  EXPECT_FALSE(objects->pod_group.has_value());
}

TEST(DesiredObjectsTest, OneServicePerReplicaWhenTheJobAddressesPodsSo) {
  auto objects = BuildDesiredObjects(
      JobBuilder("d").Workers(2).Ps(1).Chief().ReplicaServices().Build(), BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_FALSE(objects->job_service.has_value());
  ASSERT_EQ(objects->replicas.size(), 4u);
  for (const auto& r : objects->replicas) {
    EXPECT_EQ(r.pod["metadata"]["name"], r.service["metadata"]["name"]);
    EXPECT_FALSE(r.pod["spec"].contains("hostname"));
    EXPECT_FALSE(r.pod["spec"].contains("subdomain"));
  }
}

TEST(DesiredObjectsTest, AJobOfOneTaskGetsNoService) {
  auto objects = BuildDesiredObjects(JobBuilder("solo").Chief().Build(), BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_FALSE(objects->job_service.has_value());
  ASSERT_EQ(objects->replicas.size(), 1u);
  EXPECT_TRUE(objects->replicas[0].service.is_null());
  // Still named so, should workers be added later (hostname and subdomain cannot change).
  EXPECT_EQ(objects->replicas[0].pod["spec"]["subdomain"], "solo");
}

TEST(DesiredObjectsTest, ATemplatesOwnHostnameIsReplacedWithAWarning) {
  api::DistributedTraining job = JobBuilder("d").Ps(1).Workers(1).Build();
  job.spec.replica_specs[ReplicaType::kWorker].pod_template["spec"]["hostname"] = "mine";
  auto objects = BuildDesiredObjects(job, BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_EQ(objects->replicas[1].pod["spec"]["hostname"], "d-worker-0");
  ASSERT_EQ(objects->warnings.size(), 1u);
  EXPECT_EQ(objects->warnings[0].reason, "HostnameReplaced");
  EXPECT_THAT(objects->warnings[0].message,
              ::testing::HasSubstr("replaced the template's hostname"));
}

}  // namespace
}  // namespace disttrain::policy
