#include "operator/cli/render.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace disttrain::cli {
namespace {

using nlohmann::json;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kJob[] = R"(apiVersion: disttrain.io/v1
kind: DistributedTraining
metadata: {name: dist}
spec:
  replicaSpecs:
    PS:
      replicas: 1
      template: {spec: {containers: [{name: tensorflow, image: trainer}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: tensorflow, image: trainer}]}}
)";

constexpr char kConfigMap[] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n";

struct RenderCase {
  std::string name;
  std::string manifest;
  std::vector<std::string> flags;  // after -f FILE
  int code;
  std::vector<std::string> objects;  // "Kind/name" of what -o json printed, in order
  std::string err;                   // part of stderr; "" when nothing may be said
};

// The objects of a `render -o json` as "Kind/name".
std::vector<std::string> Objects(const std::string& out) {
  std::vector<std::string> objects;
  const json list = json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (!list.is_object()) return objects;
  for (const json& item : list.value("items", json::array())) {
    objects.push_back(item.value("kind", "") + "/" + item.value("/metadata/name"_json_pointer, ""));
  }
  return objects;
}

TEST(RenderTest, PrintsWhatTheOperatorWouldCreateOrSaysWhyNot) {
  const std::vector<std::string> kDist = {"NetworkPolicy/dist", "Service/dist", "Pod/dist-ps-0",
                                          "Pod/dist-worker-0", "Pod/dist-worker-1"};
  const RenderCase cases[] = {
      {"AJob", kJob, {"-o", "json"}, 0, kDist, ""},
      {"WithoutTheNetworkPolicy",
       kJob,
       {"-o", "json", "--network-policy=false"},
       0,
       {"Service/dist", "Pod/dist-ps-0", "Pod/dist-worker-0", "Pod/dist-worker-1"},
       ""},
      {"SkipsWhatIsNotAJob",
       std::string(kConfigMap) + "---\n" + kJob,
       {"-o", "json"},
       0,
       kDist,
       "render: skipping ConfigMap settings (not a DistributedTraining)"},
      {"NoJobInTheFile", kConfigMap, {"-o", "json"}, 2, {}, "no DistributedTraining in it"},
      {"AnInvalidJobIsNamed",
       "apiVersion: disttrain.io/v1\nkind: DistributedTraining\nmetadata: {name: bad}\n"
       "spec: {replicaSpecs: {}}\n",
       {"-o", "json"},
       2,
       {},
       "render_test.yaml: job bad: spec.replicaSpecs: needs at least one role"},
      {"NotYaml", "kind: [", {"-o", "json"}, 2, {}, "render_test.yaml: invalid YAML"},
      {"AnUnknownOutputFormat", kJob, {"-o", "xml"}, 2, {}, "-o must be yaml or json"},
      {"AnUnknownGangScheduler",
       kJob,
       {"--gang-scheduler", "kube"},
       2,
       {},
       "--gang-scheduler must be volcano, scheduler-plugins or kubernetes"},
      {"KubernetesGangsWorkloadAndPodGroupFirst",
       std::string(kJob) + "  runPolicy: {schedulingPolicy: {}}\n",
       {"-o", "json", "--gang-scheduler", "kubernetes", "--network-policy=false"},
       0,
       {"Workload/dist", "PodGroup/dist", "Service/dist", "Pod/dist-ps-0", "Pod/dist-worker-0",
        "Pod/dist-worker-1"},
       ""},
  };
  const std::string path = ::testing::TempDir() + "/render_test.yaml";
  for (const RenderCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::ofstream(path) << c.manifest;
    std::vector<std::string> args = {"-f", path};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    std::ostringstream out, err;
    EXPECT_EQ(RunRender(args, out, err), c.code) << err.str();
    EXPECT_THAT(Objects(out.str()), ElementsAreArray(c.objects));
    if (c.err.empty()) {
      EXPECT_EQ(err.str(), "");
    } else {
      EXPECT_THAT(err.str(), HasSubstr(c.err));
    }
  }
  std::remove(path.c_str());
}

TEST(RenderTest, AFileThatCannotBeReadIsAFailureNotAUsageError) {
  std::ostringstream out, err;
  EXPECT_EQ(RunRender({"-f", "/no/such/job.yaml"}, out, err), 1);
  EXPECT_EQ(err.str(), "render: cannot open /no/such/job.yaml\n");
  EXPECT_EQ(RunRender({}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("-f JOB.yaml is required"));
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace disttrain::cli
