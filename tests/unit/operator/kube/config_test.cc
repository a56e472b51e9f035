#include "operator/kube/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

using ::testing::HasSubstr;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kcfg-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

constexpr char kTwoContexts[] = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
- name: cb
  cluster: {server: "https://b.example:443", certificate-authority-data: Q0EtQgo=}
contexts:
- name: a
  context: {cluster: ca, user: ua, namespace: ml}
- name: b
  context: {cluster: cb, user: ub}
users:
- name: ua
  user: {client-certificate: certs/admin.crt, client-key: certs/admin.key}
- name: ub
  user: {token: "s3cr3t-token\n"}
)";

TEST_F(KubeconfigTest, ReadsTheCurrentContextWithFilesRelativeToTheKubeconfig) {
  Write("ca.crt", "CA-A");
  std::filesystem::create_directories(dir_ / "certs");
  Write("certs/admin.crt", "CERT");
  Write("certs/admin.key", "KEY");
  auto config = LoadKubeconfig(Write("config", kTwoContexts), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "CA-A");
  EXPECT_EQ(config->client_cert_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_EQ(config->namespace_name, "ml");
  EXPECT_TRUE(config->bearer_token.empty());
}

TEST_F(KubeconfigTest, ReadsAnotherContextWithInlineDataAndAToken) {
  auto config = LoadKubeconfig(Write("config", kTwoContexts), "b");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://b.example:443");
  EXPECT_EQ(config->ca_pem, "CA-B\n");
  EXPECT_EQ(config->bearer_token, "s3cr3t-token");
}

struct BadKubeconfig {
  std::string name, text, message;
};

class BadKubeconfigTest : public KubeconfigTest,
                          public ::testing::WithParamInterface<BadKubeconfig> {};

TEST_P(BadKubeconfigTest, SaysWhatIsWrong) {
  auto config = LoadKubeconfig(Write("config", GetParam().text),
                               GetParam().name == "UnknownContext" ? "zzz" : "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr(GetParam().message));
  EXPECT_THAT(std::string(config.status().message()), ::testing::Not(HasSubstr("s3cr3t")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadKubeconfigTest,
    ::testing::Values(
        BadKubeconfig{"NotYaml", "a: [1,", "invalid YAML"},
        BadKubeconfig{"NotAMap", "- 1\n- 2\n", "expected a YAML map"},
        BadKubeconfig{"NoContext", "apiVersion: v1\nkind: Config\n",
                      "no context given and no current-context"},
        BadKubeconfig{"UnknownContext", kTwoContexts, "no context named \"zzz\""},
        BadKubeconfig{"HttpServer",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'http://x:80'}}]\n",
                      "is not https://"},
        BadKubeconfig{"InsecureSkipVerify",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x', "
                      "insecure-skip-tls-verify: true}}]\n",
                      "insecure-skip-tls-verify is set"},
        BadKubeconfig{"MissingCaFile",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: "
                      "/no/ca.crt}}]\n",
                      "cannot read certificate-authority /no/ca.crt"},
        BadKubeconfig{
            "CertWithoutKey",
            "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
            "users: [{name: u, user: {client-certificate-data: Q0VSVAo=, token: s3cr3t}}]\n",
            "must be given together"}),
    [](const auto& info) { return info.param.name; });

TEST_F(KubeconfigTest, MissingFileIsNamed) {
  auto config = LoadKubeconfig((dir_ / "nope").string(), "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("cannot read kubeconfig"));
}

}  // namespace
}  // namespace disttrain::kube
