#include "operator/policy/tf_config_builder.h"

#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/api/names.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using ::testing::HasSubstr;
using testing::JobBuilder;

struct Case {
  std::string name;
  std::function<api::DistributedTraining()> job;
  ReplicaType type;
  int index;
  std::string cluster_domain;
  std::string want;  // "" means: no TF_CONFIG at all
};

class TfConfigBuilderTest : public ::testing::TestWithParam<Case> {};

TEST_P(TfConfigBuilderTest, WritesTheEcosystemsExactBytes) {
  BuildOptions options;
  options.cluster_domain = GetParam().cluster_domain;
  // The training-operator's hosts: one Service per replica.
  api::DistributedTraining job = GetParam().job();
  job.addressing = api::Addressing::kReplicaServices;
  std::optional<TfConfig> config = BuildTfConfig(job, GetParam().type, GetParam().index, options);
  if (GetParam().want.empty()) {
    EXPECT_FALSE(config.has_value());
    return;
  }
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(SerializeTfConfig(*config), GetParam().want);
}

TEST(TfConfigBuilderJobServiceTest, HostsResolveThroughTheJobsService) {
  BuildOptions options;
  api::DistributedTraining job = JobBuilder("mnist", "ml").Chief().Ps(1).Workers(2).Build();
  std::optional<TfConfig> config = BuildTfConfig(job, ReplicaType::kWorker, 1, options);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(
      SerializeTfConfig(*config),
      R"({"cluster":{"chief":["mnist-chief-0.mnist.ml.svc:2222"],"ps":["mnist-ps-0.mnist.ml.svc:2222"],"worker":["mnist-worker-0.mnist.ml.svc:2222","mnist-worker-1.mnist.ml.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})");
  options.cluster_domain = "corp.example";
  config = BuildTfConfig(job, ReplicaType::kPS, 0, options);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->cluster.at("ps").at(0), "mnist-ps-0.mnist.ml.svc.corp.example:2222");
}

nlohmann::json TemplateWithPort(int port) {
  return {{"spec",
           {{"containers",
             {{{"name", "sidecar"},
               {"image", "s"},
               {"ports", {{{"name", "tfjob-port"}, {"containerPort", 9}}}}},
              {{"name", "tensorflow"},
               {"image", "t"},
               {"ports",
                {{{"name", "metrics"}, {"containerPort", 8080}},
                 {{"name", "tfjob-port"}, {"containerPort", port}}}}}}}}}};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TfConfigBuilderTest,
    ::testing::Values(
        Case{
            "ReferenceJobWorker1",
            [] { return JobBuilder("dist").Chief().Ps(2).Workers(3).Evaluator().Build(); },
            ReplicaType::kWorker, 1, "",
            R"({"cluster":{"chief":["dist-chief-0.default.svc:2222"],"evaluator":["dist-evaluator-0.default.svc:2222"],"ps":["dist-ps-0.default.svc:2222","dist-ps-1.default.svc:2222"],"worker":["dist-worker-0.default.svc:2222","dist-worker-1.default.svc:2222","dist-worker-2.default.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})"},
        Case{
            "NoChiefPs0", [] { return JobBuilder("mnist", "ml").Ps(1).Workers(2).Build(); },
            ReplicaType::kPS, 0, "",
            R"({"cluster":{"ps":["mnist-ps-0.ml.svc:2222"],"worker":["mnist-worker-0.ml.svc:2222","mnist-worker-1.ml.svc:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"})"},
        Case{
            "EvaluatorKeptOutOfCluster",
            [] {
              return JobBuilder("d").Chief().Ps(1).Evaluator().EvaluatorInCluster(false).Build();
            },
            ReplicaType::kEvaluator, 0, "",
            R"({"cluster":{"chief":["d-chief-0.default.svc:2222"],"ps":["d-ps-0.default.svc:2222"]},"task":{"type":"evaluator","index":0},"environment":"cloud"})"},
        Case{
            "ChiefSeesNoEvaluatorWhenKeptOut",
            [] {
              return JobBuilder("d").Chief().Ps(1).Evaluator().EvaluatorInCluster(false).Build();
            },
            ReplicaType::kChief, 0, "",
            R"({"cluster":{"chief":["d-chief-0.default.svc:2222"],"ps":["d-ps-0.default.svc:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"})"},
        Case{
            "ClusterDomain", [] { return JobBuilder("d").Ps(1).Workers(1).Build(); },
            ReplicaType::kWorker, 0, "cluster.local",
            R"({"cluster":{"ps":["d-ps-0.default.svc.cluster.local:2222"],"worker":["d-worker-0.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"})"},
        Case{
            "CustomPortOfTheMainContainerOnly",
            [] {
              return JobBuilder("d")
                  .Ps(1)
                  .Workers(1)
                  .Template(ReplicaType::kPS, TemplateWithPort(5000))
                  .Build();
            },
            ReplicaType::kWorker, 0, "",
            R"({"cluster":{"ps":["d-ps-0.default.svc:5000"],"worker":["d-worker-0.default.svc:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"})"},
        // TensorFlow counts an empty list as a present role ("chief":[] leaves no chief at all).
        Case{
            "ZeroReplicaRoleIsLeftOut", [] { return JobBuilder("d").Ps(0).Workers(2).Build(); },
            ReplicaType::kWorker, 1, "",
            R"({"cluster":{"worker":["d-worker-0.default.svc:2222","d-worker-1.default.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})"},
        Case{
            "ZeroReplicaChiefIsLeftOut",
            [] { return JobBuilder("d").Chief(0).Ps(1).Workers(2).Build(); }, ReplicaType::kWorker,
            0, "",
            R"({"cluster":{"ps":["d-ps-0.default.svc:2222"],"worker":["d-worker-0.default.svc:2222","d-worker-1.default.svc:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"})"},
        Case{"OneReplicaJobGetsNone", [] { return JobBuilder("solo").Workers(1).Build(); },
             ReplicaType::kWorker, 0, "", ""},
        Case{"OneReplicaJobWithEmptyRolesGetsNone",
             [] { return JobBuilder("solo").Chief().Ps(0).Build(); }, ReplicaType::kChief, 0, "",
             ""}),
    [](const auto& info) { return info.param.name; });

