#include "operator/runtime/background_event_recorder.h"

#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "operator/kube/resource.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using nlohmann::json;

json Job(const std::string& name) {
  return {{"apiVersion", "disttrain.io/v1"},
          {"kind", "DistributedTraining"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
          {"status", {{"state", "Running"}}}};
}

// Remembers what it was handed; optionally blocks the first call until released.
class Recording : public EventRecorder {
 public:
  void Record(const json& object, EventType, const std::string& reason,
              const std::string&) override {
    if (block_first_ && calls_.empty()) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    calls_.push_back({object, reason});
  }
  struct Call {
    json object;
    std::string reason;
  };
  bool block_first_ = false;
  absl::Notification entered_, release_;
  std::vector<Call> calls_;  // read after Flush
};

TEST(BackgroundEventRecorderTest, HandsEventsOverInOrderWithTheNamesAnEventNeeds) {
  Recording inner;
  BackgroundEventRecorder recorder(&inner);
  for (int i = 0; i < 20; ++i) {
    recorder.Record(Job("j" + std::to_string(i)), EventType::kNormal, "R" + std::to_string(i), "m");
  }
  recorder.Flush();
  ASSERT_EQ(inner.calls_.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(inner.calls_[i].reason, "R" + std::to_string(i));
  const json& o = inner.calls_[3].object;
  EXPECT_EQ(o["kind"], "DistributedTraining");
  EXPECT_EQ(o["metadata"]["uid"], "j3-uid");
  EXPECT_FALSE(o.contains("status"));  // the queue holds names, not whole jobs
}

TEST(BackgroundEventRecorderTest, RecordDoesNotWaitForTheApiAndAFullQueueDrops) {
  Recording inner;
  inner.block_first_ = true;
  BackgroundEventRecorder recorder(&inner, /*capacity=*/3);
  recorder.Record(Job("a"), EventType::kNormal, "first", "m");
  inner.entered_.WaitForNotification();  // the API call of the first is "in flight"
  for (int i = 0; i < 5; ++i) recorder.Record(Job("b"), EventType::kNormal, "queued", "m");
  inner.release_.Notify();
  recorder.Flush();
  EXPECT_EQ(inner.calls_.size(), 4u);  // the first, then the 3 that fitted
}

TEST(BackgroundEventRecorderTest, RecordsThroughTheKubeRecorder) {
  testing::FakeKubeClient client;
  FakeClock clock;
  KubeEventRecorder kube(&client, "disttrain-operator", &clock);
  BackgroundEventRecorder recorder(&kube);
  recorder.Record(Job("dist"), EventType::kWarning, "FailedCreatePod", "exceeded quota");
  recorder.Record(Job("dist"), EventType::kWarning, "FailedCreatePod", "exceeded quota");
  recorder.Flush();
  std::vector<json> events = client.Objects(kube::kEvents);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 2);
  EXPECT_EQ(events[0]["involvedObject"]["uid"], "dist-uid");
}

}  // namespace
}  // namespace disttrain::runtime
