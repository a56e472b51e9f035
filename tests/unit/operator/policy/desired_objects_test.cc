// BuildDesiredObjects (desired_objects.h): every object a job should have, named and addressed.
#include "operator/policy/desired_objects.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using testing::JobBuilder;

TEST(DesiredObjectsTest, OneServiceForTheJobAndOnePodPerReplicaInRoleOrder) {
  auto objects = BuildDesiredObjects(JobBuilder("d").Evaluator().Workers(2).Ps(1).Chief().Build(),
                                     BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_TRUE(objects->job_service.has_value());
  EXPECT_EQ((*objects->job_service)["metadata"]["name"], "d");
  std::vector<std::string> names;
  for (const auto& r : objects->replicas) {
    EXPECT_TRUE(r.service.is_null());
    // <pod>.<job>.<ns>.svc resolves: hostname is the pod's name, subdomain the Service's.
    EXPECT_EQ(r.pod["spec"]["hostname"], r.pod["metadata"]["name"]);
    EXPECT_EQ(r.pod["spec"]["subdomain"], "d");
    names.push_back(r.pod["metadata"]["name"]);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("d-chief-0", "d-ps-0", "d-worker-0", "d-worker-1",
                                            "d-evaluator-0"));
  EXPECT_FALSE(objects->pod_group.has_value());
}

TEST(DesiredObjectsTest, OneServicePerReplicaWhenTheJobAddressesPodsSo) {
  auto objects = BuildDesiredObjects(
      JobBuilder("d").Workers(2).Ps(1).Chief().ReplicaServices().Build(), BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_FALSE(objects->job_service.has_value());
  ASSERT_EQ(objects->replicas.size(), 4u);
  for (const auto& r : objects->replicas) {
    EXPECT_EQ(r.pod["metadata"]["name"], r.service["metadata"]["name"]);
    EXPECT_FALSE(r.pod["spec"].contains("hostname"));
    EXPECT_FALSE(r.pod["spec"].contains("subdomain"));
  }
}

TEST(DesiredObjectsTest, AJobOfOneTaskGetsNoService) {
  auto objects = BuildDesiredObjects(JobBuilder("solo").Chief().Build(), BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_FALSE(objects->job_service.has_value());
  ASSERT_EQ(objects->replicas.size(), 1u);
  EXPECT_TRUE(objects->replicas[0].service.is_null());
  // Still named so, should workers be added later (hostname and subdomain cannot change).
  EXPECT_EQ(objects->replicas[0].pod["spec"]["subdomain"], "solo");
}

TEST(DesiredObjectsTest, ATemplatesOwnHostnameIsReplacedWithAWarning) {
  api::DistributedTraining job = JobBuilder("d").Ps(1).Workers(1).Build();
  job.spec.replica_specs[ReplicaType::kWorker].pod_template["spec"]["hostname"] = "mine";
  auto objects = BuildDesiredObjects(job, BuildOptions{});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_EQ(objects->replicas[1].pod["spec"]["hostname"], "d-worker-0");
  ASSERT_EQ(objects->warnings.size(), 1u);
  EXPECT_EQ(objects->warnings[0].reason, "HostnameReplaced");
  EXPECT_THAT(objects->warnings[0].message,
              ::testing::HasSubstr("replaced the template's hostname"));
}

}  // namespace
}  // namespace disttrain::policy
