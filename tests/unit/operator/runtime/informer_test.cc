#include "operator/runtime/informer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/errors.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

json PodJson(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
}

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
  client.Put(kube::kPods, PodJson("ns", "existing"));
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
  client.Put(kube::kPods, PodJson("ns", "a"));
  Informer informer(&client, {kube::kPods, "ns", ""});
  Recorder rec;
  informer.AddHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(absl::Seconds(5)));
  EXPECT_EQ(informer.list_count(), 1);
  client.Put(kube::kPods, PodJson("ns", "b"));  // changed while the watch was gone
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
