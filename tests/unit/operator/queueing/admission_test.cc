// Reading Kueue's decision from a Workload, and what admitted pods carry.
#include "operator/queueing/admission.h"

#include <map>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "operator/queueing/workload.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

json Admitted() {
  return json::parse(R"({
    "metadata": {"name": "w", "finalizers": ["kueue.x-k8s.io/resource-in-use"]},
    "spec": {"queueName": "lq"},
    "status": {
      "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
                     {"type": "Admitted", "status": "True", "reason": "Admitted"}],
      "admission": {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "worker", "count": 2, "flavors": {"cpu": "a100", "nvidia.com/gpu": "a100"}},
        {"name": "ps", "count": 1, "flavors": {"cpu": "spot"}}]},
      "admissionChecks": [{"name": "prov", "state": "Ready", "podSetUpdates": [
        {"name": "worker", "labels": {"prov": "yes"}, "annotations": {"a": "b"},
         "tolerations": [{"key": "prov", "operator": "Exists"}]}]}],
      "reclaimablePods": [{"name": "worker", "count": 1}]}})");
}

const json kA100 = json::parse(R"({"metadata": {"name": "a100"}, "spec": {
    "nodeLabels": {"gpu": "a100"},
    "tolerations": [{"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"}]}})");
const json kSpot =
    json::parse(R"({"metadata": {"name": "spot"}, "spec": {"nodeLabels": {"spot": "true"}}})");

const json* Flavors(const std::string& name) {
  if (name == "a100") return &kA100;
  if (name == "spot") return &kSpot;
  return nullptr;
}

TEST(AdmissionTest, ReadsTheConditionsKueueWrites) {
  WorkloadState s = ReadWorkload(Admitted());
  EXPECT_TRUE(s.quota_reserved);
  EXPECT_TRUE(s.admitted);
  EXPECT_FALSE(s.evicted);
  EXPECT_TRUE(s.has_finalizer);
  EXPECT_EQ(s.cluster_queue, "cq");
  EXPECT_EQ(s.reclaimable.at("worker"), 1);

  json waiting = json::parse(R"({"status": {"conditions": [{"type": "QuotaReserved",
      "status": "False", "reason": "Inadmissible", "message": "LocalQueue lq doesn't exist"}]}})");
  s = ReadWorkload(waiting);
  EXPECT_FALSE(s.quota_reserved);
  EXPECT_EQ(s.waiting_reason, "Inadmissible");
  EXPECT_EQ(s.waiting_message, "LocalQueue lq doesn't exist");

  json evicted = Admitted();
  evicted["status"]["conditions"].push_back(
      {{"type", "Evicted"}, {"status", "True"}, {"reason", "Preempted"}, {"message", "by hi"}});
  s = ReadWorkload(evicted);
  EXPECT_TRUE(s.evicted);
  EXPECT_EQ(s.evicted_reason, "Preempted");
}

TEST(AdmissionTest, PodSetInfoJoinsFlavoursKueueLabelsAndAdmissionChecks) {
  absl::StatusOr<std::map<std::string, PodSetInfo>> infos = PodSetInfos(Admitted(), Flavors);
  ASSERT_TRUE(infos.ok()) << infos.status();
  const PodSetInfo& worker = infos->at("worker");
  EXPECT_EQ(worker.node_selector.at("gpu"), "a100");
  EXPECT_EQ(worker.labels.at("kueue.x-k8s.io/podset"), "worker");
  EXPECT_EQ(worker.labels.at("kueue.x-k8s.io/local-queue-name"), "lq");
  EXPECT_EQ(worker.labels.at("kueue.x-k8s.io/cluster-queue-name"), "cq");
  EXPECT_EQ(worker.labels.at("prov"), "yes");
  EXPECT_EQ(worker.annotations.at("a"), "b");
  ASSERT_EQ(worker.tolerations.size(), 2u) << "a flavour used for two resources counts once";
  EXPECT_EQ(worker.count, 2);
  const PodSetInfo& ps = infos->at("ps");
  EXPECT_EQ(ps.count, 1);
  EXPECT_EQ(ps.node_selector.at("spot"), "true");
  EXPECT_TRUE(ps.tolerations.empty());
}

