// The protobuf projections against the JSON ones, on objects a real kube-apiserver served in both
// encodings at the same resourceVersion (testdata/capture_pods.py writes them).
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "operator/kube/internal/rest_streams.h"
#include "operator/kube/protobuf.h"
#include "operator/policy/pod_projection.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

std::string Read(const std::string& name) {
  std::ifstream in(std::string(DISTTRAIN_TESTDATA_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the operator caches from the protobuf fixture: the decoded projection plus the
// envelope's apiVersion and kind (as the REST client adds them to a watched object).
json FromProtobuf(const std::string& name, bool pod) {
  const std::string bytes = Read(name + ".pb");  // `object` views into it
  absl::StatusOr<kube::ProtoObject> object = kube::ParseProtoObject(bytes);
  EXPECT_TRUE(object.ok()) << object.status();
  if (!object.ok()) return nullptr;
  absl::StatusOr<json> decoded =
      pod ? DecodePodProjection(object->raw) : DecodeServiceProjection(object->raw);
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  if (!decoded.ok()) return nullptr;
  (*decoded)["apiVersion"] = object->api_version;
  (*decoded)["kind"] = object->kind;
  return *decoded;
}

class PodProjectionProtoTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PodProjectionProtoTest, DecodesWhatProjectPodKeepsOfTheSameObjectInJson) {
  const json from_json = ProjectPod(json::parse(Read(GetParam() + ".json")));
  EXPECT_EQ(FromProtobuf(GetParam(), /*pod=*/true), from_json);
}

INSTANTIATE_TEST_SUITE_P(ServedPods, PodProjectionProtoTest,
                         ::testing::Values("running", "succeeded", "failed", "restarted",
                                           "deleting", "pending", "evicted", "pulling"));

TEST(PodProjectionProtoFixturesTest, CoverEveryFieldTheProjectionKeeps) {
  // Without this, a fixture that lost its interesting part would still pass the equality.
  const json running = ProjectPod(json::parse(Read("running.json")));
  EXPECT_TRUE(running["metadata"].contains("ownerReferences"));
  EXPECT_TRUE(running["metadata"].contains("labels"));
  EXPECT_EQ(running["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(running["spec"]["containers"].size(), 2u);
  const json succeeded = ProjectPod(json::parse(Read("succeeded.json")));
  EXPECT_EQ(succeeded["status"]["containerStatuses"][0]["state"]["terminated"]["message"],
            R"({"globalStep":1500,"loss":0.41})");
  const json failed = ProjectPod(json::parse(Read("failed.json")));
  EXPECT_EQ(failed["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137);
  const json restarted = ProjectPod(json::parse(Read("restarted.json")));
  EXPECT_GE(restarted["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(restarted["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 3);
  EXPECT_TRUE(
      ProjectPod(json::parse(Read("deleting.json")))["metadata"].contains("deletionTimestamp"));
  const json pending = ProjectPod(json::parse(Read("pending.json")));
  EXPECT_FALSE(pending["status"].contains("containerStatuses"));
  EXPECT_EQ(pending["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(pending["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_NE(pending["status"]["conditions"][0]["message"].get<std::string>().find(
                "0/1 nodes are available"),
            std::string::npos);
  const json pulling = ProjectPod(json::parse(Read("pulling.json")));
  EXPECT_EQ(pulling["status"]["containerStatuses"][0]["state"],
            json({{"waiting",
                   {{"reason", "ImagePullBackOff"},
                    {"message", "Back-off pulling image \"registry.example/trainer:1\""}}}}));
  const json evicted = ProjectPod(json::parse(Read("evicted.json")));
  EXPECT_EQ(evicted["status"]["conditions"][0], json({{"type", "DisruptionTarget"},
                                                      {"status", "True"},
                                                      {"reason", "DeletionByTaintManager"}}));
  EXPECT_TRUE(evicted["metadata"].contains("deletionTimestamp"));
}

TEST(ServiceProjectionProtoTest, DecodesTheMetadataOfAServedService) {
  EXPECT_EQ(FromProtobuf("service-running", /*pod=*/false),
            ProjectService(json::parse(Read("service-running.json"))));
}

TEST(PodProjectionProtoTest, AServedListDecodesToTheSamePods) {
  const std::string bytes = Read("pods.list.pb");
  absl::StatusOr<kube::ProtoObject> envelope = kube::ParseProtoObject(bytes);
  ASSERT_TRUE(envelope.ok()) << envelope.status();
  EXPECT_EQ(envelope->kind, "PodList");
  absl::StatusOr<kube::ProtoList> list = kube::ParseProtoList(envelope->raw);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_FALSE(list->resource_version.empty());
  std::set<std::string> names;
  for (std::string_view item : list->items) {
    absl::StatusOr<json> pod = DecodePodProjection(item);
    ASSERT_TRUE(pod.ok()) << pod.status();
    names.insert((*pod)["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"deleting", "failed", "pending", "restarted", "running",
                                          "succeeded"}));
}

TEST(PodProjectionProtoTest, AServedWatchStreamSplitsIntoEventsOfDecodablePods) {
  const std::string watch = Read("pods.watch.pb");  // as bytes, as a response body is read
  kube::BodyReader reader(concurrency::streams::bytestream::open_istream(
      std::vector<uint8_t>(watch.begin(), watch.end())));
  std::string frame;
  std::set<std::string> added;
  while (reader.NextFrame(&frame)) {
    absl::StatusOr<kube::ProtoWatchEvent> event = kube::ParseProtoWatchEvent(frame);
    ASSERT_TRUE(event.ok()) << event.status();
    absl::StatusOr<kube::ProtoObject> object = kube::ParseProtoObject(event->object);
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_EQ(object->kind, "Pod");
    absl::StatusOr<json> pod = DecodePodProjection(object->raw);
    ASSERT_TRUE(pod.ok()) << pod.status();
    if (event->type == "ADDED") added.insert((*pod)["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(added.size(), 6u);
}

TEST(PodProjectionProtoTest, TruncatedPodsAreDataLossNotCrashes) {
  const std::string bytes = Read("succeeded.pb");
  absl::StatusOr<kube::ProtoObject> object = kube::ParseProtoObject(bytes);
  ASSERT_TRUE(object.ok()) << object.status();
  int failures = 0;
  for (size_t cut = 1; cut < object->raw.size(); cut += 7) {
    absl::StatusOr<json> pod = DecodePodProjection(object->raw.substr(0, cut));
    if (!pod.ok()) {
      EXPECT_EQ(pod.status().code(), absl::StatusCode::kDataLoss);
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace disttrain::policy
