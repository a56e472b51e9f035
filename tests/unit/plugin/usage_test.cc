#include "plugin/usage.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plugin/job_view.h"
#include "tests/unit/plugin/pod_fixture.h"

namespace disttrain::plugin {
namespace {

using nlohmann::json;
using testing::Pod;

TEST(UsageTest, ReadsTheSummaryAndFormatsMillicoresAndMebibytes) {
  json summary = json::parse(R"({"node": {"nodeName": "node-1"}, "pods": [
    {"podRef": {"name": "mnist-chief-0", "namespace": "ml", "uid": "chief0"},
     "cpu": {"usageNanoCores": 250400000}, "memory": {"workingSetBytes": 52428800}},
    {"podRef": {"name": "mnist-ps-0", "namespace": "ml", "uid": "ps0"}, "cpu": {}, "memory": {"workingSetBytes": 1048576}},
    {"podRef": {"name": "other", "namespace": "ml", "uid": "x"}}]})");
  std::map<std::string, PodUsage> usage = ReadSummary(summary);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage["chief0"].nano_cores, 250400000u);
  EXPECT_FALSE(usage["ps0"].nano_cores.has_value());
  std::vector<PodRow> rows =
      ReadPods("mnist", {Pod("chief", 0, "Running", {{"running", json::object()}}),
                         Pod("ps", 0, "Running", {{"running", json::object()}})});
  rows.push_back(rows[1]);
  rows[2].name = "mnist-ps-1";
  rows[2].uid = "ps1";
  rows[2].node = "node-2";
  EXPECT_EQ(FormatTop(rows, usage, {{"node-2", "no kubelet"}}),
            "POD             ROLE      CPU(cores)   MEMORY(bytes)   NODE\n"
            "mnist-chief-0   chief 0   250m         50Mi            node-1\n"
            "mnist-ps-0      ps 0      -            1Mi             node-1\n"
            "mnist-ps-1      ps 0      <unknown>    <unknown>       node-2\n"
            "TOTAL                     250m         51Mi            \n"
            "node node-2: no kubelet\n");
}

TEST(UsageTest, APodIsTheSumOfItsContainersAsMetricsServerReportsIt) {
  // What the test node's kubelet (cgroupfs driver) served: zeros for the pod's own cgroup, real
  // figures per container.
  json summary = json::parse(R"({"pods": [
    {"podRef": {"name": "mnist-ps-0", "uid": "ps0"},
     "cpu": {"usageNanoCores": 0}, "memory": {"workingSetBytes": 0},
     "containers": [
       {"name": "tensorflow", "cpu": {"usageNanoCores": 175842859}, "memory": {"workingSetBytes": 41943040}},
       {"name": "sidecar", "cpu": {"usageNanoCores": 1000000}, "memory": {"workingSetBytes": 1048576}}]},
    {"podRef": {"name": "mnist-chief-0", "uid": "chief0"},
     "cpu": {"usageNanoCores": 0}, "memory": {"workingSetBytes": 0},
     "containers": [{"name": "tensorflow", "cpu": {}, "memory": {}}]}]})");
  std::map<std::string, PodUsage> usage = ReadSummary(summary);
  EXPECT_EQ(usage["ps0"].nano_cores, 176842859u);
  EXPECT_EQ(usage["ps0"].working_set_bytes, 42991616u);
  EXPECT_EQ(usage["chief0"].nano_cores, 0u) << "no container figure: the pod's own";
  EXPECT_EQ(usage["chief0"].working_set_bytes, 0u);
}

}  // namespace
}  // namespace disttrain::plugin
