#include "operator/controller/job_events.h"

#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace disttrain::controller {
namespace {

using nlohmann::json;

runtime::ObjectPtr Pod(const std::string& job, const std::string& phase) {
  json pod = {{"metadata",
               {{"namespace", "ns"},
                {"name", job + "-chief-0"},
                {"labels", {{"disttrain.io/job-name", job}}}}},
              {"status", {{"phase", phase}}}};
  return std::make_shared<const json>(std::move(pod));
}

runtime::WorkQueueOptions Manual() {
  runtime::WorkQueueOptions o;
  o.start_timer = false;
  return o;
}

TEST(JobEventsTest, OwnerKeyIsTheJobLabelInThePodsNamespace) {
  EXPECT_EQ(OwnerKey(Pod("mnist", "Running")), "ns/mnist");
  EXPECT_EQ(OwnerKey(std::make_shared<const json>(json{{"metadata", {{"name", "x"}}}})), "");
}

runtime::ObjectPtr Job(const std::string& rv, json spec, json status,
                       json labels = json::object()) {
  json job = {{"metadata",
               {{"namespace", "ns"},
                {"name", "mnist"},
                {"resourceVersion", rv},
                {"generation", 1},
                {"labels", std::move(labels)}}},
              {"spec", std::move(spec)},
              {"status", std::move(status)}};
  return std::make_shared<const json>(std::move(job));
}

TEST(JobEventsTest, OwnerKeyNeedsAJobLabelThatIsANonEmptyString) {
  auto with_labels = [](json labels) {
    return std::make_shared<const json>(
        json{{"metadata", {{"namespace", "ns"}, {"labels", std::move(labels)}}}});
  };
  EXPECT_EQ(OwnerKey(with_labels({{"disttrain.io/job-name", ""}})), "");
  EXPECT_EQ(OwnerKey(with_labels({{"disttrain.io/job-name", 7}})), "");
  EXPECT_EQ(OwnerKey(with_labels({{"other", "x"}})), "");
  EXPECT_EQ(OwnerKey(with_labels("not an object")), "");
  EXPECT_EQ(OwnerKey(with_labels({{"disttrain.io/job-name", "j"}})), "ns/j");
}

TEST(JobEventsTest, OnlyAStatusChangeIsNoReasonForAPass) {
  const json spec = {{"replicaSpecs", {{"Chief", {{"replicas", 1}}}}}};
  const json running = {{"state", "Running"}};
  const json done = {{"state", "Succeeded"}};
  // The operator's own status write coming back: a new version, only the status differs.
  EXPECT_TRUE(StatusOnlyChange(Job("1", spec, running), Job("2", spec, done)));
  // A relist re-delivering the same version is a resync and counts.
  EXPECT_FALSE(StatusOnlyChange(Job("2", spec, done), Job("2", spec, done)));
  // The spec (e.g. suspend), labels, a deletion, finalizers: all count.
  json suspended = spec;
  suspended["runPolicy"]["suspend"] = true;
  EXPECT_FALSE(StatusOnlyChange(Job("1", spec, running), Job("2", suspended, running)));
  EXPECT_FALSE(StatusOnlyChange(Job("1", spec, running), Job("2", spec, running, {{"a", "b"}})));
  json deleting = *Job("2", spec, running);
  deleting["metadata"]["deletionTimestamp"] = "2026-11-24T00:00:00Z";
  EXPECT_FALSE(StatusOnlyChange(Job("1", spec, running), std::make_shared<const json>(deleting)));
  json finalized = *Job("1", spec, running);
  finalized["metadata"]["finalizers"] = {"x"};
  json unfinalized = finalized;
  unfinalized["metadata"]["resourceVersion"] = "2";
  unfinalized["metadata"].erase("finalizers");
  EXPECT_FALSE(StatusOnlyChange(std::make_shared<const json>(finalized),
                                std::make_shared<const json>(unfinalized)));
}

TEST(JobEventsTest, JobsQueueForEveryChangeButTheirOwnStatus) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::EventHandler jobs = EnqueueJobs(&queue);
  const json spec = {{"replicaSpecs", {{"Chief", {{"replicas", 1}}}}}};
  jobs.on_update(Job("1", spec, {{"state", "Created"}}), Job("2", spec, {{"state", "Running"}}));
  EXPECT_EQ(queue.Len(), 0) << "a status-only change queued the job";
  jobs.on_update(Job("2", spec, {{"state", "Running"}}),
                 Job("3", {{"x", 1}}, {{"state", "Running"}}));
  EXPECT_EQ(queue.Get(), "ns/mnist");
  queue.Done("ns/mnist");
  jobs.on_add(Job("4", spec, json::object()));
  EXPECT_EQ(queue.Get(), "ns/mnist");
  queue.Done("ns/mnist");
  jobs.on_delete(Job("5", spec, json::object()));
  EXPECT_EQ(queue.Get(), "ns/mnist");
}

