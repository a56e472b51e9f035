#include "operator/runtime/store.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

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

}  // namespace
}  // namespace disttrain::runtime
