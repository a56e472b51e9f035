#include "operator/policy/tls_secret_builder.h"

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "common/certificates.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/policy/pod_builder.h"
#include "tests/unit/testing/job_builder.h"
#include "tests/unit/testing/x509_chain.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using ::testing::ElementsAre;
using testing::JobBuilder;
using ::testing::UnorderedElementsAre;

std::string Decoded(const json& secret, const std::string& key) {
  std::string out;
  EXPECT_TRUE(absl::Base64Unescape(secret["data"].value(key, ""), &out)) << key;
  return out;
}

bool Verifies(const std::string& ca, const std::string& leaf) {
  return ::disttrain::testing::VerifyChain(ca, leaf) == X509_V_OK;
}

api::DistributedTraining TlsJob() {
  api::DistributedTraining job = JobBuilder("dist").Chief().Ps(2).Workers(2).Build();
  job.metadata.namespace_name = "team";
  job.metadata.uid = "u1";
  job.spec.tls.enabled = true;
  return job;
}

TEST(TlsSecretBuilderTest, OneCertificatePerTaskNamedByItsServiceAndSignedByTheJobsCa) {
  const api::DistributedTraining job = TlsJob();
  const absl::Time now = absl::Now();
  absl::StatusOr<json> secret = BuildTlsSecret(job, BuildOptions{}, now);
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ((*secret)["kind"], "Secret");
  EXPECT_EQ((*secret)["metadata"]["name"], "dist-tls-u1");
  EXPECT_EQ((*secret)["metadata"]["namespace"], "team");
  EXPECT_EQ((*secret)["metadata"]["labels"]["disttrain.io/job-name"], "dist");
  EXPECT_EQ((*secret)["metadata"]["ownerReferences"][0]["uid"], "u1");
  std::vector<std::string> keys;
  for (const auto& [k, v] : (*secret)["data"].items()) keys.push_back(k);
  EXPECT_THAT(keys, UnorderedElementsAre("ca.crt", "chief-0.crt", "chief-0.key", "ps-0.crt",
                                         "ps-0.key", "ps-1.crt", "ps-1.key", "worker-0.crt",
                                         "worker-0.key", "worker-1.crt", "worker-1.key"));
  const std::string ca = Decoded(*secret, "ca.crt");
  EXPECT_TRUE(Verifies(ca, Decoded(*secret, "ps-1.crt")));
  EXPECT_TRUE(Verifies(ca, Decoded(*secret, "worker-0.crt")));
  EXPECT_THAT(
      *SubjectAltNames(Decoded(*secret, "ps-1.crt")),
      ElementsAre("DNS:dist-ps-1", "DNS:dist-ps-1.dist", "DNS:dist-ps-1.dist.team",
                  "DNS:dist-ps-1.dist.team.svc", "DNS:dist-ps-1.dist.team.svc.cluster.local"));
  EXPECT_NE(Decoded(*secret, "ps-1.key").find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(absl::ToUnixSeconds(*NotAfter(Decoded(*secret, "ps-1.crt"))),
            absl::ToUnixSeconds(now + kTlsValidity));
  EXPECT_FALSE((*secret)["data"].contains("ca.key"));  // no one can issue more of the job's

  // Another build (another job, or the same name again) has a CA of its own.
  absl::StatusOr<json> again = BuildTlsSecret(job, BuildOptions{}, now);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(Verifies(ca, Decoded(*again, "ps-1.crt")));
}

TEST(TlsSecretBuilderTest, NamesFollowTheClusterDomainAndTfJobsMaster) {
  api::DistributedTraining job = TlsJob();
  BuildOptions options;
  options.cluster_domain = "corp.example";
  EXPECT_THAT(
      TaskNames(job, ReplicaType::kWorker, 1, options),
      ElementsAre("dist-worker-1", "dist-worker-1.dist", "dist-worker-1.dist.team",
                  "dist-worker-1.dist.team.svc", "dist-worker-1.dist.team.svc.corp.example"));
  // One Service per replica (a TFJob's): the names TF_CONFIG then lists.
  job.addressing = api::Addressing::kReplicaServices;
  EXPECT_THAT(TaskNames(job, ReplicaType::kWorker, 1, options),
              ElementsAre("dist-worker-1", "dist-worker-1.team", "dist-worker-1.team.svc",
                          "dist-worker-1.team.svc.corp.example"));
  job.spec.chief_is_master = true;
  EXPECT_EQ(TlsTaskKey(job, ReplicaType::kChief, 0), "master-0");
}

TEST(TlsSecretBuilderTest, EachPodMountsOnlyItsOwnKeyReadOnlyWhereTheTrainerLooks) {
  const api::DistributedTraining job = TlsJob();
  absl::StatusOr<BuiltPod> built = BuildPod(job, ReplicaType::kPS, 1, BuildOptions{});
  ASSERT_TRUE(built.ok()) << built.status();
  const json& spec = built->pod["spec"];
  EXPECT_EQ(spec["volumes"], json::parse(R"([{"name": "disttrain-tls", "secret": {
      "secretName": "dist-tls-u1", "defaultMode": 292, "items": [
        {"key": "ca.crt", "path": "ca.crt"}, {"key": "ps-1.crt", "path": "tls.crt"},
        {"key": "ps-1.key", "path": "tls.key"}]}}])"));
  const json& container = spec["containers"][0];
  EXPECT_EQ(container["volumeMounts"],
            json::parse(R"([{"name": "disttrain-tls", "mountPath": "/etc/disttrain/tls",
                             "readOnly": true}])"));
  bool env = false;
  for (const json& e : container["env"])
    env |= e["name"] == "DISTTRAIN_TLS_DIR" && e["value"] == "/etc/disttrain/tls";
  EXPECT_TRUE(env) << container["env"].dump();
}

TEST(TlsSecretBuilderTest, WithAnFsGroupTheFilesAreReadableByThatGroupOnly) {
  const api::DistributedTraining job = TlsJob();
  const json pod_spec = {{"securityContext", {{"fsGroup", 1000}}}};
  EXPECT_EQ(TlsVolume(job, ReplicaType::kWorker, 0, pod_spec)["secret"]["defaultMode"], 0440);
}

TEST(TlsSecretBuilderTest, AJobWithoutTlsMountsNothing) {
  api::DistributedTraining job = TlsJob();
  job.spec.tls.enabled = false;
  absl::StatusOr<BuiltPod> built = BuildPod(job, ReplicaType::kPS, 0, BuildOptions{});
  ASSERT_TRUE(built.ok());
  EXPECT_FALSE(built->pod["spec"].contains("volumes"));
  EXPECT_FALSE(built->pod["spec"]["containers"][0].contains("volumeMounts"));
}

}  // namespace
}  // namespace disttrain::policy
