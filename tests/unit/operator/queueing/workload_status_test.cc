// The job side of a Workload's status as merge patches: Finished, the release of an evicted
// Workload's quota, PodsReady, reclaimablePods, and the finalizer.
#include "operator/queueing/workload_status.h"

#include "gtest/gtest.h"
#include "operator/queueing/workload.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

json Reserved() {
  return json::parse(R"({
    "metadata": {"name": "w", "resourceVersion": "7", "generation": 1,
                 "finalizers": ["kueue.x-k8s.io/resource-in-use", "other"]},
    "status": {"conditions": [
      {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "in cq"},
      {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}],
      "admission": {"clusterQueue": "cq", "podSetAssignments": []}}})");
}

const json* Cond(const json& patch, const std::string& type) {
  for (const json& c : patch["status"]["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST(WorkloadStatusTest, NothingToSayIsNoPatch) {
  EXPECT_FALSE(JobSideStatusPatch(Reserved(), {}, kNow).has_value());
}

TEST(WorkloadStatusTest, FinishedCarriesTheJobsOutcomeAndTheResourceVersion) {
  JobSide want;
  want.finished = JobSide::Finish{false, "the chief failed"};
  std::optional<json> patch = JobSideStatusPatch(Reserved(), want, kNow);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ((*patch)["metadata"]["resourceVersion"], "7");
  const json* f = Cond(*patch, "Finished");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ((*f)["status"], "True");
  EXPECT_EQ((*f)["reason"], "Failed");
  EXPECT_EQ((*f)["message"], "the chief failed");
  EXPECT_NE(Cond(*patch, "QuotaReserved"), nullptr) << "the whole list is kept (merge patch)";
}

TEST(WorkloadStatusTest, ReleasingAnEvictedWorkloadsQuotaQueuesItAgain) {
  json wl = Reserved();
  wl["status"]["conditions"].push_back(
      {{"type", "Evicted"}, {"status", "True"}, {"reason", "Preempted"}, {"message", "by hi"}});
  JobSide want;
  want.release_quota = true;
  std::optional<json> patch = JobSideStatusPatch(wl, want, kNow);
  ASSERT_TRUE(patch.has_value());
  EXPECT_TRUE((*patch)["status"]["admission"].is_null());
  EXPECT_EQ((*Cond(*patch, "QuotaReserved"))["status"], "False");
  EXPECT_EQ((*Cond(*patch, "QuotaReserved"))["reason"], "Pending");
  EXPECT_EQ((*Cond(*patch, "Admitted"))["reason"], "NoReservation");
  EXPECT_EQ((*Cond(*patch, "Requeued"))["status"], "True");
  EXPECT_EQ((*Cond(*patch, "Requeued"))["reason"], "Preempted");
  // Not evicted: nothing to release.
  EXPECT_FALSE(JobSideStatusPatch(Reserved(), want, kNow).has_value());
}

TEST(WorkloadStatusTest, PodsReadyOnceAndReclaimableOnlyGrows) {
  JobSide want;
  want.pods_ready = true;
  want.reclaimable["worker"] = 2;
  std::optional<json> patch = JobSideStatusPatch(Reserved(), want, kNow);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ((*Cond(*patch, "PodsReady"))["reason"], "Started");
  EXPECT_EQ((*patch)["status"]["reclaimablePods"], json::parse(R"([{"name":"worker","count":2}])"));

  json wl = Reserved();
  wl["status"]["conditions"] = (*patch)["status"]["conditions"];
  wl["status"]["reclaimablePods"] = (*patch)["status"]["reclaimablePods"];
  EXPECT_FALSE(JobSideStatusPatch(wl, want, kNow).has_value()) << "already said";
  want.reclaimable["worker"] = 1;  // Kueue's webhook refuses a smaller count
  EXPECT_FALSE(JobSideStatusPatch(wl, want, kNow).has_value());
}

TEST(WorkloadStatusTest, RemovesOnlyKueuesFinalizer) {
  std::optional<json> patch = RemoveFinalizerPatch(Reserved());
  ASSERT_TRUE(patch.has_value());
  json wl = Reserved();
  wl["metadata"]["resourceVersion"] = "8";  // e.g. the operator's own status write since
  wl["metadata"]["finalizers"].push_back("later");
  EXPECT_EQ(wl.patch(*patch)["metadata"]["finalizers"], json({"other", "later"}));
  json moved = Reserved();
  moved["metadata"]["finalizers"] = {"other", "kueue.x-k8s.io/resource-in-use"};
  EXPECT_ANY_THROW(moved.patch(*patch)) << "the list moved: the test fails, nothing is removed";
  json none = Reserved();
  none["metadata"].erase("finalizers");
  EXPECT_FALSE(RemoveFinalizerPatch(none).has_value());
}

}  // namespace
}  // namespace disttrain::queueing
