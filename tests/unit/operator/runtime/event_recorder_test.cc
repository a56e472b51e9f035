#include "operator/runtime/event_recorder.h"

#include "gtest/gtest.h"
#include "operator/kube/resource.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using nlohmann::json;

const json kJob = {{"apiVersion", "disttrain.io/v1"},
                   {"kind", "DistributedTraining"},
                   {"metadata", {{"name", "dist"}, {"namespace", "default"}, {"uid", "u1"}}}};

int Requests(const testing::FakeKubeClient& client, const std::string& verb) {
  int n = 0;
  for (const auto& a : client.actions()) n += a.verb == verb && a.resource == "events";
  return n;
}

TEST(EventRecorderTest, TheSameEventAgainBumpsTheCountOfTheFirst) {
  testing::FakeKubeClient client;
  FakeClock clock;
  KubeEventRecorder recorder(&client, "disttrain-operator", &clock);
  recorder.Record(kJob, EventType::kWarning, "FailedCreatePod", "exceeded quota");
  clock.Advance(absl::Seconds(3));
  recorder.Record(kJob, EventType::kWarning, "FailedCreatePod", "exceeded quota");
  recorder.Record(kJob, EventType::kWarning, "FailedCreatePod", "exceeded quota");
  std::vector<json> events = client.Objects(kube::kEvents);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 3);
  EXPECT_NE(events[0]["firstTimestamp"], events[0]["lastTimestamp"]);
  EXPECT_EQ(Requests(client, "create"), 1);
  EXPECT_EQ(Requests(client, "patch"), 2);
}

TEST(EventRecorderTest, ADifferentMessageReasonOrObjectIsANewEvent) {
  testing::FakeKubeClient client;
  FakeClock clock;
  KubeEventRecorder recorder(&client, "disttrain-operator", &clock);
  json other = kJob;
  other["metadata"]["uid"] = "u2";
  recorder.Record(kJob, EventType::kWarning, "FailedCreatePod", "exceeded quota");
  recorder.Record(kJob, EventType::kWarning, "FailedCreatePod", "another message");
  recorder.Record(kJob, EventType::kNormal, "SuccessfulCreatePod", "exceeded quota");
  recorder.Record(other, EventType::kWarning, "FailedCreatePod", "exceeded quota");
  EXPECT_EQ(client.Objects(kube::kEvents).size(), 4u);
}

TEST(EventRecorderTest, AfterTheWindowOrOnceTheEventIsGoneANewOneIsCreated) {
  testing::FakeKubeClient client;
  FakeClock clock;
  KubeEventRecorder recorder(&client, "disttrain-operator", &clock);
  recorder.Record(kJob, EventType::kWarning, "R", "m");
  clock.Advance(KubeEventRecorder::kAggregationWindow + absl::Seconds(1));
  recorder.Record(kJob, EventType::kWarning, "R", "m");
  ASSERT_EQ(client.Objects(kube::kEvents).size(), 2u);
  for (const json& e : client.Objects(kube::kEvents)) {
    ASSERT_TRUE(client.Delete(kube::kEvents, "default", e["metadata"]["name"], {}).ok());
  }
  recorder.Record(kJob, EventType::kWarning, "R", "m");  // its Event expired on the server
  std::vector<json> events = client.Objects(kube::kEvents);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 1);
}

}  // namespace
}  // namespace disttrain::runtime
