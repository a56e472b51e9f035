// The names of roles and policies (types.h) as the CRD spells them, and how role names parse.
#include "operator/api/types.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::api {
namespace {

using ::testing::HasSubstr;

struct RoleCase {
  ReplicaType type;
  std::string key;   // in spec.replicaSpecs
  std::string role;  // in names and labels
};

class ReplicaTypeTest : public ::testing::TestWithParam<RoleCase> {};

TEST_P(ReplicaTypeTest, KeyAndRoleNameTheTypeBothWays) {
  const RoleCase& c = GetParam();
  EXPECT_EQ(ReplicaTypeKey(c.type), c.key);
  EXPECT_EQ(ReplicaTypeRole(c.type), c.role);
  absl::StatusOr<ReplicaType> parsed = ParseReplicaTypeKey(c.key);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, c.type);
  EXPECT_EQ(ParseRoleName(c.role), c.type);
}

INSTANTIATE_TEST_SUITE_P(Roles, ReplicaTypeTest,
                         ::testing::Values(RoleCase{ReplicaType::kChief, "Chief", "chief"},
                                           RoleCase{ReplicaType::kPS, "PS", "ps"},
                                           RoleCase{ReplicaType::kWorker, "Worker", "worker"},
                                           RoleCase{ReplicaType::kEvaluator, "Evaluator",
                                                    "evaluator"}),
                         [](const auto& info) { return std::string(info.param.key); });

TEST(ReplicaTypeTest, UnknownKeysAreRejectedNamingTheFourKeys) {
  absl::StatusOr<ReplicaType> lower = ParseReplicaTypeKey("worker");
  ASSERT_FALSE(lower.ok());
  EXPECT_EQ(lower.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lower.status().message(),
            "unknown role \"worker\": replicaSpecs keys must be Chief, PS, Worker or Evaluator");
  EXPECT_THAT(std::string(ParseReplicaTypeKey("Master").status().message()),
              HasSubstr("(Master is TFJob's legacy name: use Chief)"));
  EXPECT_EQ(ParseRoleName("Worker"), std::nullopt) << "labels carry the lower-case role";
}

TEST(ReplicaTypeTest, ATfJobsChiefIsNamedMaster) {
  JobSpec spec;
  EXPECT_EQ(RoleName(spec, ReplicaType::kChief), "chief");
  EXPECT_EQ(KeyName(spec, ReplicaType::kChief), "Chief");
  spec.chief_is_master = true;
  EXPECT_EQ(RoleName(spec, ReplicaType::kChief), "master");
  EXPECT_EQ(KeyName(spec, ReplicaType::kChief), "Master");
  EXPECT_EQ(RoleName(spec, ReplicaType::kWorker), "worker");
  EXPECT_EQ(ParseRoleName("master"), ReplicaType::kChief) << "a TFJob's pods are adopted";
}

TEST(PolicyNamesTest, AreTheCrdsEnumValues) {
  EXPECT_EQ(RestartPolicyName(RestartPolicy::kNever), "Never");
  EXPECT_EQ(RestartPolicyName(RestartPolicy::kOnFailure), "OnFailure");
  EXPECT_EQ(RestartPolicyName(RestartPolicy::kAlways), "Always");
  EXPECT_EQ(RestartPolicyName(RestartPolicy::kExitCode), "ExitCode");
  EXPECT_EQ(CleanPodPolicyName(CleanPodPolicy::kRunning), "Running");
  EXPECT_EQ(CleanPodPolicyName(CleanPodPolicy::kAll), "All");
  EXPECT_EQ(CleanPodPolicyName(CleanPodPolicy::kNone), "None");
  EXPECT_EQ(SuccessPolicyName(SuccessPolicy::kDefault), "");
  EXPECT_EQ(SuccessPolicyName(SuccessPolicy::kAllWorkers), "AllWorkers");
}

}  // namespace
}  // namespace disttrain::api