TEST(AdmissionTest, AMissingFlavourIsAnError) {
  json wl = Admitted();
  wl["status"]["admission"]["podSetAssignments"][1]["flavors"]["cpu"] = "gone";
  absl::StatusOr<std::map<std::string, PodSetInfo>> infos = PodSetInfos(wl, Flavors);
  EXPECT_EQ(infos.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(infos.status().message().find("ResourceFlavor gone"), std::string::npos);
}

TEST(AdmissionTest, ApplyMergesIntoThePodAndRefusesAContradiction) {
  PodSetInfo info;
  info.node_selector["gpu"] = "a100";
  info.labels["kueue.x-k8s.io/podset"] = "worker";
  info.tolerations.push_back({{"key", "gpu"}, {"operator", "Exists"}});
  json pod = {{"metadata", {{"labels", {{"app", "x"}}}}},
              {"spec", {{"tolerations", {{{"key", "gpu"}, {"operator", "Exists"}}}}}}};
  ASSERT_TRUE(ApplyPodSetInfo(info, &pod).ok());
  EXPECT_EQ(pod["spec"]["nodeSelector"]["gpu"], "a100");
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "x");
  EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/podset"], "worker");
  EXPECT_EQ(pod["spec"]["tolerations"].size(), 1u) << "no duplicate toleration";

  json pinned = {{"spec", {{"nodeSelector", {{"gpu", "h100"}}}}}};
  absl::Status s = ApplyPodSetInfo(info, &pinned);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("gpu"), std::string::npos);
}

TEST(WhyWaitingTest, SaysKueuesReasonEvictionFirst) {
  WorkloadState st;
  Waiting w = WhyWaiting(st, "wl", "team-a");
  EXPECT_EQ(w.Reason(), "WaitingForAdmission");
  EXPECT_EQ(w.message, "waiting for Kueue to admit Workload wl from LocalQueue team-a");
  st.waiting_reason = "Inadmissible";
  st.waiting_message = "LocalQueue team-a doesn't exist";
  w = WhyWaiting(st, "wl", "team-a");
  EXPECT_EQ(w.Reason(), "Inadmissible");
  EXPECT_TRUE(IsWarning(w.reason));
  st.waiting_reason = "Pending";
  st.waiting_message = "couldn't assign flavors to pod set worker";
  w = WhyWaiting(st, "wl", "team-a");
  EXPECT_EQ(w.Reason(), "Pending") << "Kueue's own reason, as it says it";
  EXPECT_FALSE(IsWarning(w.reason));
  st.waiting_reason = "Inadmissible";
  st.waiting_message = "LocalQueue team-a doesn't exist";
  w = WhyWaiting(st, "wl", "team-a");
  EXPECT_EQ(w.message, "LocalQueue team-a doesn't exist");
  st.quota_reserved = true;
  st.waiting_message = "";
  EXPECT_EQ(WhyWaiting(st, "wl", "team-a").Reason(), "WaitingForAdmissionChecks");
  st.evicted = true;
  st.evicted_reason = "Preempted";
  st.evicted_message = "Preempted to accommodate a workload";
  w = WhyWaiting(st, "wl", "team-a");
  EXPECT_EQ(w.Reason(), "Preempted");
  EXPECT_EQ(w.message,
            "evicted by Kueue (Preempted): Preempted to accommodate a workload; queued again");
  st.evicted_reason = "AdmissionCheck";
  EXPECT_EQ(WhyWaiting(st, "wl", "team-a").Reason(), "Evicted");
}

struct AdmissionCase {
  std::string name;
  AdmissionFacts facts;
  AdmissionStep want;
};

AdmissionFacts Facts(bool has, bool replacing, bool prebuilt, std::optional<bool> stands = true,
                     bool admitted = false, bool evicted = false, bool finished = false) {
  AdmissionFacts f;
  f.has_workload = has;
  f.replacing = replacing;
  f.prebuilt = prebuilt;
  f.stands = stands;
  f.workload.admitted = admitted;
  f.workload.evicted = evicted;
  f.workload.finished = finished;
  return f;
}

class DecideAdmissionTest : public ::testing::TestWithParam<AdmissionCase> {};

