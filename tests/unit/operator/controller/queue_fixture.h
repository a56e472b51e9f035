// A job sent to Kueue's LocalQueue "team-a" on the reconciler harness with Kueue support, and
// Kueue's side played by hand: admission (optionally partial), eviction.
#ifndef DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_QUEUE_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_QUEUE_FIXTURE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "operator/queueing/workload.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller::testing {

inline json QueuedJob(json run_policy = json::object()) {
  json job = JobJson(std::move(run_policy));
  job["metadata"]["labels"] = {{queueing::kQueueNameLabel, "team-a"}};
  return job;
}

class QueueTest : public ::testing::Test {
 protected:
  Harness h{QueuedJob(), /*kueue=*/true};

  json Workload() {
    std::vector<json> all = h.client.Objects(kube::kWorkloads);
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? json() : all[0];
  }
  std::string WorkloadName() { return Workload()["metadata"]["name"]; }
  // Kueue's scheduler: quota reserved and admitted on flavour "a100" (node label gpu=a100);
  // `workers` > 0: the worker PodSet admitted partially, with that many.
  void Admit(int workers = 0) {
    h.client.Put(kube::kResourceFlavors,
                 {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                  {"kind", "ResourceFlavor"},
                  {"metadata", {{"name", "a100"}}},
                  {"spec",
                   {{"nodeLabels", {{"gpu", "a100"}}},
                    {"tolerations", {{{"key", "gpu"}, {"operator", "Exists"}}}}}}});
    json wl = Workload();
    json assignments = json::array();
    for (const json& ps : wl["spec"]["podSets"]) {
      json count = workers > 0 && ps["name"] == "worker" ? json(workers) : ps["count"];
      assignments.push_back(
          {{"name", ps["name"]}, {"count", count}, {"flavors", {{"cpu", "a100"}}}});
    }
    wl["status"] = {{"admission", {{"clusterQueue", "cq"}, {"podSetAssignments", assignments}}},
                    {"conditions",
                     {{{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"}},
                      {{"type", "Admitted"}, {"status", "True"}, {"reason", "Admitted"}}}}};
    h.client.Put(kube::kWorkloads, wl);
  }
  // Workload created, admitted, pods created and running: the job is Running.
  void AdmitAndRun() {
    ASSERT_TRUE(h.Pass().ok());
    Admit();
    ASSERT_TRUE(h.Pass().ok());
    h.RunAll();
    ASSERT_TRUE(h.Pass().ok());
  }
  void Evict() {
    json wl = Workload();
    wl["status"]["conditions"].push_back({{"type", "Evicted"},
                                          {"status", "True"},
                                          {"reason", "Preempted"},
                                          {"message", "Preempted to accommodate a workload"}});
    h.client.Put(kube::kWorkloads, wl);
  }
  // A copy: the Workload passed in is often a temporary.
  std::optional<json> WorkloadCondition(const json& wl, const std::string& type) {
    for (const json& c : wl.value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == type) return c;
    }
    return std::nullopt;
  }
};

}  // namespace disttrain::controller::testing

#endif  // DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_QUEUE_FIXTURE_H_