TEST(JobEventsTest, WorkloadsQueueTheirJobWhenKueueChangesThemNotWhenTheyAppear) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::EventHandler workloads = EnqueueWorkloadOwners(&queue);
  runtime::ObjectPtr wl = Pod("mnist", "");  // any object with the job-name label
  EXPECT_EQ(workloads.on_add, nullptr) << "the pass that created it needs no second pass";
  json ready = *wl;
  ready["status"]["conditions"] = {{{"type", "PodsReady"}, {"status", "True"}}};
  workloads.on_update(wl, std::make_shared<const json>(ready));
  EXPECT_EQ(queue.Len(), 0) << "the operator's own PodsReady queued a pass";
  json admitted = ready;
  admitted["status"]["conditions"].push_back({{"type", "Admitted"}, {"status", "True"}});
  workloads.on_update(wl, std::make_shared<const json>(admitted));
  EXPECT_EQ(queue.Get(), "ns/mnist");
  queue.Done("ns/mnist");
  workloads.on_delete(wl);
  EXPECT_EQ(queue.Get(), "ns/mnist");
}

TEST(JobEventsTest, ANamespaceQueuesEveryJobOfItsWhenItAppearsOrChanges) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::Store jobs;
  for (const char* key : {"team-a/one", "team-a/two", "team-b/three"}) {
    std::string k = key;
    jobs.Upsert(std::make_shared<const json>(
        json{{"metadata", {{"namespace", k.substr(0, 6)}, {"name", k.substr(7)}}}}));
  }
  runtime::EventHandler namespaces = EnqueueNamespaceJobs(&queue, &jobs);
  auto ns = std::make_shared<const json>(json{{"metadata", {{"name", "team-a"}}}});
  namespaces.on_add(ns);
  EXPECT_EQ(queue.Len(), 2);
  std::set<std::string> got;
  for (int i = 0; i < 2; ++i) {
    got.insert(*queue.Get());
    queue.Done(*got.rbegin());
  }
  EXPECT_EQ(got, (std::set<std::string>{"team-a/one", "team-a/two"}));
  namespaces.on_update(ns, ns);  // relabelled: in or out of the selection
  EXPECT_EQ(queue.Len(), 2);
}

TEST(JobEventsTest, APodThatJustExitedPutsItsJobAheadOfJobsBeingCreated) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::EventHandler pods = EnqueuePodOwners(&queue);
  pods.on_add(Pod("new-1", "Pending"));
  pods.on_add(Pod("new-2", "Pending"));
  pods.on_update(Pod("done", "Running"), Pod("done", "Succeeded"));
  pods.on_update(Pod("failed", "Running"), Pod("failed", "Failed"));
  EXPECT_EQ(queue.Get(), "ns/failed");
  EXPECT_EQ(queue.Get(), "ns/done");
  EXPECT_EQ(queue.Get(), "ns/new-1");
  EXPECT_EQ(queue.Get(), "ns/new-2");
}

TEST(JobEventsTest, OtherPodChangesQueueInArrivalOrder) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::EventHandler pods = EnqueuePodOwners(&queue);
  pods.on_add(Pod("a", "Pending"));
  pods.on_update(Pod("b", "Pending"), Pod("b", "Running"));
  // Already exited: a later status change of an exited pod is no news.
  pods.on_update(Pod("c", "Succeeded"), Pod("c", "Succeeded"));
  pods.on_delete(Pod("d", "Succeeded"));
  EXPECT_EQ(queue.Get(), "ns/a");
  EXPECT_EQ(queue.Get(), "ns/b");
  EXPECT_EQ(queue.Get(), "ns/c");
  EXPECT_EQ(queue.Get(), "ns/d");
}

TEST(JobEventsTest, PodChangesOtherThanExitsAndDeletesAreBatched) {
  FakeClock clock;
  runtime::WorkQueue queue(Manual(), &clock);
  runtime::EventHandler pods = EnqueuePodOwners(&queue, absl::Milliseconds(500));
  // Seven pods of one job created and then running: one pass, 500 ms after the first change.
  for (int i = 0; i < 7; ++i) pods.on_add(Pod("batch", "Pending"));
  clock.Advance(absl::Milliseconds(300));
  for (int i = 0; i < 7; ++i) pods.on_update(Pod("batch", "Pending"), Pod("batch", "Running"));
  EXPECT_EQ(queue.Len(), 0);
  // Exits and deletes do not wait.
  pods.on_update(Pod("exited", "Running"), Pod("exited", "Succeeded"));
  pods.on_delete(Pod("deleted", "Failed"));
  EXPECT_EQ(queue.Get(), "ns/exited");
  EXPECT_EQ(queue.Get(), "ns/deleted");
  EXPECT_EQ(queue.ProcessDue(clock.Now()), absl::Milliseconds(200));
  clock.Advance(absl::Milliseconds(200));
  queue.ProcessDue(clock.Now());
  EXPECT_EQ(queue.Get(), "ns/batch");
  queue.Done("ns/batch");
  EXPECT_EQ(queue.Len(), 0);
  EXPECT_EQ(queue.ProcessDue(clock.Now()), absl::InfiniteDuration()) << "one pass, not fourteen";
}

}  // namespace
}  // namespace disttrain::controller