TEST_P(DecideAdmissionTest, DecidesAsKueuesJobControllersDo) {
  EXPECT_EQ(DecideAdmission(GetParam().facts), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecideAdmissionTest,
    ::testing::Values(
        AdmissionCase{"NoWorkloadCreatesOne", Facts(false, false, false), AdmissionStep::kCreate},
        AdmissionCase{"OneBeingDeletedIsWaitedFor", Facts(false, true, false),
                      AdmissionStep::kWaitForReplacement},
        AdmissionCase{"ReplacementBeforeAdoption", Facts(false, true, true),
                      AdmissionStep::kWaitForReplacement},
        AdmissionCase{"MultiKueuesCopyAdopts", Facts(false, false, true), AdmissionStep::kAdopt},
        AdmissionCase{"FinishedByKueueFailsTheJob",
                      Facts(true, false, false, std::nullopt, true, false, true),
                      AdmissionStep::kFailFinished},
        AdmissionCase{"UnbuildableStops", Facts(true, false, false, std::nullopt),
                      AdmissionStep::kStop},
        AdmissionCase{"AChangedJobReplacesIt", Facts(true, false, false, false, true),
                      AdmissionStep::kReplace},
        AdmissionCase{"AChangedCopyFails", Facts(true, false, true, false, true),
                      AdmissionStep::kFailOutOfSync},
        AdmissionCase{"AdmittedRuns", Facts(true, false, false, true, true), AdmissionStep::kRun},
        AdmissionCase{"EvictedWaits", Facts(true, false, false, true, true, true),
                      AdmissionStep::kWait},
        AdmissionCase{"NotYetAdmittedWaits", Facts(true, false, false, true, false),
                      AdmissionStep::kWait}),
    [](const auto& info) { return info.param.name; });

TEST(PartialWorkersTest, OnlyBetweenOneAndFewerThanWanted) {
  std::map<std::string, PodSetInfo> admission;
  EXPECT_EQ(PartialWorkers(admission, 4), std::nullopt) << "no Worker PodSet";
  admission["worker"].count = 0;
  EXPECT_EQ(PartialWorkers(admission, 4), std::nullopt) << "the assignment does not say";
  admission["worker"].count = 4;
  EXPECT_EQ(PartialWorkers(admission, 4), std::nullopt) << "whole";
  admission["worker"].count = 2;
  EXPECT_EQ(PartialWorkers(admission, 4), 2);
}

// A PodSet Kueue placed by topology: its pods are created gated, with the Workload's name, for
// Kueue's TopologyUngater; one that asked for no topology says so (unconstrained).
TEST(PodSetInfoTest, APodSetPlacedByTopologyIsGatedForKueuesUngater) {
  json wl = Admitted();
  wl["metadata"]["name"] = "job-dist-abc";
  wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = {
      {"levels", {"kubernetes.io/hostname"}},
      {"slices", {{{"domainCount", 1}, {"valuesPerLevel", {{{"universal", "n1"}}}}}}}};
  absl::StatusOr<std::map<std::string, PodSetInfo>> infos = PodSetInfos(wl, Flavors);
  ASSERT_TRUE(infos.ok()) << infos.status();
  const std::string placed = wl["status"]["admission"]["podSetAssignments"][0]["name"];
  const PodSetInfo& info = infos->at(placed);
  EXPECT_TRUE(info.topology);
  json pod = {{"metadata", {{"labels", json::object()}}}, {"spec", json::object()}};
  ASSERT_TRUE(ApplyPodSetInfo(info, &pod).ok());
  EXPECT_EQ(pod["spec"]["schedulingGates"],
            json::parse(R"([{"name": "kueue.x-k8s.io/topology"}])"));
  EXPECT_EQ(pod["metadata"]["annotations"]["kueue.x-k8s.io/workload"], "job-dist-abc");
  EXPECT_EQ(pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-unconstrained-topology"], "true");
  EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/podset"], placed);
  json asked = {{"metadata", {{"annotations", {{kRequiredTopology, "rack"}}}}},
                {"spec", json::object()}};
  ASSERT_TRUE(ApplyPodSetInfo(info, &asked).ok());
  EXPECT_FALSE(asked["metadata"]["annotations"].contains(kUnconstrainedTopology));
  for (const auto& [name, other] : *infos) {
    if (name != placed) EXPECT_FALSE(other.topology) << name;
  }
}

}  // namespace
}  // namespace disttrain::queueing
