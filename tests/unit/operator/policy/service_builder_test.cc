// BuildService and BuildJobService (service_builder.h): the headless Services that give the
// job's pods their DNS names.
#include "operator/policy/service_builder.h"

#include "gtest/gtest.h"
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

}  // namespace
}  // namespace disttrain::policy
