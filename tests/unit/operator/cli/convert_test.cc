// kubectl dtr convert: a TFJob as the DistributedTraining that runs the same way.
#include "operator/cli/convert.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/api/tfjob_codec.h"

namespace disttrain::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json TfJob() {
  return json::parse(R"({"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
    "metadata": {"name": "mnist", "namespace": "ml", "uid": "u1", "resourceVersion": "7",
                 "labels": {"kueue.x-k8s.io/queue-name": "gpu"},
                 "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "spec": {"enableDynamicWorker": true, "successPolicy": "AllWorkers",
      "runPolicy": {"managedBy": "kubeflow.org/training-operator", "activeDeadlineSeconds": 600},
      "tfReplicaSpecs": {
        "ps": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}},
        "Worker": {"replicas": 3, "restartPolicy": "OnFailure",
                   "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}}}},
    "status": {"conditions": []}})");
}

TEST(ConvertTest, WritesTheDistributedTrainingThatRunsTheSameWay) {
  absl::StatusOr<Conversion> c = ConvertTfJob(TfJob());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job["apiVersion"], "disttrain.io/v1");
  EXPECT_EQ(c->job["kind"], "DistributedTraining");
  EXPECT_EQ(c->job["metadata"], json::parse(R"({"name": "mnist", "namespace": "ml",
                                               "labels": {"kueue.x-k8s.io/queue-name": "gpu"}})"));
  EXPECT_FALSE(c->job.contains("status"));
  const json& spec = c->job["spec"];
  EXPECT_EQ(spec["replicaSpecs"]["PS"], TfJob()["spec"]["tfReplicaSpecs"]["ps"]);
  EXPECT_EQ(spec["replicaSpecs"]["Worker"], TfJob()["spec"]["tfReplicaSpecs"]["Worker"]);
  EXPECT_EQ(spec["runPolicy"],
            json::parse(R"({"activeDeadlineSeconds": 600, "cleanPodPolicy": "None"})"));
  EXPECT_EQ(spec["successPolicy"], "AllWorkers");
  EXPECT_EQ(spec["tfConfig"], json::parse(R"({"sparseWorkers": true})"));
  EXPECT_FALSE(spec.contains("managedBy")) << "the training-operator's managedBy is this operator";

  // Both decode into the same engine job, but for the kind and the backoff default.
  absl::StatusOr<api::DistributedTraining> from_tfjob = api::DecodeTfJob(TfJob());
  absl::StatusOr<api::DistributedTraining> from_dt = api::DecodeJob(c->job);
  ASSERT_TRUE(from_dt.ok()) << from_dt.status();
  EXPECT_EQ(from_dt->spec.run_policy.clean_pod_policy,
            from_tfjob->spec.run_policy.clean_pod_policy);
  EXPECT_EQ(from_dt->spec.tf_config.sparse_workers, true);
  EXPECT_EQ(from_dt->spec.success_policy, from_tfjob->spec.success_policy);
  EXPECT_EQ(from_dt->spec.run_policy.active_deadline_seconds, 600);
}

TEST(ConvertTest, SaysWhatRunsDifferently) {
  absl::StatusOr<Conversion> c = ConvertTfJob(TfJob());
  ASSERT_TRUE(c.ok()) << c.status();
  std::string all;
  for (const std::string& w : c->warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("cleanPodPolicy: None written out"));
  EXPECT_THAT(all, HasSubstr("backoffLimit is unset"));
  EXPECT_THAT(all, HasSubstr("training.kubeflow.org"));
  json bounded = TfJob();
  bounded["spec"]["runPolicy"]["backoffLimit"] = 3;
  bounded["spec"]["runPolicy"]["cleanPodPolicy"] = "All";
  c = ConvertTfJob(bounded);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->warnings.size(), 1u) << "only the labels' note is left";
  EXPECT_EQ(c->job["spec"]["runPolicy"]["cleanPodPolicy"], "All");
}

TEST(ConvertTest, NullFieldsReadAsUnset) {
  json j = TfJob();
  j["spec"]["successPolicy"] = nullptr;
  j["spec"]["runPolicy"] = nullptr;
  j["metadata"]["labels"] = nullptr;
  absl::StatusOr<Conversion> c = ConvertTfJob(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->job["spec"].contains("successPolicy"));
  EXPECT_EQ(c->job["spec"]["runPolicy"], json::parse(R"({"cleanPodPolicy": "None"})"));
  EXPECT_FALSE(c->job["metadata"].contains("labels"));
}

TEST(ConvertTest, KeepsMultiKueuesManagedBy) {
  json j = TfJob();
  j["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  absl::StatusOr<Conversion> c = ConvertTfJob(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job["spec"]["managedBy"], "kueue.x-k8s.io/multikueue");
}

TEST(ConvertTest, AMasterBecomesTheChiefAndSaysSo) {
  json j = TfJob();
  j["spec"]["tfReplicaSpecs"]["Master"] = j["spec"]["tfReplicaSpecs"]["ps"];
  j["spec"]["tfReplicaSpecs"]["Master"]["replicas"] = 1;
  absl::StatusOr<Conversion> c = ConvertTfJob(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job["spec"]["replicaSpecs"]["Chief"], j["spec"]["tfReplicaSpecs"]["Master"]);
  EXPECT_THAT(c->warnings[0], HasSubstr("Master becomes Chief"));
}

TEST(ConvertTest, RefusesWhatTheOperatorWouldRefuseNamingTheTfJobsField) {
  json j = TfJob();
  j["spec"]["tfReplicaSpecs"]["Launcher"] = j["spec"]["tfReplicaSpecs"]["ps"];
  EXPECT_THAT(ConvertTfJob(j).status().message(),
              HasSubstr("spec.tfReplicaSpecs: unknown replica type \"Launcher\""));
  j = TfJob();
  j["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = -1;
  EXPECT_THAT(ConvertTfJob(j).status().message(), HasSubstr("replicas"));
}

TEST(ConvertTest, TheCommandExitsWithDocumentedCodes) {
  std::ostringstream out, err;
  EXPECT_EQ(RunConvert({"-o", "xml", "-f", "x"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("-o must be yaml or json"));
  EXPECT_EQ(RunConvert({}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("-f TFJOB.yaml is required"));
  EXPECT_EQ(RunConvert({"-f", "/no/such/file.yaml"}, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("cannot open /no/such/file.yaml"));
}

}  // namespace
}  // namespace disttrain::cli
