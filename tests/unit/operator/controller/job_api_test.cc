// The two API fronts: where their jobs live and how a status is written back for each.
#include "operator/controller/job_api.h"

#include "gtest/gtest.h"
#include "operator/kube/resource.h"

namespace disttrain::controller {
namespace {

api::JobStatus ChiefSucceeded() {
  api::JobStatus s;
  s.replica_statuses[api::ReplicaType::kChief].succeeded = 1;
  return s;
}

TEST(JobApiTest, EachFrontReadsItsOwnResource) {
  EXPECT_EQ(DistributedTrainingApi().resource->plural, "distributedtrainings");
  EXPECT_EQ(TfJobApi().resource->plural, "tfjobs");
  EXPECT_EQ(DistributedTrainingApi().write_time_field, nullptr);
  EXPECT_STREQ(TfJobApi().write_time_field, "lastReconcileTime");
  for (const JobApi* api : {&DistributedTrainingApi(), &TfJobApi()}) {
    EXPECT_EQ(api->resource->plural, api->kind->plural);
    EXPECT_EQ(api->resource->group, api->kind->group);
  }
}

TEST(JobApiTest, OnlyTheTfJobFrontNamesAMasterChiefInItsStatus) {
  api::JobSpec master;
  master.chief_is_master = true;
  nlohmann::json tf = TfJobApi().encode_status(ChiefSucceeded(), master);
  EXPECT_EQ(tf["replicaStatuses"]["Master"]["succeeded"], 1);
  EXPECT_FALSE(tf["replicaStatuses"].contains("Chief"));
  nlohmann::json dt = DistributedTrainingApi().encode_status(ChiefSucceeded(), master);
  EXPECT_EQ(dt["replicaStatuses"]["Chief"]["succeeded"], 1);
  EXPECT_FALSE(dt["replicaStatuses"].contains("Master"));
}

}  // namespace
}  // namespace disttrain::controller
