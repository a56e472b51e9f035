// The metadata on every object made for a job (child_meta.h): name, labels and owner reference,
// and which replicas are surplus or decide the job's success.
#include "operator/policy/child_meta.h"

#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using testing::JobBuilder;

TEST(ChildMetaTest, AReplicaIsNamedLabelledAndOwnedByItsJob) {
  const api::DistributedTraining job = JobBuilder("dist", "ml").Chief().Workers(2).Build();
  EXPECT_EQ(ReplicaMeta(job, ReplicaType::kWorker, 1), json::parse(R"({
      "name": "dist-worker-1", "namespace": "ml",
      "labels": {"disttrain.io/job-name": "dist", "disttrain.io/replica-type": "worker",
                 "disttrain.io/replica-index": "1",
                 "app.kubernetes.io/managed-by": "disttrain-operator"},
      "ownerReferences": [{"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
                           "name": "dist", "uid": "uid-1234", "controller": true,
                           "blockOwnerDeletion": true}]})"));
  EXPECT_EQ(ReplicaMeta(job, ReplicaType::kChief, 0)["labels"]["disttrain.io/job-role"], "chief");
  EXPECT_EQ(RoleSelector(job, ReplicaType::kWorker),
            "disttrain.io/job-name=dist,disttrain.io/replica-type=worker");
}

TEST(ChildMetaTest, ATfJobsChildrenCarryTheTrainingOperatorsLabels) {
  api::DistributedTraining job = JobBuilder("tf", "ml").Chief().Workers(1).Build();
  job.kind = &api::kTfJobKind;
  job.spec.chief_is_master = true;
  const json meta = ReplicaMeta(job, ReplicaType::kChief, 0);
  EXPECT_EQ(meta["name"], "tf-master-0");
  EXPECT_EQ(meta["labels"], json::parse(R"({"training.kubeflow.org/job-name": "tf",
      "training.kubeflow.org/replica-type": "master", "training.kubeflow.org/replica-index": "0",
      "training.kubeflow.org/job-role": "master",
      "training.kubeflow.org/operator-name": "tfjob-controller"})"));
  EXPECT_EQ(meta["ownerReferences"][0]["apiVersion"], "kubeflow.org/v1");
  EXPECT_EQ(meta["ownerReferences"][0]["kind"], "TFJob");
}

TEST(ChildMetaTest, AJobWithoutAUidYetOwnsByName) {
  api::DistributedTraining job = JobBuilder("dist").Workers(1).Build();
  job.metadata.uid.clear();
  const json ref = OwnerReference(job);
  EXPECT_EQ(ref["name"], "dist");
  EXPECT_FALSE(ref.contains("uid")) << "as `render` prints it";
}

struct ReplicaCase {
  std::string name;
  std::function<api::DistributedTraining()> job;
  ReplicaType type;
  int index;
  bool want_surplus;
  bool want_success;
};

class ReplicaRoleTest : public ::testing::TestWithParam<ReplicaCase> {};

TEST_P(ReplicaRoleTest, TellsSurplusAndSuccessReplicas) {
  const ReplicaCase& c = GetParam();
  const api::DistributedTraining job = c.job();
  EXPECT_EQ(IsSurplusReplica(job, c.type, c.index), c.want_surplus);
  EXPECT_EQ(IsSuccessReplica(job, c.type, c.index), c.want_success);
  EXPECT_EQ(ReplicaMeta(job, c.type, c.index)["labels"].contains("disttrain.io/job-role"),
            c.want_success);
}

api::DistributedTraining WithChief() { return JobBuilder("d").Chief().Ps(1).Workers(2).Build(); }
api::DistributedTraining NoChief() { return JobBuilder("d").Ps(1).Workers(2).Build(); }
api::DistributedTraining ChiefScaledToZero() {
  return JobBuilder("d").Chief(0).Ps(1).Workers(2).Build();
}

INSTANTIATE_TEST_SUITE_P(Cases, ReplicaRoleTest,
                         ::testing::Values(ReplicaCase{"TheChiefDecides", WithChief,
                                                       ReplicaType::kChief, 0, false, true},
                                           ReplicaCase{"WorkerZeroDoesNotWithAChief", WithChief,
                                                       ReplicaType::kWorker, 0, false, false},
                                           ReplicaCase{"WorkerZeroDecidesWithoutAChief", NoChief,
                                                       ReplicaType::kWorker, 0, false, true},
                                           ReplicaCase{"OtherWorkersNever", NoChief,
                                                       ReplicaType::kWorker, 1, false, false},
                                           ReplicaCase{"AChiefOfNoReplicasIsNoChief",
                                                       ChiefScaledToZero, ReplicaType::kWorker, 0,
                                                       false, true},
                                           ReplicaCase{"AnIndexPastTheReplicasIsSurplus", NoChief,
                                                       ReplicaType::kWorker, 2, true, false},
                                           ReplicaCase{"ARoleNotInTheSpecIsSurplus", NoChief,
                                                       ReplicaType::kEvaluator, 0, true, false}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::policy
