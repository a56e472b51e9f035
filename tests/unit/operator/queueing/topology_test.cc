// TopologyRequest (topology.h): a role's topology annotations become its PodSet's
// topologyRequest as Kueue's own job integrations build it; what Kueue's webhooks would refuse is
// refused, named.
#include "operator/queueing/topology.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Pod(const std::map<std::string, std::string>& annotations) {
  json pod = {{"metadata", {{"annotations", json::object()}}}};
  for (const auto& [k, v] : annotations) pod["metadata"]["annotations"][k] = v;
  return pod;
}

constexpr char kIndex[] = "disttrain.io/replica-index";
constexpr char kRack[] = "topology.example.com/rack";

struct RequestCase {
  std::string name;
  std::map<std::string, std::string> annotations;
  json want;  // null: no request
};

class TopologyRequestTest : public ::testing::TestWithParam<RequestCase> {};

TEST_P(TopologyRequestTest, IsWhatKueuesIntegrationsWrite) {
  absl::StatusOr<std::optional<json>> got = TopologyRequest(Pod(GetParam().annotations), 4, kIndex);
  ASSERT_TRUE(got.ok()) << got.status();
  if (GetParam().want.is_null()) {
    EXPECT_FALSE(got->has_value());
  } else {
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ(**got, GetParam().want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, TopologyRequestTest,
    ::testing::Values(RequestCase{"None", {{"other", "x"}}, json()},
                      RequestCase{"Required",
                                  {{kRequiredTopology, kRack}},
                                  {{"required", kRack}, {"podIndexLabel", kIndex}}},
                      RequestCase{"Preferred",
                                  {{kPreferredTopology, kRack}},
                                  {{"preferred", kRack}, {"podIndexLabel", kIndex}}},
                      RequestCase{"Unconstrained",
                                  {{kUnconstrainedTopology, "true"}},
                                  {{"unconstrained", true}, {"podIndexLabel", kIndex}}},
                      RequestCase{"GroupedWithAnother",
                                  {{kRequiredTopology, kRack}, {kPodSetGroupName, "ps-workers"}},
                                  {{"required", kRack},
                                   {"podSetGroupName", "ps-workers"},
                                   {"podIndexLabel", kIndex}}},
                      RequestCase{"Slices",
                                  {{kSliceRequiredTopology, kRack}, {kSliceSize, "2"}},
                                  {{"podSetSliceRequiredTopology", kRack},
                                   {"podSetSliceSize", 2},
                                   {"podIndexLabel", kIndex}}}),
    [](const auto& info) { return info.param.name; });

struct RefusedCase {
  std::string name;
  std::map<std::string, std::string> annotations;
  std::string message;
};

class RefusedTopologyTest : public ::testing::TestWithParam<RefusedCase> {};

TEST_P(RefusedTopologyTest, NamesTheAnnotation) {
  absl::StatusOr<std::optional<json>> got = TopologyRequest(Pod(GetParam().annotations), 4, kIndex);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Table, RefusedTopologyTest,
    ::testing::Values(
        RefusedCase{"TwoKinds",
                    {{kRequiredTopology, kRack}, {kPreferredTopology, kRack}},
                    "at most one of"},
        RefusedCase{"UnconstrainedNotABool",
                    {{kUnconstrainedTopology, "yes"}},
                    "must be \"true\" or \"false\", got \"yes\""},
        RefusedCase{"SliceWithoutSize", {{kSliceRequiredTopology, kRack}}, "set both or neither"},
        RefusedCase{"SliceLargerThanTheRole",
                    {{kSliceRequiredTopology, kRack}, {kSliceSize, "5"}},
                    "from 1 to the role's 4 replicas, got \"5\""},
        RefusedCase{"GroupWithoutALevel",
                    {{kPodSetGroupName, "g"}, {kUnconstrainedTopology, "true"}},
                    "podset-group-name: needs"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::queueing