TEST(MainContainerTest, PrefersTensorflowThenTrainerThenTheFirst) {
  auto tmpl = [](std::vector<std::string> names) {
    nlohmann::json cs = nlohmann::json::array();
    for (const auto& n : names) cs.push_back({{"name", n}});
    return nlohmann::json{{"spec", {{"containers", cs}}}};
  };
  EXPECT_EQ(MainContainerIndex(tmpl({"a", "tensorflow"})), 1);
  EXPECT_EQ(MainContainerIndex(tmpl({"a", "b", "trainer"})), 2);
  EXPECT_EQ(MainContainerIndex(tmpl({"a", "b"})), 0);
  EXPECT_EQ(MainContainerIndex(tmpl({})), -1);
  EXPECT_EQ(MainContainerIndex(nlohmann::json::object()), -1);
}

TEST(SparseTfConfigTest, GivesWhatTheTrainingOperatorWritesForDynamicWorkers) {
  api::DistributedTraining job = JobBuilder("d").Chief().Ps(2).Workers(2).ReplicaServices().Build();
  job.spec.tf_config.sparse_workers = true;
  auto text = [&](ReplicaType t, int i) { return *TfConfigText(job, t, i, BuildOptions{}); };
  EXPECT_EQ(
      text(ReplicaType::kWorker, 1),
      R"({"cluster":{"worker":{"1":"d-worker-1.default.svc:2222"},"ps":["d-ps-0.default.svc:2222","d-ps-1.default.svc:2222"]},"task":{"type":"worker","index":1}})");
  // The chief trains as a worker does: the ps tasks and itself.
  EXPECT_EQ(
      text(ReplicaType::kChief, 0),
      R"({"cluster":{"chief":["d-chief-0.default.svc:2222"],"ps":["d-ps-0.default.svc:2222","d-ps-1.default.svc:2222"]},"task":{"type":"chief","index":0}})");
  // A ps must know every training replica that may send it gradients (TensorFlow's receiver
  // asks the sender): every ps, the chief, the workers.
  EXPECT_EQ(
      text(ReplicaType::kPS, 1),
      R"({"cluster":{"chief":["d-chief-0.default.svc:2222"],"ps":["d-ps-0.default.svc:2222","d-ps-1.default.svc:2222"],"worker":["d-worker-0.default.svc:2222","d-worker-1.default.svc:2222"]},"task":{"type":"ps","index":1},"environment":"cloud"})");
  // ... up to elasticPolicy.maxReplicas, so a worker scaled in later can train.
  job.spec.elastic_policy = api::ElasticPolicy{1, 4};
  EXPECT_THAT(text(ReplicaType::kPS, 0),
              HasSubstr(R"("worker":["d-worker-0.default.svc:2222","d-worker-1.default.svc:2222",)"
                        R"("d-worker-2.default.svc:2222","d-worker-3.default.svc:2222"])"));
  EXPECT_EQ(
      text(ReplicaType::kWorker, 1),
      R"({"cluster":{"worker":{"1":"d-worker-1.default.svc:2222"},"ps":["d-ps-0.default.svc:2222","d-ps-1.default.svc:2222"]},"task":{"type":"worker","index":1}})");
  job.spec.tf_config.sparse_workers = false;
  EXPECT_EQ(text(ReplicaType::kWorker, 1),
            SerializeTfConfig(*BuildTfConfig(job, ReplicaType::kWorker, 1, BuildOptions{})));
}

TEST(MasterTfConfigTest, ATfJobsMasterIsTheChiefNamedMasterAsUnderTheTrainingOperator) {
  api::DistributedTraining job = JobBuilder("m").Chief().Ps(1).Workers(1).ReplicaServices().Build();
  job.spec.chief_is_master = true;
  EXPECT_EQ(
      *TfConfigText(job, ReplicaType::kChief, 0, BuildOptions{}),
      R"({"cluster":{"master":["m-master-0.default.svc:2222"],"ps":["m-ps-0.default.svc:2222"],"worker":["m-worker-0.default.svc:2222"]},"task":{"type":"master","index":0},"environment":"cloud"})");
  EXPECT_EQ(api::ReplicaName(job, ReplicaType::kChief, 0), "m-master-0");
  EXPECT_EQ(api::ReplicaName(job, ReplicaType::kWorker, 0), "m-worker-0");
}

}  // namespace
}  // namespace disttrain::policy
