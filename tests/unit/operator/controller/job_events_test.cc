#include "operator/controller/job_events.h"

#include <memory>

#include "gtest/gtest.h"
#include "operator/runtime/clock.h"

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

TEST(JobEventsTest, APodThatJustExitedPutsItsJobAheadOfJobsBeingCreated) {
  runtime::FakeClock clock;
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
  runtime::FakeClock clock;
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
  runtime::FakeClock clock;
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
