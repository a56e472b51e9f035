#include "operator/api/validation.h"

#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::api {
namespace {

using ::testing::HasSubstr;
using testing::JobBuilder;

TEST(ValidationTest, AcceptsTheClassicShapes) {
  EXPECT_TRUE(Validate(JobBuilder("a").Ps(1).Workers(2).Build()).ok());
  EXPECT_TRUE(Validate(JobBuilder("b").Chief().Ps(2).Workers(4).Evaluator().Build()).ok());
  EXPECT_TRUE(Validate(JobBuilder("c").Chief().Build()).ok());
}

struct Case {
  std::string name;
  std::function<DistributedTraining()> job;
  std::string message;
};

class ValidationErrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(ValidationErrorTest, RejectsWithTheField) {
  absl::Status s = Validate(GetParam().job());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(GetParam().message));
}

DistributedTraining WithTemplateRestart(RestartPolicy role, const char* pod) {
  return JobBuilder("a")
      .Workers(1)
      .RestartPolicy(ReplicaType::kWorker, role)
      .Template(ReplicaType::kWorker,
                {{"spec", {{"restartPolicy", pod}, {"containers", {{{"name", "t"}}}}}}})
      .Build();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidationErrorTest,
    ::testing::Values(
        Case{"TwoChiefs", [] { return JobBuilder("a").Chief(2).Build(); },
             "spec.replicaSpecs.Chief.replicas: a job has at most one chief, got 2"},
        Case{"TwoEvaluators", [] { return JobBuilder("a").Workers(1).Evaluator(2).Build(); },
             "spec.replicaSpecs.Evaluator.replicas: a job has at most one evaluator"},
        Case{"NoChiefOrWorker", [] { return JobBuilder("a").Ps(2).Build(); },
             "needs a Chief or at least one Worker"},
        Case{"ZeroWorkersNoChief", [] { return JobBuilder("a").Ps(1).Workers(0).Build(); },
             "needs a Chief or at least one Worker"},
        Case{"NegativeReplicas", [] { return JobBuilder("a").Chief().Workers(-1).Build(); },
             "spec.replicaSpecs.Worker.replicas: must be 0 or more, got -1"},
        Case{"NoRoles", [] { return JobBuilder("a").Build(); },
             "spec.replicaSpecs: needs at least one role"},
        Case{"NoContainers",
             [] {
               return JobBuilder("a")
                   .Workers(1)
                   .Template(ReplicaType::kWorker,
                             {{"spec", {{"containers", nlohmann::json::array()}}}})
                   .Build();
             },
             "spec.replicaSpecs.Worker.template.spec.containers: needs at least one container"},
        Case{"NoTemplateSpec",
             [] {
               return JobBuilder("a")
                   .Workers(1)
                   .Template(ReplicaType::kWorker, nlohmann::json::object())
                   .Build();
             },
             "spec.replicaSpecs.Worker.template.spec: is required"},
        Case{"ExitCodeWithTemplateAlways",
             [] { return WithTemplateRestart(RestartPolicy::kExitCode, "Always"); },
             "template.spec.restartPolicy: \"Always\" contradicts "
             "spec.replicaSpecs.Worker.restartPolicy \"ExitCode\""},
        Case{"OnFailureWithTemplateNever",
             [] { return WithTemplateRestart(RestartPolicy::kOnFailure, "Never"); },
             "contradicts spec.replicaSpecs.Worker.restartPolicy \"OnFailure\""},
        Case{"AllWorkersWithoutWorkers",
             [] {
               return JobBuilder("a").Chief().SuccessPolicy(SuccessPolicy::kAllWorkers).Build();
             },
             "spec.successPolicy: AllWorkers needs at least one Worker"},
        Case{"MinAvailableAboveReplicas",
             [] {
               SchedulingPolicy p;
               p.min_available = 9;
               return JobBuilder("a").Ps(1).Workers(2).Scheduling(p).Build();
             },
             "minAvailable: must be between 1 and the job's 3 replicas (a gang larger than the job "
             "never forms), got 9"},
        Case{"ElasticPolicyWithoutWorkers",
             [] {
               DistributedTraining job = JobBuilder("a").Chief().Build();
               job.spec.elastic_policy = ElasticPolicy{0, 4};
               return job;
             },
             "spec.elasticPolicy: the job has no Worker role to scale"},
        Case{"WorkersAboveTheElasticMaximum",
             [] {
               DistributedTraining job = JobBuilder("a").Chief().Workers(5).Build();
               job.spec.elastic_policy = ElasticPolicy{1, 4};
               return job;
             },
             "needs 0 <= minReplicas <= Worker replicas <= maxReplicas, got 1 <= 5 <= 4"},
        Case{"ElasticMinimumAboveTheMaximum",
             [] {
               DistributedTraining job = JobBuilder("a").Chief().Workers(3).Build();
               job.spec.elastic_policy = ElasticPolicy{3, 2};
               return job;
             },
             "got 3 <= 3 <= 2"},
        Case{"NameWithADot", [] { return JobBuilder("team.mnist").Workers(2).Build(); },
             "metadata.name: \"team.mnist\" must be a DNS-1035 label"},
        Case{"NameStartingWithADigit", [] { return JobBuilder("1mnist").Workers(2).Build(); },
             "must be a DNS-1035 label"},
        Case{"NameEndingWithADash", [] { return JobBuilder("mnist-").Workers(2).Build(); },
             "must be a DNS-1035 label"},
        Case{"NameTooLongForTheEvaluator",
             [] { return JobBuilder(std::string(52, 'a')).Workers(1).Evaluator().Build(); },
             "has 52 characters; this job allows at most 51"},
        Case{"NameTooLongForTenWorkers",
             [] { return JobBuilder(std::string(54, 'a')).Workers(11).Build(); },
             "this job allows at most 53"},
        Case{"TlsWithTooManyTasks",
             [] {
               DistributedTraining job = JobBuilder("a").Ps(100).Workers(401).Build();
               job.spec.tls.enabled = true;
               return job;
             },
             "spec.tls: a job with mutual TLS has at most 500 tasks"},
        Case{"OomPolicyFactorOfOne",
             [] {
               DistributedTraining job = JobBuilder("a").Workers(1).Build();
               job.spec.run_policy.oom_policy = OomPolicy{
                   .memory_factor = 1, .max_memory = "1Gi", .max_memory_milli = 1'000'000};
               return job;
             },
             "spec.runPolicy.oomPolicy.memoryFactor: must be more than 1 and at most 16, got 1"},
        Case{"OomPolicyWithoutMaxMemory",
             [] {
               DistributedTraining job = JobBuilder("a").Workers(1).Build();
               job.spec.run_policy.oom_policy = OomPolicy{};
               return job;
             },
             "spec.runPolicy.oomPolicy.maxMemory: must be a memory size above 0"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidationTest, TemplateRestartPolicyThatAgreesIsAccepted) {
  EXPECT_TRUE(Validate(WithTemplateRestart(RestartPolicy::kExitCode, "Never")).ok());
  EXPECT_TRUE(Validate(WithTemplateRestart(RestartPolicy::kOnFailure, "OnFailure")).ok());
}

// The training-operator accepts a TFJob whose gang is larger than the job: its PodGroup gets that
// minMember and the job waits (Created) until the gang can form or minAvailable is lowered.
TEST(ValidationTest, ATfJobsGangMayBeLargerThanTheJob) {
  SchedulingPolicy p;
  p.min_available = 9;
  DistributedTraining job = JobBuilder("a").Ps(1).Workers(2).Scheduling(p).Build();
  job.kind = &kTfJobKind;
  EXPECT_TRUE(Validate(job).ok()) << Validate(job);
  job.spec.run_policy.scheduling_policy->min_available = 0;
  EXPECT_THAT(std::string(Validate(job).message()),
              HasSubstr("schedulingPolicy.minAvailable: must be 1 or more, got 0"));
}

TEST(ValidationTest, ReportsEveryViolationAtOnce) {
  absl::Status s = Validate(JobBuilder("a").Chief(2).Evaluator(3).Build());
  EXPECT_THAT(std::string(s.message()), HasSubstr("at most one chief"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("at most one evaluator"));
}

}  // namespace
}  // namespace disttrain::api
