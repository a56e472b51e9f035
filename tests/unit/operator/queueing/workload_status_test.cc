// The job side of a Workload's status as merge patches: Finished, the release of an evicted
// Workload's quota, PodsReady, reclaimablePods, and the finalizer.
#include "operator/queueing/workload_status.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

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

struct JobSideCase {
  std::string name;
  JobSideFacts facts;
  bool want_release;
  std::optional<JobSide> want_write;
};

JobSideFacts Reserving() {
  JobSideFacts f;
  f.workload.quota_reserved = true;
  f.workload.admitted = true;
  f.workload.has_finalizer = true;
  return f;
}

JobSideCase Case(std::string name, std::function<void(JobSideFacts*)> set, bool release,
                 std::optional<JobSide> write) {
  JobSideFacts f = Reserving();
  set(&f);
  return {std::move(name), f, release, std::move(write)};
}

JobSide Finished(bool ok, std::string message) {
  JobSide s;
  s.finished = JobSide::Finish{ok, std::move(message)};
  return s;
}

JobSide Release() {
  JobSide s;
  s.release_quota = true;
  return s;
}

JobSide Running(std::optional<bool> ready, std::map<std::string, int> reclaimable) {
  JobSide s;
  s.pods_ready = ready;
  s.reclaimable = std::move(reclaimable);
  return s;
}

bool operator==(const JobSide& a, const JobSide& b) {
  return a.release_quota == b.release_quota && a.pods_ready == b.pods_ready &&
         a.reclaimable == b.reclaimable && a.finished.has_value() == b.finished.has_value() &&
         (!a.finished || (a.finished->succeeded == b.finished->succeeded &&
                          a.finished->message == b.finished->message));
}

class DecideJobSideTest : public ::testing::TestWithParam<JobSideCase> {};

TEST_P(DecideJobSideTest, DecidesAsKueuesJobControllersDo) {
  const JobSideDecision d = DecideJobSide(GetParam().facts);
  EXPECT_EQ(d.release_finalizer, GetParam().want_release);
  ASSERT_EQ(d.write.has_value(), GetParam().want_write.has_value());
  if (d.write) EXPECT_TRUE(*d.write == *GetParam().want_write);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecideJobSideTest,
    ::testing::Values(Case(
                          "AFinishedWorkloadOnlyLosesItsFinalizer",
                          [](JobSideFacts* f) {
                            f->workload.finished = true;
                            f->job_finished = true;
                          },
                          true, std::nullopt),
                      Case(
                          "AFinishedWorkloadWithoutFinalizerNothing",
                          [](JobSideFacts* f) {
                            f->workload.finished = true;
                            f->workload.has_finalizer = false;
                          },
                          false, std::nullopt),
                      Case(
                          "AFinishedJobWaitsForItsPods",
                          [](JobSideFacts* f) {
                            f->job_finished = true;
                            f->pods_live = true;
                          },
                          false, std::nullopt),
                      Case(
                          "AFinishedJobKeepingItsPodsFinishesAtOnce",
                          [](JobSideFacts* f) {
                            f->job_finished = true;
                            f->pods_live = true;
                            f->keeps_pods = true;
                            f->finish_message = "kept";
                          },
                          false, Finished(false, "kept")),
                      Case(
                          "AFinishedJobWithoutPodsFinishesIt",
                          [](JobSideFacts* f) {
                            f->job_finished = true;
                            f->job_succeeded = true;
                            f->finish_message = "the chief succeeded";
                          },
                          false, Finished(true, "the chief succeeded")),
                      Case(
                          "AHeldJobWithoutPodsGivesItsQuotaBack",
                          [](JobSideFacts* f) { f->release_quota = true; }, false, Release()),
                      Case(
                          "AnAdmittedJobReportsReadinessAndReclaimablePods",
                          [](JobSideFacts* f) {
                            f->admitted = true;
                            f->pods_ready = true;
                            f->reclaimable = {{"worker", 2}};
                          },
                          false, Running(true, {{"worker", 2}})),
                      Case(
                          "WithoutPodsReadyOnlyReclaimable",
                          [](JobSideFacts* f) {
                            f->admitted = true;
                            f->reclaimable = {{"ps", 1}};
                          },
                          false, Running(std::nullopt, {{"ps", 1}})),
                      Case(
                          "NotAdmittedNothing", [](JobSideFacts*) {}, false, std::nullopt),
                      Case(
                          "AManagerCopyReleasesAnEvictedReservationAtOnce",
                          [](JobSideFacts* f) {
                            f->runs_elsewhere = true;
                            f->workload.evicted = true;
                            f->admitted = true;
                          },
                          false, Release()),
                      Case(
                          "AManagerCopyLeavesTheRestToMultiKueue",
                          [](JobSideFacts* f) {
                            f->runs_elsewhere = true;
                            f->job_finished = true;
                            f->admitted = true;
                          },
                          false, std::nullopt)),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::queueing
