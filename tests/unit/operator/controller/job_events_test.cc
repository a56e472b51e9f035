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

}  // namespace
}  // namespace disttrain::controller
