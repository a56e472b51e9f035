#include "operator/policy/network_policy_builder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/policy/desired_objects.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using testing::JobBuilder;

json TemplateWithPorts(const char* ports) {
  return {{"spec",
           {{"containers",
             {{{"name", "tensorflow"}, {"image", "t"}, {"ports", json::parse(ports)}}}}}}};
}

TEST(NetworkPolicyBuilderTest, AdmitsOnlyTheJobsOwnPodsOnThePortsTfConfigLists) {
  api::DistributedTraining job =
      JobBuilder("dist")
          .Chief()
          .Ps(2)
          .Workers(3)
          .Template(ReplicaType::kPS,
                    TemplateWithPorts(R"([{"name":"tfjob-port","containerPort":2300},
                                                          {"name":"metrics","containerPort":9100}])"))
          .Build();
  job.metadata.uid = "u1";
  std::optional<json> policy = BuildNetworkPolicy(job, BuildOptions{});
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ((*policy)["apiVersion"], "networking.k8s.io/v1");
  EXPECT_EQ((*policy)["kind"], "NetworkPolicy");
  EXPECT_EQ((*policy)["metadata"]["name"], "dist");
  EXPECT_EQ((*policy)["metadata"]["labels"]["disttrain.io/job-name"], "dist");
  EXPECT_EQ((*policy)["metadata"]["ownerReferences"][0]["uid"], "u1");
  EXPECT_EQ((*policy)["metadata"]["ownerReferences"][0]["controller"], true);
  const json job_pods = json::parse(R"({"matchLabels": {"disttrain.io/job-name": "dist"}})");
  EXPECT_EQ((*policy)["spec"]["podSelector"], job_pods);
  EXPECT_EQ((*policy)["spec"]["policyTypes"], json::array({"Ingress"}));
  // One rule: the job's pods, on each role's TF_CONFIG port; egress untouched; no metrics rule.
  EXPECT_EQ((*policy)["spec"]["ingress"], json::parse(R"([{"from": [{"podSelector": {"matchLabels":
                                          {"disttrain.io/job-name": "dist"}}}],
                             "ports": [{"protocol": "TCP", "port": 2222},
                                       {"protocol": "TCP", "port": 2300}]}])"));
}

TEST(NetworkPolicyBuilderTest, MetricsFromOpensTheMetricsPortsToTheNamedPeers) {
  api::DistributedTraining job =
      JobBuilder("dist")
          .Ps(1)
          .Workers(2)
          .Template(ReplicaType::kWorker,
                    TemplateWithPorts(R"([{"name":"metrics","containerPort":9100}])"))
          .Build();
  const json monitoring = json::parse(R"({"namespaceSelector": {"matchLabels": {"name": "mon"}}})");
  job.spec.network_policy.metrics_from = {monitoring};
  std::optional<json> policy = BuildNetworkPolicy(job, BuildOptions{});
  ASSERT_TRUE(policy.has_value());
  ASSERT_EQ((*policy)["spec"]["ingress"].size(), 2u);
  EXPECT_EQ((*policy)["spec"]["ingress"][1]["from"], json::array({monitoring}));
  // The worker's named port, the ps's default: the trainer's --metrics-address :9095.
  EXPECT_EQ(
      (*policy)["spec"]["ingress"][1]["ports"],
      json::parse(R"([{"protocol": "TCP", "port": 9095}, {"protocol": "TCP", "port": 9100}])"));
}

TEST(NetworkPolicyBuilderTest, AnOperatorInTheClusterThatReadsProgressMayReachTheMetricsPorts) {
  api::DistributedTraining job = JobBuilder("dist").Ps(1).Workers(2).Build();
  BuildOptions options;
  options.progress_reader_namespace = "disttrain-system";
  std::optional<json> policy = BuildNetworkPolicy(job, options);
  ASSERT_TRUE(policy.has_value());
  ASSERT_EQ((*policy)["spec"]["ingress"].size(), 2u);
  EXPECT_EQ((*policy)["spec"]["ingress"][1], json::parse(R"({"from": [{"namespaceSelector":
      {"matchLabels": {"kubernetes.io/metadata.name": "disttrain-system"}}}],
      "ports": [{"protocol": "TCP", "port": 9095}]})"));
}

TEST(NetworkPolicyBuilderTest, JobPortsAllAdmitsTheJobsPodsOnEveryPort) {
  api::DistributedTraining job = JobBuilder("dist").Workers(2).Build();
  job.spec.network_policy.job_ports = api::JobPorts::kAll;
  std::optional<json> policy = BuildNetworkPolicy(job, BuildOptions{});
  ASSERT_TRUE(policy.has_value());
  ASSERT_EQ((*policy)["spec"]["ingress"].size(), 1u);
  EXPECT_FALSE((*policy)["spec"]["ingress"][0].contains("ports"));
  EXPECT_TRUE((*policy)["spec"]["ingress"][0].contains("from"));
}

TEST(NetworkPolicyBuilderTest, TheJobsSettingWinsOverTheOperatorsDefault) {
  api::DistributedTraining job = JobBuilder("dist").Workers(2).Build();
  BuildOptions off;
  off.network_policy = false;
  EXPECT_TRUE(BuildNetworkPolicy(job, BuildOptions{}).has_value());  // on by default
  EXPECT_FALSE(BuildNetworkPolicy(job, off).has_value());
  job.spec.network_policy.enabled = true;
  EXPECT_TRUE(BuildNetworkPolicy(job, off).has_value());
  job.spec.network_policy.enabled = false;
  EXPECT_FALSE(BuildNetworkPolicy(job, BuildOptions{}).has_value());
}

TEST(NetworkPolicyBuilderTest, RenderListsThePolicyWithTheJobsObjects) {
  absl::StatusOr<DesiredObjects> objects =
      BuildDesiredObjects(JobBuilder("dist").Ps(1).Workers(1).Build(), BuildOptions{});
  ASSERT_TRUE(objects.ok());
  ASSERT_TRUE(objects->network_policy.has_value());
  EXPECT_EQ((*objects->network_policy)["kind"], "NetworkPolicy");
}

}  // namespace
}  // namespace disttrain::policy
