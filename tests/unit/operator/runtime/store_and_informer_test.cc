#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/errors.h"
#include "operator/runtime/informer.h"
#include "operator/runtime/store.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

ObjectPtr Pod(const std::string& ns, const std::string& name, const std::string& owner = "") {
  json p = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (!owner.empty()) {
    p["metadata"]["ownerReferences"] = {{{"uid", "other"}, {"controller", false}},
                                        {{"uid", owner}, {"controller", true}}};
  }
  return std::make_shared<const json>(p);
}

std::vector<std::string> Names(const std::vector<ObjectPtr>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back((*o)["metadata"]["name"]);
  return out;
}

class StoreTest : public ::testing::TestWithParam<StoreEncoding> {};

TEST_P(StoreTest, IndexesByNamespaceAndControllerOwner) {
  Store s(GetParam());
  s.Upsert(Pod("a", "p1", "job1"));
  s.Upsert(Pod("a", "p2", "job2"));
  s.Upsert(Pod("b", "p3", "job1"));
  EXPECT_THAT(Names(s.ByNamespace("a")), UnorderedElementsAre("p1", "p2"));
  EXPECT_THAT(Names(s.ByControllerUid("job1")), UnorderedElementsAre("p1", "p3"));
  EXPECT_TRUE(s.ByControllerUid("other").empty()) << "only the controller reference indexes";
  EXPECT_EQ(s.Get("b/p3")->value("/metadata/name"_json_pointer, ""), "p3");
}

TEST_P(StoreTest, UpdatesAndRemovalsKeepIndexesRight) {
  Store s(GetParam());
  s.Upsert(Pod("a", "p1", "job1"));
  ObjectPtr old = s.Upsert(Pod("a", "p1", "job2"));
  ASSERT_NE(old, nullptr);
  EXPECT_TRUE(s.ByControllerUid("job1").empty());
  EXPECT_THAT(Names(s.ByControllerUid("job2")), ElementsAre("p1"));
  EXPECT_NE(s.Remove("a/p1"), nullptr);
  EXPECT_EQ(s.Remove("a/p1"), nullptr);
  EXPECT_TRUE(s.ByNamespace("a").empty());
  EXPECT_EQ(s.Size(), 0u);
}

TEST_P(StoreTest, HandsBackWhatWasStoredAndKeysByOwner) {
  Store s(GetParam());
  json pod = *Pod("a", "p1", "job1");
  pod["status"] = {{"phase", "Failed"},
                   {"ready", false},
                   {"restarts", 3},
                   {"exit", -1},
                   {"ratio", 0.5},
                   {"nothing", nullptr},
                   {"message", std::string(300, 'x')},
                   {"list", {1, "two", json::object()}}};
  s.Upsert(std::make_shared<const json>(pod));
  s.Upsert(Pod("a", "p2", "job1"));
  EXPECT_EQ(*s.Get("a/p1"), pod);
  EXPECT_EQ(*s.List().front(), pod);
  EXPECT_THAT(s.KeysByControllerUid("job1"), ElementsAre("a/p1", "a/p2"));
  EXPECT_TRUE(s.KeysByControllerUid("other").empty());
  EXPECT_EQ(*s.Remove("a/p1"), pod);
}

INSTANTIATE_TEST_SUITE_P(Encodings, StoreTest,
                         ::testing::Values(StoreEncoding::kTree, StoreEncoding::kCbor));

struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> events;
  EventHandler Handler() {
    auto name = [](const ObjectPtr& o) { return (*o)["metadata"]["name"].get<std::string>(); };
    return {[this, name](const ObjectPtr& o) { Add("add " + name(o)); },
            [this, name](const ObjectPtr&, const ObjectPtr& n) { Add("update " + name(n)); },
            [this, name](const ObjectPtr& o) { Add("delete " + name(o)); }};
  }
  void Add(std::string e) {
    absl::MutexLock l(&mu);
    events.push_back(std::move(e));
  }
  std::vector<std::string> Get() {
    absl::MutexLock l(&mu);
    return events;
  }
};

kube::WatchEvent Event(kube::WatchEvent::Type t, const std::string& name, const std::string& rv) {
  return {t,
          {{"metadata",
            {{"name", name},
             {"namespace", "ns"},
             {"resourceVersion", rv},
             {"managedFields", json::array({1})}}}}};
}

TEST(InformerTest, ListsThenDeliversWatchEventsInOrder) {
  testing::FakeKubeClient client;
  client.Put(kube::kPods, *Pod("ns", "existing"));
  using T = kube::WatchEvent::Type;
  client.QueueWatch(std::make_pair(
      std::vector<kube::WatchEvent>{Event(T::kAdded, "new", "201"), Event(T::kBookmark, "", "202"),
                                    Event(T::kModified, "new", "203"),
                                    Event(T::kDeleted, "existing", "204")},
      absl::CancelledError("done")));
  Informer informer(&client, {kube::kPods, "ns", "app=x"});
  Recorder rec;
  informer.AddHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(5)));
  for (int i = 0; i < 200 && rec.Get().size() < 4; ++i) absl::SleepFor(absl::Milliseconds(10));
  informer.Stop();
  EXPECT_THAT(rec.Get(), ElementsAre("add existing", "add new", "update new", "delete existing"));
  EXPECT_THAT(informer.store().Keys(), ElementsAre("ns/new"));
  EXPECT_FALSE(informer.store().Get("ns/new")->at("metadata").contains("managedFields"));
}

TEST(InformerTest, ListsAgainWhenTheWatchSaysGone) {
  testing::FakeKubeClient client;
  client.Put(kube::kPods, *Pod("ns", "a"));
  Informer informer(&client, {kube::kPods, "ns", ""});
  Recorder rec;
  informer.AddHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(5)));
  EXPECT_EQ(informer.list_count(), 1);
  client.Put(kube::kPods, *Pod("ns", "b"));  // changed while the watch was gone
  client.QueueWatch(std::make_pair(
      std::vector<kube::WatchEvent>{},
      kube::StatusFromHttp(410, R"({"kind":"Status","reason":"Expired"})", "watch")));
  for (int i = 0; i < 300 && informer.list_count() < 2; ++i) absl::SleepFor(absl::Milliseconds(10));
  informer.Stop();
  EXPECT_GE(informer.list_count(), 2);
  EXPECT_EQ(informer.store().Size(), 2u);
  std::vector<std::string> events = rec.Get();
  EXPECT_NE(std::find(events.begin(), events.end(), "add b"), events.end());
}

}  // namespace
}  // namespace disttrain::runtime
