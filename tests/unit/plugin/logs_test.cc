// kubectl dtr logs JOB (without -f) against a local HTTPS server answering as the API server.
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/rest_kube_client.h"
#include "plugin/commands.h"
#include "tests/unit/plugin/pod_fixture.h"
#include "tests/unit/testing/fake_api_server.h"

namespace disttrain::plugin {
namespace {

using disttrain::testing::FakeApiServer;
using nlohmann::json;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::Pod;

constexpr char kJob[] = "/apis/disttrain.io/v1/namespaces/ml/distributedtrainings/mnist";
constexpr char kPods[] = "/api/v1/namespaces/ml/pods";

std::string LogOf(const std::string& pod, bool previous = false) {
  return absl::StrCat(kPods, "/", pod, "/log?timestamps=true&container=tensorflow",
                      previous ? "&previous=true" : "");
}

FakeApiServer::Response Text(std::string text) { return {200, std::move(text), "text/plain"}; }

json Running(const std::string& role) {
  return Pod(role, 0, "Running", {{"running", json::object()}});
}

// Restarted once after its previous run was killed.
json Restarted(const std::string& role) {
  json pod = Pod(role, 0, "Running", {{"running", json::object()}}, 1);
  pod["status"]["containerStatuses"][1]["lastState"] = {
      {"terminated", {{"exitCode", 137}, {"reason", "Error"}}}};
  return pod;
}

struct LogsCase {
  std::string name;
  std::vector<json> pods;
  std::map<std::string, FakeApiServer::Response> logs;  // by request target
  LogsOptions options;
  int code;
  std::vector<std::string> out;
  std::string err;                  // part of stderr; "" when nothing may be said
  std::vector<std::string> unread;  // logs that must not be asked for
};

TEST(LogsTest, PrintsEveryRunsLinesInTimeOrderOrSaysWhyNot) {
  const FakeApiServer::Response forbidden = FakeApiServer::Error(
      403, "Forbidden", "pods \"mnist-chief-0\" is forbidden: cannot get resource \"pods/log\"");
  const std::map<std::string, FakeApiServer::Response> chief_and_ps = {
      {LogOf("mnist-chief-0"), Text("2026-11-22T10:00:02Z step 100\n")},
      {LogOf("mnist-ps-0"), Text("2026-11-22T10:00:01Z listening\n")}};
  const LogsCase cases[] = {
      {"MergesThePodsInTimeOrder",
       {Running("chief"), Running("ps")},
       chief_and_ps,
       {},
       0,
       {"mnist.ps.0    | listening", "mnist.chief.0 | step 100"},
       "",
       {}},
      {"ShowsTheRunBeforeARestart",
       {Restarted("worker")},
       {{LogOf("mnist-worker-0", true),
         Text("2026-11-22T10:00:01Z starting\n2026-11-22T10:00:02Z step 7\n")},
        {LogOf("mnist-worker-0"), Text("2026-11-22T10:00:03Z starting\n")}},
       {},
       0,
       {"mnist.worker.0 (previous) | starting", "mnist.worker.0 (previous) | step 7",
        "mnist.worker.0            | starting"},
       "",
       {}},
      {"ReadsOnlyTheRoleAsked",
       {Running("chief"), Running("ps")},
       chief_and_ps,
       {.role = "ps"},
       0,
       {"mnist.ps.0 | listening"},
       "",
       {LogOf("mnist-chief-0")}},
      {"ReadsNothingOfAContainerThatNeverStarted",
       {Running("chief"),
        Pod("evaluator", 0, "Pending", {{"waiting", {{"reason", "ContainerCreating"}}}})},
       chief_and_ps,
       {},
       0,
       {"mnist.chief.0 | step 100"},
       "",
       {LogOf("mnist-evaluator-0")}},
      {"SkipsAPodDeletedSinceTheList",
       {Running("chief"), Running("ps")},
       {{LogOf("mnist-ps-0"), Text("2026-11-22T10:00:01Z listening\n")}},
       {},
       0,
       {"mnist.ps.0 | listening"},
       "",
       {}},
      {"ExplainsARefusalAndStillShowsTheRest",
       {Running("chief"), Running("ps")},
       {{LogOf("mnist-chief-0"), forbidden},
        {LogOf("mnist-ps-0"), Text("2026-11-22T10:00:01Z listening\n")}},
       {},
       1,
       {"mnist.ps.0 | listening"},
       "kubectl dtr needs get on distributedtrainings, list on pods, get on pods/log",
       {}},
  };
  for (const LogsCase& c : cases) {
    SCOPED_TRACE(c.name);
    FakeApiServer server;
    server.Answer(kJob, {200, R"({"kind": "DistributedTraining", "metadata": {"name": "mnist"}})"});
    server.Answer(kPods, {200, json{{"kind", "PodList"}, {"items", c.pods}}.dump()});
    for (const auto& [target, response] : c.logs) server.Answer(target, response);
    absl::StatusOr<std::unique_ptr<kube::RestKubeClient>> client =
        kube::RestKubeClient::Create(server.config());
    ASSERT_TRUE(client.ok()) << client.status();
    std::ostringstream out, err;
    EXPECT_EQ(RunLogs({client->get(), "ml", "mnist"}, c.options, out, err), c.code);
    EXPECT_THAT(std::vector<std::string>(absl::StrSplit(out.str(), '\n', absl::SkipEmpty())),
                ElementsAreArray(c.out));
    if (c.err.empty()) {
      EXPECT_EQ(err.str(), "");
    } else {
      EXPECT_THAT(err.str(), HasSubstr(c.err));
    }
    const std::vector<std::string> requests = server.requests();
    for (const std::string& target : c.unread) {
      EXPECT_THAT(requests, ::testing::Not(::testing::Contains(target)));
    }
    ASSERT_FALSE(requests.empty());
    EXPECT_EQ(requests.front(), kJob) << "the job is read first";
  }
}

TEST(LogsTest, AJobThatDoesNotExistIsNamedWithWhereToLook) {
  FakeApiServer server;
  absl::StatusOr<std::unique_ptr<kube::RestKubeClient>> client =
      kube::RestKubeClient::Create(server.config());
  ASSERT_TRUE(client.ok()) << client.status();
  std::ostringstream out, err;
  EXPECT_EQ(RunLogs({client->get(), "ml", "mnist"}, {}, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(),
            "Error: distributedtraining \"mnist\" not found in namespace \"ml\" (kubectl get dtr "
            "-n ml lists the jobs there)\n");
  EXPECT_EQ(server.requests(), std::vector<std::string>{kJob}) << "no pods listed";
}

}  // namespace
}  // namespace disttrain::plugin
