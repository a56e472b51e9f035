// Names of a job's children (names.h): "<job>-<role>-<index>", their DNS names, and the longest
// job name that keeps every one within a DNS label.
#include "operator/api/names.h"

#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::api {
namespace {

using testing::JobBuilder;

struct ReplicaCase {
  std::string name;
  std::function<DistributedTraining()> job;
  ReplicaType type;
  int index;
  std::string want_name;
  std::string want_host;
  bool want_job_service;
};

class ReplicaNameTest : public ::testing::TestWithParam<ReplicaCase> {};

TEST_P(ReplicaNameTest, NamesAndAddressesEachReplica) {
  const ReplicaCase& c = GetParam();
  const DistributedTraining job = c.job();
  EXPECT_EQ(ReplicaName(job, c.type, c.index), c.want_name);
  EXPECT_EQ(ReplicaHost(job, c.type, c.index), c.want_host);
  EXPECT_EQ(NeedsJobService(job), c.want_job_service);
}

DistributedTraining MasterJob() {
  DistributedTraining job = JobBuilder("tf", "ml").Chief().Workers(1).Build();
  job.spec.chief_is_master = true;
  return job;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReplicaNameTest,
    ::testing::Values(
        ReplicaCase{"WorkerResolvesThroughTheJobsService",
                    [] { return JobBuilder("dist", "ml").Ps(1).Workers(3).Build(); },
                    ReplicaType::kWorker, 2, "dist-worker-2", "dist-worker-2.dist.ml", true},
        ReplicaCase{"ParameterServer",
                    [] { return JobBuilder("dist", "ml").Ps(1).Workers(3).Build(); },
                    ReplicaType::kPS, 0, "dist-ps-0", "dist-ps-0.dist.ml", true},
        ReplicaCase{
            "PerReplicaServices",
            [] { return JobBuilder("dist", "ml").Ps(1).Workers(3).ReplicaServices().Build(); },
            ReplicaType::kWorker, 1, "dist-worker-1", "dist-worker-1.ml", false},
        ReplicaCase{"ATfJobsChiefIsItsMaster", MasterJob, ReplicaType::kChief, 0, "tf-master-0",
                    "tf-master-0.tf.ml", true},
        ReplicaCase{"AJobOfOneTaskNeedsNoService",
                    [] { return JobBuilder("solo", "ml").Chief().Build(); }, ReplicaType::kChief, 0,
                    "solo-chief-0", "solo-chief-0.solo.ml", false}),
    [](const auto& info) { return info.param.name; });

struct NameCase {
  std::string name;
  std::function<DistributedTraining()> job;
  int max;
};

class MaxNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(MaxNameTest, LeavesRoomForTheLongestGeneratedName) {
  DistributedTraining job = GetParam().job();
  EXPECT_EQ(MaxJobNameLength(job.spec), GetParam().max);
  // The longest allowed name yields names of at most 63 characters, one more breaks the limit.
  for (const auto& [type, spec] : job.spec.replica_specs) {
    if (spec.replicas == 0) continue;
    EXPECT_LE(ReplicaName(std::string(GetParam().max, 'x'), type, spec.replicas - 1).size(), 63u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MaxNameTest,
    ::testing::Values(
        NameCase{"Workers", [] { return JobBuilder("a").Workers(3).Build(); }, 54},
        NameCase{"TenWorkers", [] { return JobBuilder("a").Workers(10).Build(); }, 54},
        NameCase{"ElevenWorkers", [] { return JobBuilder("a").Workers(11).Build(); }, 53},
        NameCase{"Evaluator", [] { return JobBuilder("a").Workers(1).Evaluator().Build(); }, 51},
        NameCase{"ZeroReplicaRoleIgnored",
                 [] { return JobBuilder("a").Workers(1).Evaluator(0).Build(); }, 54},
        NameCase{"PsOnlyWithChief", [] { return JobBuilder("a").Chief().Ps(100).Build(); }, 55}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::api
