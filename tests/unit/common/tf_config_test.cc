#include "common/tf_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain {
namespace {

using ::testing::HasSubstr;

TEST(TfConfigTest, SerialisesInTheKubeflowByteFormat) {
  TfConfig config;
  config.cluster = {
      {"worker",
       {"dist-worker-0.default.svc:2222", "dist-worker-1.default.svc:2222",
        "dist-worker-2.default.svc:2222"}},
      {"ps", {"dist-ps-0.default.svc:2222", "dist-ps-1.default.svc:2222"}},
      {"chief", {"dist-chief-0.default.svc:2222"}},
      {"evaluator", {"dist-evaluator-0.default.svc:2222"}},
  };
  config.task_type = "worker";
  config.task_index = 1;
  EXPECT_EQ(
      SerializeTfConfig(config),
      R"({"cluster":{"chief":["dist-chief-0.default.svc:2222"],"evaluator":["dist-evaluator-0.default.svc:2222"],"ps":["dist-ps-0.default.svc:2222","dist-ps-1.default.svc:2222"],"worker":["dist-worker-0.default.svc:2222","dist-worker-1.default.svc:2222","dist-worker-2.default.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})");
}

TEST(TfConfigTest, ParseReadsBackWhatSerializeWrote) {
  TfConfig config;
  config.cluster = {{"ps", {"a:1", "b:2"}}, {"worker", {"c:3"}}};
  config.task_type = "ps";
  config.task_index = 1;
  absl::StatusOr<TfConfig> parsed = ParseTfConfig(SerializeTfConfig(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, config);
}

TEST(TfConfigTest, AcceptsIpv6HostsAndTheWholePortRange) {
  absl::StatusOr<TfConfig> parsed = ParseTfConfig(
      R"({"cluster":{"ps":["[::1]:1","ps-0.dist.ns.svc:65535"]},"task":{"type":"ps","index":0}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->cluster.at("ps")[0], "[::1]:1");
}

TEST(TfConfigTest, ReadsMasterAsChief) {
  absl::StatusOr<TfConfig> parsed = ParseTfConfig(
      R"({"cluster":{"master":["m:1"],"worker":["w:1"]},"task":{"type":"master","index":0}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->task_type, "chief");
  EXPECT_EQ(parsed->cluster.at("chief").front(), "m:1");
  EXPECT_EQ(parsed->environment, "cloud");
}

TEST(TfConfigTest, AcceptsAnEvaluatorKeptOutOfTheCluster) {
  absl::StatusOr<TfConfig> parsed = ParseTfConfig(
      R"({"cluster":{"chief":["c:1"],"ps":["p:1"]},"task":{"type":"evaluator","index":0}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->task_type, "evaluator");
}

struct BadConfig {
  std::string name;
  std::string text;
  std::string message;
};

class TfConfigErrorTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(TfConfigErrorTest, RejectsWithAMessageNamingTheProblem) {
  absl::StatusOr<TfConfig> parsed = ParseTfConfig(GetParam().text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TfConfigErrorTest,
    ::testing::Values(
        BadConfig{"Empty", "", "is empty"},
        BadConfig{"Malformed", "{\"cluster\":", "not valid JSON"},
        BadConfig{"NotAnObject", "[1]", "must be a JSON object"},
        BadConfig{"NoCluster", R"({"task":{"type":"worker","index":0}})",
                  "\"cluster\" must be an object"},
        BadConfig{"UnknownRoleInCluster",
                  R"({"cluster":{"boss":["a:1"]},"task":{"type":"worker","index":0}})",
                  "unknown role \"boss\""},
        BadConfig{"UnknownTaskType",
                  R"({"cluster":{"worker":["a:1"]},"task":{"type":"boss","index":0}})",
                  "task.type \"boss\" is not a role"},
        BadConfig{"IndexOutOfRange",
                  R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":1}})",
                  "task.index 1 is out of range: cluster.worker has 1 task(s)"},
        BadConfig{"NegativeIndex",
                  R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":-1}})",
                  "must not be negative"},
        BadConfig{"OwnRoleMissing",
                  R"({"cluster":{"worker":["a:1"]},"task":{"type":"ps","index":0}})",
                  "role \"ps\" is missing from cluster"},
        BadConfig{"HostNotAString",
                  R"({"cluster":{"worker":[1]},"task":{"type":"worker","index":0}})",
                  "must hold \"host:port\" strings"},
        BadConfig{"PortPastTheLast",
                  R"({"cluster":{"ps":["ps-0:2222","ps-1:99999"]},"task":{"type":"ps","index":0}})",
                  "cluster.ps[1] \"ps-1:99999\" is not host:port with a port from 1 to 65535"},
        BadConfig{"NoPort", R"({"cluster":{"worker":["w-0"]},"task":{"type":"worker","index":0}})",
                  "cluster.worker[0] \"w-0\" is not host:port"},
        BadConfig{"PortNotANumber",
                  R"({"cluster":{"worker":["w-0:http"]},"task":{"type":"worker","index":0}})",
                  "is not host:port"},
        BadConfig{"PortZero",
                  R"({"cluster":{"worker":["w-0:0"]},"task":{"type":"worker","index":0}})",
                  "is not host:port"},
        BadConfig{"NoHost",
                  R"({"cluster":{"worker":[":2222"]},"task":{"type":"worker","index":0}})",
                  "is not host:port"},
        BadConfig{"IndexNotAnInteger",
                  R"({"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":"0"}})",
                  "task.index must be an integer"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain
